"""The sandbox's fork server: a stand-alone script (standard library only) that runs untrusted programs.

:mod:`cogen.programs.sandbox` starts this file as ``python -I -S -c <its text> <empty folder>``
with an almost empty environment (programs get the standard library only). It reads one JSON job
per line on stdin (``source``, ``inputs``, ``function``, ``timeout`` seconds, ``memory`` bytes)
and, for each, forks a child that

* starts a new session (so the whole process group can be killed) with stdin, stdout and stderr
  on ``/dev/null`` and the working directory in the empty folder named by the script's argument;
* sets hard resource limits: address space (``memory``), CPU seconds, no file growth, no new
  processes, few open files, no core dumps;
* installs an audit hook that refuses sockets, subprocesses, signals to other processes, file
  writes, deletions and renames, ``ctypes`` and the import of modules that reach the system;
* runs the program as a module named ``program`` (so ``if __name__ == "__main__":`` blocks do not
  run), then calls its function on each input and writes one line per input on a pipe:
  ``<k> OK <16 cells>`` or ``<k> ERR <reason>`` (and ``FN <name>``: the function it called).

The server waits for the child with a wall-clock deadline, kills its process group when the
deadline passes, and answers one JSON line per job: the cells or reason per input and the
child's fate (``ok``, ``timeout``, ``signal N``, ``exit N``).
"""

import json
import os
import resource
import select
import signal
import sys
import time

READ_LIMIT = 1 << 16
BLOCKED_EVENTS = (
    "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "os.kill", "os.killpg",
    "os.remove", "os.unlink", "os.rmdir", "os.rename", "os.replace", "os.truncate", "os.chmod", "os.chown",
    "os.chflags", "os.lchown", "os.mkdir", "os.symlink", "os.link", "os.chdir", "os.chroot", "os.putenv",
    "os.unsetenv", "os.setxattr", "os.removexattr", "os.utime", "os.mkfifo", "os.mknod", "shutil.rmtree",
    "shutil.copyfile", "shutil.copytree", "shutil.move", "shutil.chown", "subprocess.Popen", "socket.",
    "ctypes.", "signal.pthread_kill", "sys.addaudithook", "pty.spawn", "webbrowser.open", "fcntl.", "mmap.",
    "resource.setrlimit", "resource.prlimit", "winreg.",
)
BLOCKED_MODULES = frozenset((
    "ctypes", "_ctypes", "socket", "_socket", "ssl", "_ssl", "subprocess", "_posixsubprocess", "multiprocessing",
    "_multiprocessing", "signal", "_signal", "resource", "mmap", "fcntl", "pty", "termios", "asyncio", "selectors",
    "urllib", "http", "ftplib", "smtplib", "telnetlib", "xmlrpc", "webbrowser", "shutil", "tempfile",
))
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _audit(event, args):
    if event == "open":
        mode, flags = args[1], args[2]
        writes = isinstance(mode, str) and any(c in mode for c in "wax+")
        if writes or (isinstance(flags, int) and flags & WRITE_FLAGS):
            raise PermissionError("the sandbox forbids writing files")
        return
    if event == "import":
        if args[0].split(".")[0] in BLOCKED_MODULES:
            raise ImportError(f"the sandbox forbids importing {args[0]}")
        return
    if event.startswith(BLOCKED_EVENTS):
        raise PermissionError(f"the sandbox forbids {event}")


def _limit(memory, seconds):
    cpu = int(seconds) + 2
    for name, value in (("RLIMIT_AS", memory), ("RLIMIT_CPU", cpu), ("RLIMIT_FSIZE", 0), ("RLIMIT_NPROC", 0),
                        ("RLIMIT_NOFILE", 32), ("RLIMIT_CORE", 0)):
        if hasattr(resource, name):
            try:
                resource.setrlimit(getattr(resource, name), (value, value))
            except (ValueError, OSError):
                pass


def _cells(value):
    """The 16 cells of a returned grid, or None: 4 lines of 4 characters, a list of 4 strings, a 4x4 list."""
    if type(value) is str:
        rows = [line.strip() for line in value.strip().split("\n")]
    elif type(value) in (list, tuple) and len(value) == 4:
        rows = []
        for row in value:
            if type(row) is str:
                rows.append(row)
            elif type(row) in (list, tuple) and len(row) == 4 and all(type(c) is str and len(c) == 1 for c in row):
                rows.append("".join(row))
            else:
                return None
    else:
        return None
    if len(rows) != 4 or any(len(row) != 4 for row in rows):
        return None
    text = "".join(rows)
    return text if all(c in ".*" for c in text) else None


def _function(namespace, preferred):
    """The function to call: ``preferred`` when defined, else the last top-level function of one argument."""
    candidate = namespace.get(preferred)
    if callable(candidate):
        return candidate
    found = None
    for value in list(namespace.values()):
        code = getattr(value, "__code__", None)
        if code is not None and getattr(value, "__module__", None) == "program":
            required = code.co_argcount - len(getattr(value, "__defaults__", None) or ())
            if code.co_argcount >= 1 and required <= 1:
                found = value
    return found


