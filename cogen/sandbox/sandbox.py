"""E of a program: run it on the 16 inputs in a confined process with CPU, memory and file limits.

A :class:`Sandbox` starts ``workers`` fork servers (:mod:`cogen.sandbox._child`), each
confined by the kernel as :mod:`cogen.sandbox.isolation` chooses (bubblewrap namespaces, a
read-only root and one bounded scratch, no network, no ``/proc``), or unconfined when the user
opts out. A server never runs model code itself: each program runs in a **fresh child** of the
server's zygote, a process forked before the first job that never sees a job or a result, so no
program can read another's; the child cannot touch the server or the zygote (both are non-dumpable,
and the seccomp filter of :mod:`cogen.sandbox.seccomp` refuses signals, ``ptrace``, new tasks and
sockets in the child).

The limits count **CPU time** (``timeout`` seconds for all 16 inputs, from the child's own CPU clock),
so a busy machine does not turn a pass into a timeout; a wall-clock limit of
``WALL_FACTOR x timeout + WALL_EXTRA`` seconds only ends a program that sleeps. Whatever a
program does (loop, allocate, crash, print, exit, attack), the sandbox answers a :class:`RunResult`
with a reason for every input that has no well-formed output, and the server's answers are checked
by :mod:`cogen.sandbox.protocol` (a nonce per job, types and sizes): a worker that answers anything
else is ended, that one job is a ``sandbox failure``, and a fresh worker takes the next. No failure
of one job ends the run: any exception while running it (``OSError`` included, such as a fork
refused by a full process table) makes that job a ``sandbox failure``, and a worker that will not
restart is retried with a back-off (:data:`RESTART_DELAYS`) at the next job.

Accepted outputs (decision 2): a string of 4 lines of 4 ``.``/``*`` characters, a list of 4 such
strings, or a 4x4 list of one-character strings, returned or, when the function returns nothing,
printed. The program's function is chosen by :func:`cogen.sandbox.entry.entry_point`; a script that
reads ``input()`` is run once per input.
"""

from __future__ import annotations

import json
import os
import queue
import select
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path

from cogen.errors import EvalError
from cogen.sandbox.isolation import Isolation, IsolationUnavailable, choose, python_paths, scratch_folder
from cogen.sandbox.protocol import MAX_ANSWER, RunResult, check_answer, check_hello, job

__all__ = ["DEFAULT_MEMORY_MB", "DEFAULT_TIMEOUT", "WALL_EXTRA", "WALL_FACTOR", "RunResult", "Sandbox",
           "isolation_problem", "run_sources"]

#: CPU seconds a program may use for all 16 inputs.
DEFAULT_TIMEOUT = 2.0
#: Address space a program may use.
DEFAULT_MEMORY_MB = 256
#: The wall-clock safety net: ``WALL_FACTOR * timeout + WALL_EXTRA`` seconds.
WALL_FACTOR, WALL_EXTRA = 5.0, 5.0
#: Seconds the scorer waits for an answer beyond the wall-clock limit, and for a server to start.
_GRACE, _STARTUP = 10.0, 60.0
#: Seconds between the tries to restart a worker (one try more than delays); then the job fails alone.
RESTART_DELAYS = (0.05, 0.25, 1.0)
_CHILD = Path(__file__).with_name("_child.py")
#: The environment of every server (nothing of the scorer's: no token, no home).
_ENVIRONMENT = {"LC_ALL": "C.UTF-8", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
                "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PATH": "/nonexistent"}


