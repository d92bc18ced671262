"""The sandbox's fork server: a stand-alone script (standard library only) that runs untrusted programs.

:mod:`cogen.sandbox.sandbox` starts this file as ``python -S -s -P -c <its text> <config JSON>``,
normally inside bubblewrap (:mod:`cogen.sandbox.isolation`). It trusts only the scorer, never a
program. At start it

* makes itself non-dumpable (``PR_SET_DUMPABLE`` 0: no process of its uid without capabilities can
  read or write its memory, descriptors or environment) and sets ``no_new_privs``;
* loads the seccomp filter it was given for itself (:mod:`cogen.sandbox.seccomp`; its programs
  inherit it), checks in a probe child that the programs' own filter loads and that a ``fork`` and a
  socket are refused;
* warms up (compiles and runs a small program once) and forks the **zygote**, a process that never
  sees a job or a result: for each job it forks one fresh child, hands the server that child's two
  pipes (over a unix socket made before the filter) and reports how the child ended. Programs are
  forked from the zygote, never from the server, so a program's memory holds the warm-up and its own
  job alone (the second red team's X01, X02: a program forked from the server read earlier replies'
  outputs and sources in its inherited memory);
* answers ``{"hello": <nonce>, ...}`` on stdout.

Then it reads one JSON job per line on stdin (``nonce``, ``source``, ``inputs``, ``entry``, ``mode``,
``cpu`` and ``wall`` seconds, ``memory`` bytes) and, for each, asks the zygote for a child, writes
the job on the child's job pipe, and supervises it. The child reads its job, closes every descriptor
but its result pipe (stdin, stdout and stderr on ``/dev/null``), moves to the empty scratch folder,
sets hard limits (address space, CPU, file size, open files, no core), loads the programs' seccomp
filter and runs the program (:func:`_run`). It writes one line per input on its result pipe:
``R <k> <16 cells>`` or ``E <k> <kind> <text>``, or ``P <kind> <text>`` for the whole program.

The server watches the child's CPU time (its process CPU clock, sampled every ``TICK``) and kills
it at the ``cpu`` limit or, as a safety net for a program that sleeps, at the ``wall`` limit. Only
what the child wrote while the server *saw* its CPU time within the limit counts (its own clock, not
a stamp the program could forge: P03); the rest, and every input without a result, is a ``time
limit`` when the CPU limit was passed. It reads at most ``READ_LIMIT`` bytes, parses them strictly
(:func:`_parse`: short ASCII indices only, P04/P05), empties the scratch folder and answers one JSON
line: ``nonce``, ``outputs``, ``reasons``, ``fate`` (``ok``, ``cpu``, ``wall``, ``exit N``,
``signal N``), ``cpu`` and ``seconds``.
"""

import builtins
import ctypes
import gc
import io
import json
import math
import os
import re
import resource
import select
import signal
import socket
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
        self.sockets = None  # the socket pair of the server and the zygote, made before the filter
        self.control = None  # the server's end of it
        self.zygote = None  # the zygote's pid
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
    write = os.write

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
    runner(job, code, capture, emit, lambda k, value: _result(emit, k, value, capture))


def _result(emit, k, value, capture):
    """Emit input ``k``'s result: a returned grid, else a printed one when nothing was returned."""
    if isinstance(value, BaseException):
        emit(f"E {k} raised {_text(value)}")
        return
    cells = _cells(value)
    if cells is None and value is None:
        cells = _cells(capture.text())
    if cells is None:
        emit(f"E {k} form -")
    else:
        emit(f"R {k} {cells}")


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


def _read_job(fd):
    """The job the server wrote on this child's own pipe (the server closes it after one job)."""
    parts = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        parts.append(chunk)
    os.close(fd)
    return json.loads(b"".join(parts))


def _child(server, job_fd, write_fd):
    try:
        job = _read_job(job_fd)
        _enter(server, job, write_fd)
    except BaseException:
        os._exit(3)
    _run(job, write_fd)
    os._exit(0)


