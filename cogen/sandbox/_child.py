"""The sandbox's fork server: a stand-alone script (standard library only) that runs untrusted programs.

:mod:`cogen.sandbox.sandbox` starts this file as ``python -S -s -P -c <its text> <config JSON>``,
normally inside bubblewrap (:mod:`cogen.sandbox.isolation`). It trusts only the scorer, never a
program. At start it

* makes itself non-dumpable (``PR_SET_DUMPABLE`` 0: no process of its uid without capabilities can
  read or write its memory, descriptors or environment) and sets ``no_new_privs``;
* loads the seccomp filter it was given for itself (:mod:`cogen.sandbox.seccomp`; its programs
  inherit it), checks in a probe child that the programs' own filter loads and that a ``fork`` and a
  socket are refused, then answers ``{"hello": <nonce>, ...}`` on stdout.

Then it reads one JSON job per line on stdin (``nonce``, ``source``, ``inputs``, ``entry``, ``mode``,
``cpu`` and ``wall`` seconds, ``memory`` bytes) and, for each, forks a **fresh child** that closes
every descriptor but its result pipe (stdin, stdout and stderr on ``/dev/null``), moves to the empty
scratch folder, sets hard limits (address space, CPU, file size, open files, no core), loads the
programs' seccomp filter and runs the program (:func:`_run`). The child writes one line per input on its pipe:
``R <k> <16 cells> <cpu>``, ``E <k> <kind> <cpu> <text>`` or ``P <kind> <text>`` (the whole program).

The server watches the child's CPU time (its process CPU clock) and kills it at the ``cpu`` limit or,
as a safety net for a program that sleeps, at the ``wall`` limit; it reads at most ``READ_LIMIT``
bytes of its pipe, parses them strictly (:func:`_parse`; a result stamped past the CPU limit does
not count), empties the scratch folder and answers one JSON line: ``nonce``, ``outputs``, ``reasons``,
``fate`` (``ok``, ``cpu``, ``wall``, ``exit N``, ``signal N``), ``cpu`` and ``seconds``.
"""

import builtins
import ctypes
import gc
import io
import json
import math
import os
import resource
import select
import signal
import sys
import time

READ_LIMIT = 1 << 16
CAPTURE_LIMIT = 1 << 16
TICK = 0.02
PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 4, 38, 22, 2
KINDS = ("raised", "form")


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class Server:
    """The server's state: its configuration, libc, and the compiled seccomp program."""

    def __init__(self, config):
        self.config = config
        self.scratch = config["scratch"]
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.buffers = []
        self.own, self.program = (self.filter(bytes.fromhex(config[key])) for key in ("seccomp", "seccomp_child"))

    def filter(self, code):
        """A ``sock_fprog`` for ``PR_SET_SECCOMP`` (None when there is no filter)."""
        if not code:
            return None
        self.buffers.append(ctypes.create_string_buffer(code, len(code)))
        return _Program(len(code) // 8, ctypes.addressof(self.buffers[-1]))

    def prctl(self, *args):
        if self.libc.prctl(*[ctypes.c_ulong(a) if isinstance(a, int) else a for a in args], 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl failed")

    def harden(self):
        """Non-dumpable and no_new_privs; a seccomp filter that is known to refuse fork."""
        report = {"dumpable": True, "seccomp": False}
        try:
            self.prctl(PR_SET_NO_NEW_PRIVS, 1, 0)
            self.prctl(PR_SET_DUMPABLE, 0, 0)
            report["dumpable"] = False
        except (OSError, AttributeError):
            pass
        if self.own is not None and self.program is not None:
            try:
                self.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(self.own))
            except OSError:
                return report
            report["seccomp"] = self.probe()
        return report

    def probe(self):
        """Fork a child that loads its filter and tries to fork and to open a socket: True when the
        kernel refused both."""
        pid = os.fork()
        if pid == 0:
            try:
                self.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(self.program))
                refused = 0
                for attempt in (os.fork, lambda: __import__("socket").socket()):
                    try:
                        attempt()
                    except PermissionError:
                        refused += 1
                os._exit(0 if refused == 2 else 1)
            finally:
                os._exit(1)
        return os.waitpid(pid, 0)[1] == 0


# ---------------------------------------------------------------- the child
def _limits(job):
    cpu = int(math.ceil(job["cpu"])) + 1
    for name, value in (("RLIMIT_AS", job["memory"]), ("RLIMIT_CPU", (cpu, cpu + 1)), ("RLIMIT_FSIZE", 1 << 20),
                        ("RLIMIT_NOFILE", 64), ("RLIMIT_CORE", 0)):
        soft, hard = value if isinstance(value, tuple) else (value, value)
        resource.setrlimit(getattr(resource, name), (soft, hard))