def _reason(error):
    text = f"{type(error).__name__}: {error}"
    text = " ".join(text.split())
    return text[:160]


def _child(job, write_fd, folder):
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.chdir(folder)
    _limit(job["memory"], job["timeout"])
    sys.addaudithook(_audit)
    write = os.write

    def emit(k, ok, text):
        write(write_fd, (f"{k} {'OK' if ok else 'ERR'} {text}\n").encode("utf-8", "replace"))

    namespace = {"__name__": "program", "__builtins__": __builtins__}
    inputs = job["inputs"]
    try:
        exec(compile(job["source"], "program.py", "exec"), namespace)
        function = _function(namespace, job["function"])
    except BaseException as error:  # the program's own failure, reported for every input
        for k in range(len(inputs)):
            emit(k, False, "program failed: " + _reason(error))
        os._exit(0)
    if function is None:
        for k in range(len(inputs)):
            emit(k, False, f"no function {job['function']}(s)")
        os._exit(0)
    write(write_fd, f"FN {getattr(function, '__name__', '?')}\n".encode("utf-8", "replace"))
    for k, text in enumerate(inputs):
        try:
            cells = _cells(function(text))
        except BaseException as error:
            emit(k, False, _reason(error))
            continue
        if cells is None:
            emit(k, False, "wrong output form")
        else:
            emit(k, True, cells)
    os._exit(0)


def _wait(read_fd, pid, deadline):
    """Wait for the child to exit (one wake-up on its pidfd, where the system has them) or for the
    deadline; returns True when the deadline passed first."""
    try:
        handle = os.pidfd_open(pid)
    except (AttributeError, OSError):
        handle = None
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return True
            watched = handle if handle is not None else read_fd
            if select.select([watched], [], [], remaining)[0]:
                if handle is not None:
                    return False
                return None  # data or end of file on the pipe: the caller reads it
    finally:
        if handle is not None:
            os.close(handle)


def _collect(read_fd, pid, deadline):
    data, fate = b"", None
    while True:
        late = _wait(read_fd, pid, deadline)
        if late:
            fate = "timeout"
            for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
                try:
                    kill()
                except OSError:
                    pass
        chunk = os.read(read_fd, 4096) if late is None else b""
        if late is None and chunk:
            data += chunk[: max(0, READ_LIMIT - len(data))]
            continue
        break
    os.set_blocking(read_fd, False)
    while len(data) < READ_LIMIT:  # whatever the child wrote before it exited or was killed
        try:
            chunk = os.read(read_fd, 4096)
        except BlockingIOError:
            break
        if not chunk:
            break
        data += chunk
    _, status = os.waitpid(pid, 0)
    if fate is None:
        if os.WIFSIGNALED(status):
            fate = f"signal {os.WTERMSIG(status)}"
        else:
            code = os.WEXITSTATUS(status)
            fate = "ok" if code == 0 else f"exit {code}"
    return data[:READ_LIMIT], fate


def _parse(data, count):
    outputs, reasons, function = [None] * count, [None] * count, None
    seen = set()
    for line in data.decode("utf-8", "replace").split("\n"):
        if line.startswith("FN ") and function is None:
            function = line[3:][:100]
            continue
        parts = line.split(" ", 2)
        if len(parts) != 3 or not parts[0].isdigit() or parts[1] not in ("OK", "ERR"):
            continue
        k = int(parts[0])
        if k >= count or k in seen:
            continue
        seen.add(k)
        if parts[1] == "OK":
            outputs[k] = parts[2]
        else:
            reasons[k] = parts[2]
    return outputs, reasons, function


def _serve(folder):
    for line in sys.stdin:
        job = json.loads(line)
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(read_fd)
                _child(job, write_fd, folder)
            finally:
                os._exit(1)
        os.close(write_fd)
        started = time.monotonic()
        data, fate = _collect(read_fd, pid, started + job["timeout"])
        os.close(read_fd)
        outputs, reasons, function = _parse(data, len(job["inputs"]))
        for k in range(len(outputs)):
            if outputs[k] is None and reasons[k] is None:
                reasons[k] = "timeout" if fate == "timeout" else f"no result ({fate})"
        answer = {"outputs": outputs, "reasons": reasons, "fate": fate, "function": function,
                  "seconds": round(time.monotonic() - started, 4)}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


_WARM_UP = """
TABLE = {("A", "C"): ".*.*", "B": [1, (2, 3)]}
def f(s, k=0):
    rows = [TABLE.get(c, "....") if c in "AB" else f"{c}" for c in s]
    if s[0] == "A" and len(s) > k:
        return "\\n".join(rows)
    elif s[1] == "C":
        pass
    else:
        return [r for r in rows]
f("ACEG"); f("BDFH")
"""


def _warm_up():
    """Compile and run a small program once, so that children do not each pay the parser's first-use
    set-up; then freeze the heap, so that the collector does not touch (and copy) the shared pages."""
    import gc

    exec(compile(_WARM_UP, "warm-up", "exec"), {"__name__": "warm-up"})
    gc.collect()
    gc.freeze()


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _warm_up()
    _serve(sys.argv[1])
