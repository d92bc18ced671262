"""Where shards run: in-process, a local process pool, or a Dask cluster — one interface.

Every executor is a :class:`concurrent.futures.Executor`, so the build submits the very same
shard function to each; worker count never changes what a shard contains.

Local workers start from the driver after it has loaded the kernels (the pilot runs first): on
Linux they are forked, so a worker begins with the driver's imports and compiled kernels instead
of paying them again (a spawned worker costs about a CPU-second before its first shard). Where
fork is unsafe they are spawned: on other platforms, and when polars is loaded in the driver
(its thread pool does not survive a fork); ``COGEN_WORKER_START`` (fork, spawn or forkserver)
overrides the choice. Either way a shard's bytes are the same.

Workers never outlive the build. They are children of the driver and ask Linux to kill them when
it dies (``PR_SET_PDEATHSIG``), however it dies, even by SIGKILL; they ignore Ctrl-C, which the
driver alone handles: when the build stops early, the driver terminates them instead of waiting
for their shards. A worker that dies while the build runs (the out-of-memory killer's SIGKILL,
most often) ends the build with a :class:`~cogen.errors.BuildError` that names the shard it was
writing; the shards finished before are kept, so running the build again resumes.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import time
import warnings
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from pathlib import Path

from cogen.errors import BuildError

__all__ = ["EXECUTORS", "START_METHODS", "SerialExecutor", "WorkerPool", "check_worker_versions", "make_executor",
           "start_method", "worker_versions"]

EXECUTORS = ("local", "dask")
#: Ways to start local workers (``COGEN_WORKER_START``); the default is :func:`start_method`'s choice.
START_METHODS = ("fork", "spawn", "forkserver")


class SerialExecutor(Executor):
    """Runs each submitted call at once in this process (``--workers 1``: no pool overhead)."""

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as error:  # delivered to whoever waits on the future; Ctrl-C stops at once
            future.set_exception(error)
        return future


@contextmanager
def make_executor(kind: str = "local", workers: int = 1, address: str | None = None, *,
                  scheduler_file: str | None = None, client=None):
    """Yield an executor: ``local`` (process pool, or in-process for one worker) or ``dask``.

    A Dask cluster is reached through ``client`` (an existing ``distributed.Client``: TLS,
    Gateway, Kubernetes), a ``scheduler_file``, or an ``address``; with none, a ``LocalCluster``
    of ``workers`` processes is started. Every Dask worker must run the driver's versions of the
    libraries that decide the bytes (:func:`check_worker_versions`).
    """
    remote = {"--dask-address": address, "--dask-scheduler-file": scheduler_file, "client": client}
    given = [name for name, value in remote.items() if value is not None]
    if kind == "local":
        if given:
            raise BuildError(f"{given[0]} only goes with --executor dask")
        if workers <= 1:
            yield SerialExecutor()
            return
        pool = WorkerPool(workers)
        try:
            yield pool
        except BrokenProcessPool:
            why = pool.death()
            stop_workers(pool)
            raise BuildError(why) from None
        except BaseException:
            stop_workers(pool)  # don't finish running shards, don't start queued ones
            raise
        finally:
            pool.shutdown(wait=True)
        return
    if kind == "dask":
        if len(given) > 1:
            raise BuildError(f"give one way to reach the Dask cluster, not {' and '.join(given)}")
        yield from _dask_executor(workers, address, scheduler_file, client)
        return
    raise BuildError(f"unknown executor {kind!r}; choose one of: {', '.join(EXECUTORS)}")


def start_method() -> str:
    """How local workers start: ``COGEN_WORKER_START`` if set, else fork on Linux unless polars is
    loaded in this process, else spawn (see the module docstring)."""
    chosen = os.environ.get("COGEN_WORKER_START", "").strip().lower()
    if chosen:
        if chosen not in START_METHODS:
            raise BuildError(f"COGEN_WORKER_START is {chosen!r}; choose one of: {', '.join(START_METHODS)}")
        return chosen
    return "fork" if sys.platform.startswith("linux") and "polars" not in sys.modules else "spawn"


class WorkerPool(ProcessPoolExecutor):
    """A local process pool whose workers note what they run, so that a worker that dies can be named.

    Each call goes through :func:`_noted`, which writes a line saying what it works on to a file
    named by the worker's pid in a private folder (deleted at shutdown); :meth:`death` reads it.
    """

    def __init__(self, workers: int):
        self.method = start_method()
        self._board = tempfile.mkdtemp(prefix="cogen-workers-")
        self._seen: dict = {}
        super().__init__(workers, mp_context=multiprocessing.get_context(self.method), initializer=worker_setup,
                         initargs=(os.getpid(),))
        if self.method == "fork":  # fork every worker now, before the build starts threads of its own
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*fork.*", category=DeprecationWarning)
                self.submit(int).result()

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future = super().submit(_noted, self._board, _describe(fn, args), fn, *args, **kwargs)
        self._seen.update(self._processes or {})
        return future

    def map(self, fn, *iterables, timeout=None, chunksize=1):
        """One call per item, submitted through :meth:`submit` (so each is noted)."""
        return Executor.map(self, fn, *iterables, timeout=timeout)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        super().shutdown(wait=wait, cancel_futures=cancel_futures)
        if wait:
            shutil.rmtree(self._board, ignore_errors=True)

    def _settled(self, timeout: float = 5.0) -> dict:
        """The seen workers, once each has an exit code or ``timeout`` seconds have passed.

        The pool's own thread terminates and reaps the other workers once one dies; while it reaps
        one, ``exitcode`` read from this thread can still be None (both wait on the same pid), so
        the worker that died would go unnamed.
        """
        deadline = time.monotonic() + timeout
        while any(p.exitcode is None for p in self._seen.values()) and time.monotonic() < deadline:
            time.sleep(0.02)
        return self._seen

    def death(self) -> str:
        """One line on the worker that died: its pid, how it ended, what it was doing, the likely cause."""
        ended = [p for p in self._settled().values() if p.exitcode not in (None, 0)]
        ended.sort(key=lambda p: p.exitcode == -signal.SIGTERM)  # the pool SIGTERMs the others once one dies
        if not ended:
            return ("a worker process of the build ended abruptly; finished shards are kept: run the same command "
                    "again to resume")
        process = ended[0]
        try:
            doing = (Path(self._board) / str(process.pid)).read_text(encoding="utf-8").strip()
        except OSError:
            doing = "it was between tasks"
        return f"worker process {process.pid} {_ending(process.exitcode)} while {doing}; {_likely_cause(process.exitcode)}"


def _ending(exitcode: int) -> str:
    if exitcode < 0:
        try:
            return f"was killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"was killed by signal {-exitcode}"
    return f"exited with status {exitcode}"


def _likely_cause(exitcode: int) -> str:
    memory = exitcode == -signal.SIGKILL
    cause = ("the likely cause is memory: the out-of-memory killer ends the largest process when the machine runs "
             "out (use fewer --workers, smaller shards, or free some memory); ") if memory else ""
    return cause + "the shards finished before are kept: run the same command again to resume"


def _describe(fn, args: tuple) -> str:
    """What a call works on, for a user: the shard file of its task, else its rows, else the function's name."""
    name = getattr(fn, "__name__", "a task")
    for arg in args:
        relpath = getattr(arg, "relpath", None)
        if isinstance(relpath, str):
            return f"working on {relpath} ({name})"
        start, stop = getattr(arg, "start", None), getattr(arg, "stop", None)
        if isinstance(start, int) and isinstance(stop, int):
            return f"working on rows {start} to {stop} ({name})"
    return f"running {name}"