def _enter(server, job, write_fd):
    """Confine this (child) process; any failure ends it before the program runs."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(3, write_fd)
    os.closerange(write_fd + 1, 1 << 16)
    os.chdir(server.scratch)
    _limits(job)
    if server.program is not None:
        server.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(server.program))


class _Capture(io.TextIOBase):
    """stdout of the program: what it prints, the first ``CAPTURE_LIMIT`` characters kept."""

    def __init__(self):
        self.parts, self.size = [], 0

    def writable(self):
        return True

    def write(self, text):
        if type(text) is not str:
            raise TypeError("write() argument must be str")
        if self.size < CAPTURE_LIMIT:
            self.parts.append(text[: CAPTURE_LIMIT - self.size])
            self.size += len(self.parts[-1])
        return len(text)

    def text(self):
        return "".join(self.parts)


def _cells(value):
    """The 16 cells of a grid, or None: 4 lines of 4 characters, a list of 4 strings, a 4x4 list."""
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


def _text(error):
    name = type(error).__name__
    try:
        message = str(error)
    except BaseException:  # a hostile __str__
        message = "?"
    return f"{name}\t{message}"


def _run(job, write_fd):
    """Run the program on every input and write its results (see the module docstring)."""
    write, clock = os.write, time.process_time

    def emit(line):
        try:
            write(write_fd, (line.replace("\n", " ")[:400] + "\n").encode("utf-8", "replace"))
        except OSError:
            pass

    capture = _Capture()
    stdin = io.StringIO("")

    def quiet_input(prompt=""):  # the paper judges outputs: a prompt is not part of the grid
        line = sys.stdin.readline()
        if not line:
            raise EOFError("EOF when reading a line")
        return line.rstrip("\n")

    builtins.input = quiet_input  # this process runs one program, then ends
    sys.stdout, sys.stdin = capture, stdin
    try:
        code = compile(job["source"], "program.py", "exec")
    except BaseException as error:
        emit("P raised " + _text(error))
        return
    runner = _script if job["mode"] == "script" else _call
    runner(job, code, capture, emit, lambda k, value: _result(emit, clock, k, value, capture))


def _result(emit, clock, k, value, capture):
    """Emit input ``k``'s result: a returned grid, else a printed one when nothing was returned."""
    if isinstance(value, BaseException):
        emit(f"E {k} raised {clock():.6f} {_text(value)}")
        return
    cells = _cells(value)
    if cells is None and value is None:
        cells = _cells(capture.text())
    if cells is None:
        emit(f"E {k} form {clock():.6f} -")
    else:
        emit(f"R {k} {cells} {clock():.6f}")


def _call(job, code, capture, emit, result):
    namespace = {"__name__": "program", "__builtins__": builtins}
    try:
        exec(code, namespace)
        function = namespace.get(job["entry"])
    except BaseException as error:
        emit("P raised " + _text(error))
        return
    if not callable(function):
        emit("P noentry -")
        return
    for k, text in enumerate(job["inputs"]):
        capture.parts, capture.size = [], 0
        try:
            value = function(text)
        except BaseException as error:
            value = error
        result(k, value)


def _script(job, code, capture, emit, result):
    for k, text in enumerate(job["inputs"]):
        capture.parts, capture.size = [], 0
        sys.stdin = io.StringIO(text + "\n")
        try:
            exec(code, {"__name__": "__main__", "__builtins__": builtins})
            value = None
        except SystemExit as error:
            value = None if error.code in (None, 0) else error
        except BaseException as error:
            value = error
        result(k, value)


def _child(server, job, write_fd):
    try:
        _enter(server, job, write_fd)
    except BaseException:
        os._exit(3)
    _run(job, write_fd)
    os._exit(0)


# ---------------------------------------------------------------- the server
def _cpu_of(pid):
    """CPU seconds of a child so far, from its process CPU clock (no /proc needed)."""
    try:
        return time.clock_gettime(((~pid) << 3) | 2)
    except OSError:
        return 0.0


def _read(fd, data):
    try:
        chunk = os.read(fd, 65536)
    except BlockingIOError:
        return data, True
    if len(data) < READ_LIMIT:
        data += chunk[: READ_LIMIT - len(data)]
    return data, bool(chunk)


def _drain(fd, data):
    """Everything the child has written so far (kept up to ``READ_LIMIT``); False once it closed the pipe."""
    while True:
        data, open_pipe = _read(fd, data)
        if not open_pipe or not select.select([fd], [], [], 0)[0]:
            return data, open_pipe


