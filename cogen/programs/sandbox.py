"""E of a program: run it on the 16 inputs in a separate process with a time and a memory limit.

A :class:`Sandbox` starts ``workers`` fork servers (:mod:`cogen.programs._sandbox_child`, run as
``python -I -S`` with an almost empty environment and a private empty working folder). Each
program runs in a fresh child forked from a server, so one program never sees another, and the
scorer's own process never runs model code. The child has hard resource limits (address space,
CPU time, no file growth, no new processes) and an audit hook that refuses sockets, processes,
signals, file writes, deletions and ``ctypes``; the server kills its process group when the
wall-clock ``timeout`` passes. Whatever a program does — loop, allocate, crash, print, exit,
return the wrong thing — the sandbox answers a :class:`RunResult`, with a reason for every input
that has no well-formed output.

Accepted outputs (decision 2): a string of 4 lines of 4 ``.``/``*`` characters, a list of 4 such
strings, or a 4x4 list of one-character strings. Programs get the standard library only.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from cogen.programs.functions import INPUTS

__all__ = ["DEFAULT_MEMORY_MB", "DEFAULT_TIMEOUT", "RunResult", "Sandbox", "run_programs"]

#: Wall-clock seconds a program may take for all 16 inputs.
DEFAULT_TIMEOUT = 2.0
#: Address space a program may use.
DEFAULT_MEMORY_MB = 256
#: Extra seconds the scorer waits for a server beyond the program's own deadline.
_GRACE = 10.0
_CHILD = Path(__file__).with_name("_sandbox_child.py")


@dataclass(frozen=True)
class RunResult:
    """A program's outputs on the inputs: 16 cells (row-major ``.``/``*``) or None with a reason;
    ``function`` is the name of the function it called (None when the program defined none)."""

    outputs: tuple[str | None, ...]
    reasons: tuple[str | None, ...]
    fate: str
    seconds: float
    function: str | None = None

    def errors(self, targets: Sequence[str]) -> int:
        """E: the inputs whose output is not the target's 16 cells."""
        return sum(output != target for output, target in zip(self.outputs, targets, strict=True))

    @classmethod
    def failed(cls, reason: str, count: int = len(INPUTS)) -> RunResult:
        """A program that never ran (no code, a syntax error, a broken server)."""
        return cls((None,) * count, (reason,) * count, "not run", 0.0)


class _Server:
    """One fork server process (restarted when it dies)."""

    def __init__(self, folder: str):
        self.folder = folder
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        env = {"PATH": os.defpath, "LC_ALL": "C.UTF-8"}
        self.process = subprocess.Popen([sys.executable, "-I", "-S", "-c", _CHILD.read_text(encoding="utf-8"),
                                         self.folder], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, env=env, cwd=self.folder, start_new_session=True)

    def stop(self) -> None:
        if self.process is None:
            return
        try:
            self.process.stdin.close()
            self.process.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        self.process = None

    def run(self, job: dict) -> RunResult:
        if self.process is None or self.process.poll() is not None:
            self.start()
        try:
            self.process.stdin.write((json.dumps(job) + "\n").encode("ascii"))
            self.process.stdin.flush()
            ready, _, _ = select.select([self.process.stdout], [], [], job["timeout"] + _GRACE)
            line = self.process.stdout.readline() if ready else b""
            answer = json.loads(line) if line else None
        except (OSError, ValueError):
            answer = None
        if answer is None:  # the server died or hung: never the program's fault alone, never fatal
            self.process.kill()
            self.process.wait()
            self.process = None
            return RunResult.failed("sandbox failure", len(job["inputs"]))
        return RunResult(tuple(answer["outputs"]), tuple(answer["reasons"]), answer["fate"], answer["seconds"],
                         answer.get("function"))


class Sandbox:
    """``workers`` fork servers; use as a context manager, then :meth:`run` programs.

    >>> with Sandbox() as sandbox:                                  # doctest: +SKIP
    ...     result, = sandbox.run(["def f(s): return '....\\\\n' * 4"])
    """

    def __init__(self, workers: int | None = None, timeout: float = DEFAULT_TIMEOUT,
                 memory_mb: int = DEFAULT_MEMORY_MB, function: str = "f"):
        if timeout <= 0 or memory_mb < 32:
            from cogen.errors import EvalError

            raise EvalError(f"the sandbox needs a positive timeout and at least 32 MB "
                            f"(got {timeout} s, {memory_mb} MB)")
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.timeout, self.memory, self.function = float(timeout), int(memory_mb) << 20, function
        self._folder: tempfile.TemporaryDirectory | None = None
        self._idle: list[_Server] = []
        self._lock = threading.Lock()

    def __enter__(self) -> Sandbox:
        self._folder = tempfile.TemporaryDirectory(prefix="cogen-sandbox-")
        os.chmod(self._folder.name, 0o500)  # empty and read-only: nothing to read, nowhere to write
        self._idle = [_Server(self._folder.name) for _ in range(self.workers)]
        return self

    def __exit__(self, *exc) -> None:
        for server in self._idle:
            server.stop()
        self._idle = []
        if self._folder is not None:
            os.chmod(self._folder.name, 0o700)
            self._folder.cleanup()
            self._folder = None

    def _run_one(self, source: str, inputs: Sequence[str]) -> RunResult:
        with self._lock:
            server = self._idle.pop()
        try:
            return server.run({"source": source, "inputs": list(inputs), "function": self.function,
                               "timeout": self.timeout, "memory": self.memory})
        finally:
            with self._lock:
                self._idle.append(server)

    def run(self, sources: Sequence[str], inputs: Sequence[str] = INPUTS) -> list[RunResult]:
        """Run every program on ``inputs`` (in parallel over the servers); one result per program."""
        if self._folder is None:
            raise RuntimeError("use the Sandbox as a context manager")
        if self.workers == 1 or len(sources) < 2:
            return [self._run_one(source, inputs) for source in sources]
        with ThreadPoolExecutor(self.workers) as pool:
            return list(pool.map(lambda source: self._run_one(source, inputs), sources))


def run_programs(sources: Sequence[str], inputs: Sequence[str] = INPUTS, **options) -> list[RunResult]:
    """Run programs in a fresh :class:`Sandbox` (``options``: workers, timeout, memory_mb, function)."""
    with Sandbox(**options) as sandbox:
        return sandbox.run(sources, inputs)