class _Worker:
    """One fork server process; ended and replaced whenever it misbehaves."""

    def __init__(self, isolation: Isolation):
        self.isolation = isolation
        self.process: subprocess.Popen | None = None
        self.buffer = b""
        self.scratch: Path | None = None
        self.log = None

    # -- life
    def launch(self) -> str:
        """Start the server; returns the nonce its hello must echo (see :meth:`greet`)."""
        import secrets

        nonce = secrets.token_hex(16)
        if not self.isolation.confined and self.scratch is None:
            self.scratch = scratch_folder()
        scratch = self.isolation.scratch if self.isolation.confined else str(self.scratch)
        config = {"hello": nonce, "scratch": scratch, "paths": self.isolation.site_paths(),
                  "seccomp": self.isolation.seccomp[0].hex(), "seccomp_child": self.isolation.seccomp[1].hex()}
        server = [python_paths()[0], "-S", "-s", "-P", "-c", _CHILD.read_text(encoding="utf-8"), json.dumps(config)]
        environment = {**_ENVIRONMENT, "TMPDIR": scratch}
        self.buffer = b""
        self.log = tempfile.TemporaryFile()
        try:
            self.process = subprocess.Popen(self.isolation.command(server, environment), stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=self.log, env=environment,
                                            cwd=self.scratch or "/", start_new_session=True)
        except BaseException:
            self.stop()
            raise
        return nonce

    def greet(self, nonce: str) -> None:
        """Wait for the server's hello; refuse (one line) when it did not start or is not confined."""
        try:
            hello = check_hello(self.readline(time.monotonic() + _STARTUP) or b"", nonce)
        except OSError:
            hello = None
        if hello is None:
            code = self.process.poll()
            why = self.stderr() or (f"exit {code}" if code is not None else "no answer in time")
            self.stop()
            if self.isolation.confined:
                raise IsolationUnavailable(f"bubblewrap could not start the sandbox ({why})")
            raise EvalError(f"the sandbox's server did not start ({why})")
        if self.isolation.confined and (hello["dumpable"] or not hello["seccomp"]):
            self.stop()
            raise IsolationUnavailable("the kernel refused the seccomp filter or PR_SET_DUMPABLE")

    def start(self) -> None:
        self.greet(self.launch())

    def restart(self) -> None:
        """A fresh server in place of this one, tried again after each of :data:`RESTART_DELAYS` when it
        will not start (a full process table, a server that dies at once); raises the last failure."""
        for delay in (*RESTART_DELAYS, None):
            self.stop()
            try:
                self.start()
                return
            except (OSError, EvalError):
                if delay is None:
                    raise
                time.sleep(delay)

    def stderr(self) -> str:
        from cogen.safe_text import clean

        self.log.seek(0)
        lines = [line for line in self.log.read(4096).decode("utf-8", "replace").splitlines() if line.strip()]
        return clean(lines[0]) if lines else ""

    def stop(self) -> None:
        """End the server and everything it started (bubblewrap takes its namespace down with it)."""
        if self.process is not None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except OSError:
                pass
            self.process.wait()
            for stream in (self.process.stdin, self.process.stdout):
                if not stream.closed:
                    stream.close()
            self.process = None
        if self.log is not None:
            self.log.close()
            self.log = None

    def close(self) -> None:
        """End the server by closing its input (it exits, and bubblewrap with it), killing it only if it
        does not: a clean exit lets the system account its CPU time to the scorer."""
        if self.process is not None:
            try:
                self.process.stdin.close()
                self.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.stop()
        if self.scratch is not None:
            import shutil

            for root, folders, _ in os.walk(self.scratch):
                for name in folders:
                    os.chmod(os.path.join(root, name), 0o700)
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None

    # -- talk
    def readline(self, deadline: float) -> bytes | None:
        """One line from the server before ``deadline``; None on end of file, a too long line or the deadline."""
        fd = self.process.stdout.fileno()
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or len(self.buffer) > MAX_ANSWER or not select.select([fd], [], [], remaining)[0]:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line + b"\n"

    def ready(self) -> bool:
        """True when the server is alive with nothing unread: an extra message or its end means a fresh one."""
        if self.process is None or self.process.poll() is not None or self.buffer:
            return False
        return not select.select([self.process.stdout], [], [], 0)[0]

    def run(self, sent: dict, entry: str | None) -> RunResult:
        if not self.ready():
            self.restart()
        try:
            self.process.stdin.write(json.dumps(sent).encode("utf-8") + b"\n")
            self.process.stdin.flush()
            line = self.readline(time.monotonic() + sent["wall"] + _GRACE)
        except OSError:
            line = None
        result = check_answer(line, sent, entry) if line else None
        if result is None or self.buffer:  # malformed, late, extra or missing: end this worker, mark this job
            self.stop()
            return RunResult.failed("sandbox failure", len(sent["inputs"]))
        if result.fate.endswith("(scratch not emptied)"):
            self.stop()
        return result