def _supervise(read_fd, pid, job):
    """Collect the child's output until it exits or passes a limit: ``(data, fate, cpu seconds)``. The
    server wakes when the child ends, or every ``TICK`` to read its pipe and check its clocks."""
    started, fate, data, open_pipe = time.monotonic(), None, b"", True
    handle = os.pidfd_open(pid)
    os.set_blocking(read_fd, False)
    try:
        while not select.select([handle], [], [], TICK)[0]:
            if open_pipe:
                data, open_pipe = _drain(read_fd, data)
            if _cpu_of(pid) > job["cpu"]:
                fate = "cpu"
            elif time.monotonic() - started > job["wall"]:
                fate = "wall"
            if fate is not None:
                os.kill(pid, signal.SIGKILL)
                break
    finally:
        os.close(handle)
    if open_pipe:  # whatever the child wrote before it ended
        data, open_pipe = _drain(read_fd, data)
    _, status, usage = os.wait4(pid, 0)
    cpu = usage.ru_utime + usage.ru_stime
    if fate is None:
        if os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            fate = "cpu" if number in (signal.SIGXCPU, signal.SIGKILL) and cpu >= job["cpu"] else f"signal {number}"
        else:
            fate = "ok" if os.WEXITSTATUS(status) == 0 else f"exit {os.WEXITSTATUS(status)}"
    return data, fate, cpu


def _clean(text, limit=160):
    text = "".join(c if c.isprintable() else "?" for c in text[: 4 * limit])
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _exception(text):
    name, _, message = text.partition("\t")
    name = name if name.isidentifier() and len(name) <= 60 else "Exception"
    return _clean(f"{name}: {message}")


def _stamp(text, limit):
    try:
        value = float(text)
    except ValueError:
        return False
    return 0 <= value <= limit


def _parse(data, job):
    """Outputs and reasons per input from the child's lines; malformed lines are ignored."""
    count = len(job["inputs"])
    outputs, reasons, program = [None] * count, [None] * count, None
    for line in data.decode("utf-8", "replace").split("\n"):
        parts = line.split(" ", 4)
        if parts[0] == "P" and len(parts) >= 3 and program is None:
            program = ("program failed: " + _exception(" ".join(parts[2:])) if parts[1] == "raised"
                       else f"no function {job['entry']}(s)")
            continue
        if parts[0] not in ("R", "E") or len(parts) < 4 or not parts[1].isdigit() or int(parts[1]) >= count:
            continue
        k = int(parts[1])
        if outputs[k] is not None or reasons[k] is not None:
            continue
        if parts[0] == "R" and len(parts[2]) == 16 and set(parts[2]) <= set(".*"):
            if _stamp(parts[3], job["cpu"]):
                outputs[k] = parts[2]
            else:
                reasons[k] = "time limit"
        elif parts[0] == "E" and parts[2] in KINDS and len(parts) == 5:
            reasons[k] = "time limit" if not _stamp(parts[3], job["cpu"]) else (
                "wrong output form" if parts[2] == "form" else _exception(parts[4]))
    return outputs, reasons, program


_FATES = {"cpu": "time limit", "wall": "wall-clock limit"}


def _answer(job, data, fate, cpu, seconds):
    outputs, reasons, program = _parse(data, job)
    for k in range(len(outputs)):
        if outputs[k] is None and reasons[k] is None:
            reasons[k] = program or _FATES.get(fate) or f"no result ({fate})"
    return {"nonce": job["nonce"], "outputs": outputs, "reasons": reasons, "fate": fate,
            "cpu": round(cpu, 4), "seconds": round(seconds, 4)}


def _empty(folder):
    """Remove everything a program left in the scratch folder (it may have locked folders or linked
    elsewhere: links are removed, never followed)."""
    os.chmod(folder, 0o700)
    for entry in os.scandir(folder):
        if entry.is_dir(follow_symlinks=False):
            _empty(entry.path)
            os.rmdir(entry.path)
        else:
            os.unlink(entry.path)


def _one(server, job):
    read_fd, write_fd = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_fd)
            _child(server, job, write_fd)
        finally:
            os._exit(3)
    os.close(write_fd)
    try:
        data, fate, cpu = _supervise(read_fd, pid, job)
    finally:
        os.close(read_fd)
    return _answer(job, data, fate, cpu, time.monotonic() - started)


def _serve(server):
    for line in sys.stdin.buffer:
        job = json.loads(line)
        answer = _one(server, job)
        try:
            _empty(server.scratch)
        except (OSError, RecursionError):
            answer["fate"] += " (scratch not emptied)"
            _reply(answer)
            return  # the scorer starts a fresh server for the next program
        _reply(answer)


def _reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
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
    exec(compile(_WARM_UP, "warm-up", "exec"), {"__name__": "warm-up"})
    gc.collect()
    gc.freeze()


def main(argv):
    config = json.loads(argv[1])
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.path.extend(config["paths"])
    server = Server(config)
    report = server.harden()
    _warm_up()
    _reply({"hello": config["hello"], **report})
    _serve(server)


if __name__ == "__main__":
    main(sys.argv)