# ---------------------------------------------------------------- the zygote
def _zygote(server, control):
    """Fork one child per request of the server and report how it ended; never read a job or a result.

    The child gets two fresh pipes (its job, its results); the zygote sends the server their other
    ends (``SCM_RIGHTS``) with the child's pid, closes its copies, waits for the child and sends
    ``<wait status> <CPU seconds>``."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(null, fd)
    keep = sorted({2, control.fileno()})
    os.closerange(3, keep[-1])
    os.closerange(keep[-1] + 1, 1 << 16)
    while True:
        try:
            request = control.recv(16)
        except OSError:
            request = b""
        if not request:
            os._exit(0)
        job_r, job_w = os.pipe()
        result_r, result_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                control.close()
                os.close(job_w)
                os.close(result_r)
                _child(server, job_r, result_w)
            finally:
                os._exit(3)
        os.close(job_r)
        os.close(result_w)
        try:
            socket.send_fds(control, [b"%d" % pid], [job_w, result_r])
        finally:
            os.close(job_w)
            os.close(result_r)
        _, status, usage = os.wait4(pid, 0)
        control.send(b"%d %.6f" % (status, usage.ru_utime + usage.ru_stime))


def _start_zygote(server):
    """Fork the zygote (after the warm-up, before any job); the server keeps its end of the socket."""
    control, other = server.sockets
    pid = os.fork()
    if pid == 0:
        try:
            control.close()
            _zygote(server, other)
        finally:
            os._exit(4)
    other.close()
    server.control, server.zygote = control, pid


def _stop_zygote(server):
    """End the zygote and reap it, so that the CPU time of every program is accounted to the scorer."""
    server.control.close()
    os.waitpid(server.zygote, 0)


# ---------------------------------------------------------------- the server
def _cpu_of(pid):
    """CPU seconds of a child so far, from its process CPU clock (no /proc needed); None once it is gone."""
    try:
        return time.clock_gettime(((~pid) << 3) | 2)
    except OSError:
        return None


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


def _supervise(read_fd, pid, handle, job):
    """Collect the child's output until it ends or passes a limit: ``(data, accepted, fate)``.

    The server wakes when the child ends (its pidfd ``handle``), or every ``TICK`` to read its pipe and
    then sample its CPU clock: what was read before a sample within the limit was written within it
    (``accepted`` bytes)."""
    started, fate, data, accepted, open_pipe = time.monotonic(), None, b"", 0, True
    os.set_blocking(read_fd, False)
    while not select.select([handle], [], [], TICK)[0]:
        if open_pipe:
            data, open_pipe = _drain(read_fd, data)
        cpu = _cpu_of(pid)
        if cpu is not None and cpu <= job["cpu"]:
            accepted = len(data)
        if cpu is not None and cpu > job["cpu"]:
            fate = "cpu"
        elif time.monotonic() - started > job["wall"]:
            fate = "wall"
        if fate is not None:
            signal.pidfd_send_signal(handle, signal.SIGKILL)
            break
    if open_pipe:  # whatever the child wrote before it ended
        data, open_pipe = _drain(read_fd, data)
    return data, accepted, fate


def _reaped(server):
    """The child's wait status and CPU seconds, as the zygote reports them once it has reaped it."""
    status, cpu = server.control.recv(64).split()
    return int(status), float(cpu)


def _fate(fate, status, cpu, job):
    if fate is not None:
        return fate
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        return "cpu" if number in (signal.SIGXCPU, signal.SIGKILL) and cpu >= job["cpu"] else f"signal {number}"
    if cpu > job["cpu"]:
        return "cpu"
    return "ok" if os.WEXITSTATUS(status) == 0 else f"exit {os.WEXITSTATUS(status)}"


def _clean(text, limit=160):
    text = "".join(c if c.isprintable() else "?" for c in text[: 4 * limit])
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _exception(text):
    name, _, message = text.partition("\t")
    name = name if name.isidentifier() and len(name) <= 60 else "Exception"
    return _clean(f"{name}: {message}")