def _noted(board: str, doing: str, fn, /, *args, **kwargs):
    """Run ``fn(*args, **kwargs)`` in a worker, with ``doing`` noted under the worker's pid in ``board`` meanwhile."""
    note = Path(board) / str(os.getpid())
    try:
        note.write_text(doing, encoding="utf-8")
    except OSError:  # a note that cannot be written only makes a worker's death less precisely reported
        pass
    try:
        return fn(*args, **kwargs)
    finally:
        note.unlink(missing_ok=True)


_PR_SET_PDEATHSIG = 1


def worker_setup(driver_pid: int) -> None:
    """Initializer of every local worker: die with the driver, leave Ctrl-C to the driver.

    On Linux the kernel sends SIGKILL to the worker when the driver ends (``prctl``); elsewhere
    the worker still ends when the driver closes the pool's pipes. A forked worker also drops
    what it inherited from the driver's handling of signals (SIGTERM and SIGHUP end it, as they
    end a spawned one) and its standard streams, whose locks another thread of the driver (a
    progress bar) may have held at the fork.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for number in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if number is not None:
            signal.signal(number, signal.SIG_DFL)
    _fresh_std_streams()
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no prctl in this libc: rely on the pipes
            pass
    if os.getppid() != driver_pid:  # the driver died before the line above took effect
        os._exit(1)


def _fresh_std_streams() -> None:
    """New ``sys.stdout`` and ``sys.stderr`` objects over the same descriptors (the old ones stay
    referenced by ``sys.__stdout__`` and ``sys.__stderr__``, so they are never flushed here)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        try:
            setattr(sys, name, open(stream.fileno(), "w", encoding=stream.encoding, errors=stream.errors,
                                    closefd=False, buffering=1))
        except (AttributeError, OSError, ValueError):  # no real descriptor (None, a test's capture): keep it
            pass