class Sandbox:
    """``workers`` confined fork servers; use as a context manager, then :meth:`run` programs.

    ``timeout`` is CPU seconds per program (16 inputs), ``memory_mb`` its address space, ``function``
    the function the prompt asks for. ``unsafe`` opts out of isolation (default: the environment
    variable ``COGEN_UNSAFE_RUN_UNTRUSTED_CODE``), with an
    :class:`cogen.sandbox.isolation.UnconfinedWarning`; without it, a machine with no isolation raises
    :class:`cogen.sandbox.isolation.IsolationUnavailable`. ``isolation`` names the one chosen
    (``bubblewrap`` or ``none``) once entered.

    >>> with Sandbox() as sandbox:                                  # doctest: +SKIP
    ...     result, = sandbox.run(["def f(s): return '....\\\\n' * 4"])
    """

    def __init__(self, workers: int | None = None, timeout: float = DEFAULT_TIMEOUT,
                 memory_mb: int = DEFAULT_MEMORY_MB, function: str = "f", unsafe: bool | None = None):
        if timeout <= 0 or memory_mb < 32:
            raise EvalError(f"the sandbox needs a positive timeout and at least 32 MB "
                            f"(got {timeout} s, {memory_mb} MB)")
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.timeout, self.memory, self.function = float(timeout), int(memory_mb) << 20, function
        self.unsafe = unsafe
        self.isolation: Isolation | None = None
        self._all: list[_Worker] = []
        self._jobs: queue.SimpleQueue | None = None
        self._threads: list[threading.Thread] = []

    @property
    def wall(self) -> float:
        """The wall-clock safety net of one program, in seconds."""
        return WALL_FACTOR * self.timeout + WALL_EXTRA

    def __enter__(self) -> Sandbox:
        self.isolation = choose(self.unsafe)
        self._all = [_Worker(self.isolation) for _ in range(self.workers)]
        try:
            nonces = [worker.launch() for worker in self._all]
            for worker, nonce in zip(self._all, nonces, strict=True):
                worker.greet(nonce)
            self._jobs = queue.SimpleQueue()
            for k, worker in enumerate(self._all):  # every thread before the first job: none is started later
                thread = threading.Thread(target=self._serve, args=(worker,), name=f"cogen-sandbox-{k}", daemon=True)
                thread.start()
                self._threads.append(thread)
        except (OSError, RuntimeError) as error:  # a full process or descriptor table at the start: one line
            self.__exit__()
            raise EvalError(f"the sandbox could not start its {self.workers} workers ({error})") from None
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        if self._jobs is not None:
            for _ in self._threads:
                self._jobs.put(None)
            for thread in self._threads:
                thread.join()
        self._jobs, self._threads = None, []
        for worker in self._all:
            worker.close()
        self._all = []

    def _serve(self, worker: _Worker) -> None:
        """One thread per worker: run the jobs it takes from the queue until told to stop."""
        while (task := self._jobs.get()) is not None:
            future, args = task
            if future.set_running_or_notify_cancel():
                future.set_result(self._run_one(worker, *args))

    def _run_one(self, worker: _Worker, source: str, inputs: Sequence[str], entry: str | None,
                 mode: str) -> RunResult:
        """One job on ``worker``; whatever goes wrong (a worker that will not restart, a fork refused,
        any exception) is this job's ``sandbox failure`` alone."""
        try:
            sent = job(source, inputs, entry, mode, self.timeout, self.wall, self.memory)
            return worker.run(sent, entry if mode == "call" else None)
        except Exception:  # noqa: BLE001 - no failure of one job may end the run
            try:
                worker.stop()
            except Exception:  # noqa: BLE001
                pass
            return RunResult.failed("sandbox failure", len(inputs))

    def submit(self, source: str, inputs: Sequence[str], entry: str | None = None,
               mode: str | None = None) -> Future:
        """Run one program in the background: a future :class:`RunResult` (never an exception). ``entry``
        and ``mode`` (``call`` or ``script``) default to :func:`cogen.sandbox.entry.entry_point` of the
        source."""
        if self._jobs is None:
            raise RuntimeError("use the Sandbox as a context manager")
        if mode is None:
            from cogen.sandbox.entry import entry_point

            entry, mode = entry_point(source, self.function)
        future: Future = Future()
        self._jobs.put((future, (source, list(inputs), entry, mode)))
        return future

    def run(self, sources: Sequence[str], inputs: Sequence[str]) -> list[RunResult]:
        """Run every program on ``inputs`` (in parallel over the workers); one result per program."""
        futures = [self.submit(source, inputs) for source in sources]
        return [future.result() for future in futures]


def isolation_problem() -> str | None:
    """None when programs can run confined here (a confined server starts and says hello), else why not
    (the one-line refusal :class:`cogen.sandbox.isolation.IsolationUnavailable` gives)."""
    try:
        with Sandbox(workers=1, unsafe=False):
            return None
    except IsolationUnavailable as error:
        return str(error)


def run_sources(sources: Sequence[str], inputs: Sequence[str], **options) -> list[RunResult]:
    """Run programs in a fresh :class:`Sandbox` (``options``: workers, timeout, memory_mb, function, unsafe)."""
    with Sandbox(**options) as sandbox:
        return sandbox.run(sources, inputs)