_LINE = re.compile(r"(?:([RE]) ([0-9]{1,3}) (?:([.*]{16})|(raised|form) (.*))|P (raised|noentry) (.*))", re.S)


def _parse(data, job):
    """Outputs and reasons per input from the child's lines (the first line for an input wins); lines
    that do not match the grammar exactly are ignored."""
    count = len(job["inputs"])
    outputs, reasons, program = [None] * count, [None] * count, None
    for line in data.decode("utf-8", "replace").split("\n"):
        found = _LINE.fullmatch(line)
        if found is None:
            continue
        kind, index, cells, error, text, whole, whole_text = found.groups()
        if whole is not None:
            if program is None:
                program = ("program failed: " + _exception(whole_text) if whole == "raised"
                           else f"no function {job['entry']}(s)")
            continue
        k = int(index)
        if k >= count or outputs[k] is not None or reasons[k] is not None:
            continue
        if kind == "R" and cells is not None:
            outputs[k] = cells
        elif kind == "E" and error is not None:
            reasons[k] = "wrong output form" if error == "form" else _exception(text)
    return outputs, reasons, program


_FATES = {"cpu": "time limit", "wall": "wall-clock limit"}


def _answer(job, data, fate, cpu, seconds):
    outputs, reasons, program = _parse(data, job)
    for k in range(len(outputs)):
        if outputs[k] is None and reasons[k] is None:
            reasons[k] = _FATES.get(fate) if fate in _FATES else program or f"no result ({fate})"
    return {"nonce": job["nonce"], "outputs": outputs, "reasons": reasons, "fate": fate,
            "cpu": round(cpu, 4), "seconds": round(seconds, 4)}


def _empty(folder):
    """Remove everything a program left in the scratch folder: folders it locked are unlocked, links
    are removed and never followed, and any depth is walked with one open folder at a time (names,
    not paths, so no path grows too long)."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    os.chmod(folder, 0o700)
    fd, names = os.open(folder, flags), []
    try:
        while True:
            inner = None
            with os.scandir(fd) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        inner = entry.name
                        break
                    os.unlink(entry.name, dir_fd=fd)
            if inner is not None:
                os.chmod(inner, 0o700, dir_fd=fd)
                deeper = os.open(inner, flags, dir_fd=fd)
                os.close(fd)
                fd = deeper
                names.append(inner)
            elif names:
                parent = os.open("..", flags, dir_fd=fd)
                os.close(fd)
                fd = parent
                os.rmdir(names.pop(), dir_fd=fd)
            else:
                return
    finally:
        os.close(fd)


def _send(fd, payload):
    """Write the whole job on the child's job pipe (the child reads it at once; a child that is already
    gone gets nothing and has no result)."""
    view = memoryview(payload)
    try:
        while view:
            view = view[os.write(fd, view):]
    except OSError:
        pass
    finally:
        os.close(fd)


#: What of a job the child gets (the nonce and the wall-clock limit stay with the server).
_FOR_CHILD = ("source", "inputs", "entry", "mode", "cpu", "memory")


def _one(server, job):
    started = time.monotonic()
    server.control.send(b"run")
    message, fds, _, _ = socket.recv_fds(server.control, 64, 2)
    pid, (job_w, read_fd) = int(message), fds
    handle = os.pidfd_open(pid)  # before the job: until it has its job, the child cannot end
    try:
        _send(job_w, json.dumps({key: job[key] for key in _FOR_CHILD}).encode("utf-8"))
        data, accepted, fate = _supervise(read_fd, pid, handle, job)
    finally:
        os.close(read_fd)
        os.close(handle)
    status, cpu = _reaped(server)
    if cpu <= job["cpu"]:
        accepted = len(data)
    return _answer(job, data[:accepted], _fate(fate, status, cpu, job), cpu, time.monotonic() - started)


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
    server.sockets = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)  # before the filter refuses sockets
    report = server.harden()
    _warm_up()
    _start_zygote(server)
    _reply({"hello": config["hello"], **report})
    _serve(server)
    _stop_zygote(server)


if __name__ == "__main__":
    main(sys.argv)