def stop_workers(pool: ProcessPoolExecutor) -> None:
    """Cancel queued calls and end the pool's workers now, without waiting for running calls."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager, calls = getattr(pool, "_executor_manager_thread", None), getattr(pool, "_call_queue", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=5)
    _end_manager_thread(manager, calls)
    pool.shutdown(wait=True)


#: Seconds a stopped pool's manager thread gets to finish (it only closes pipes and reaps workers).
MANAGER_STOP_SECONDS = 5.0


def _end_manager_thread(manager, calls) -> None:
    """Let a stopped pool's manager thread end now, before the interpreter exits, and take it off
    ``concurrent.futures``' exit hook.

    ``shutdown(wait=False)`` forgets the thread without joining it; left alone, it could still be
    closing its wake-up pipe when the exit hook writes to that pipe (``OSError: Bad file
    descriptor`` printed at exit), or wait forever for the feeder of the queue of the workers just
    ended (a hang after the build's last message). So the queue is told not to wait for its
    feeder, the thread is joined (for a few seconds at most), and the hook forgets it.
    """
    if calls is not None:
        try:
            calls.cancel_join_thread()
        except (AttributeError, OSError, ValueError):  # already closed
            pass
    if manager is None:
        return
    manager.join(timeout=MANAGER_STOP_SECONDS)
    from concurrent.futures import process as futures_process

    getattr(futures_process, "_threads_wakeups", {}).pop(manager, None)


def _dask_executor(workers: int, address: str | None, scheduler_file: str | None, client):
    from cogen.errors import optional_import

    distributed = optional_import("dask.distributed", "the dask executor")
    Client, LocalCluster = distributed.Client, distributed.LocalCluster
    if client is not None:  # the caller's client: used, never closed
        check_worker_versions(client)
        yield client.get_executor(pure=False)
        return
    if address or scheduler_file:
        where = f"the Dask scheduler at {address}" if address else f"the Dask scheduler of {scheduler_file}"
        try:
            client = Client(address, timeout="10s") if address else Client(scheduler_file=scheduler_file, timeout="10s")
        except (OSError, ValueError) as error:
            raise BuildError(f"cannot reach {where}: {error}") from None
        with client:
            check_worker_versions(client)
            yield client.get_executor(pure=False)
        return
    with LocalCluster(n_workers=max(1, workers), threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        check_worker_versions(client)
        yield client.get_executor(pure=False)


def worker_versions() -> dict[str, str]:
    """What a worker reports: the versions of the libraries that decide a shard's bytes."""
    from cogen.folder import environment_versions

    return environment_versions()


def check_worker_versions(client) -> None:
    """Refuse (:class:`BuildError`) a Dask cluster whose workers run other versions than the driver.

    The bytes of a shard depend on cogen, numpy, numba, pyarrow and polars, so a mixed cluster would
    write a dataset that no single environment reproduces. Runs before any shard is submitted.
    """
    from cogen.folder import environment_versions

    try:
        client.wait_for_workers(1, timeout=60)
    except (TimeoutError, OSError):
        raise BuildError("the Dask cluster has no worker (waited 60 s); start workers, then build again") from None
    driver = environment_versions()
    reported = client.run(worker_versions)
    problems = [f"worker {worker} has {name} {versions.get(name, '(missing)')}, the driver {wanted}"
                for worker, versions in sorted(reported.items())
                for name, wanted in driver.items() if versions.get(name) != wanted]
    if problems:
        raise BuildError("the Dask workers do not run the driver's libraries, and a shard's bytes depend on them: "
                         + "; ".join(problems) + ". Install the same versions on every worker (e.g. one container "
                         "image or `pip install cogen-arc==<version>` with the same lock file), then build again")
