"""Hostile programs, as a submitter who means harm writes them (every attack family of the red team's
review), scored beside honest replies. For each: no effect outside the sandbox (files, the network
listener, the process table, the scorer's memory and secrets), honest scores unchanged, the run ends
without a traceback and leaves nothing running.

Each attack program runs its attack steps through ``attempt``, which records the steps that
*succeeded*; its ``f`` then raises ``GOT <steps>`` if any did, else returns the right grid. So an
attack that the sandbox stopped scores E = 0, and one that got through scores E = 16 with its steps
named (the mutation test at the end switches the confinement off and sees them)."""

from __future__ import annotations

import hashlib
import json
import os
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
import os, sys, signal, ctypes
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
'''
FINALE = '''
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
quietly(lambda: [t.start() for t in threads])  # allowed: threads end with their process
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
                      {"program failed: RuntimeError", "program failed: MemoryError", *LIMITS}),
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


def _program(world: dict, port: int, replies: Path, attack: str) -> str:
    names = {"VICTIMS": world["victims"], "HOME": world["home"], "DATA": world["data"], "PORT": port,
             "SCORER": os.getpid(), "REPLIES": replies, "PROBE_DIR": PROBE_DIR}
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


def _remove_probes() -> None:
    """Undo the probe folders an attack made, should the confinement ever fail (the test then fails)."""
    import numpy

    for folder in (Path(os.__file__).parent, Path(numpy.__file__).parent.parent):
        if (folder / PROBE_DIR).is_dir():
            (folder / PROBE_DIR).rmdir()


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
    while True:
        try:
            server.accept()[0].close()
            connections += 1
        except BlockingIOError:
            break
    server.close()
    after = {"files": _snapshot(world["victims"], world["home"], world["data"]), "prefix": _prefix_files(),
             "servers": _servers()}
    _remove_probes()
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
    score = attacked["scores"][name]
    assert set(score["failures"]) <= BOMBS[name][1] and score["errors"] == 16, (name, score["failures"])


def test_nothing_outside_the_sandbox_changed(attacked):
    assert attacked["after"]["files"] == attacked["before"]["files"]      # victims, home, dataset
    assert attacked["after"]["prefix"] == attacked["before"]["prefix"]    # the Python installation
    assert attacked["connections"] == 0                                   # the listener heard nothing


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
