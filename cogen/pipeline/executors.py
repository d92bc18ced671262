"""Where shards run: in-process, a local process pool, or a Dask cluster — one interface.

Every executor is a :class:`concurrent.futures.Executor`, so the build submits the very same
shard function to each; worker count never changes what a shard contains.

Workers never outlive the build. Local workers are started with ``spawn`` as children of the
driver and ask Linux to kill them when it dies (``PR_SET_PDEATHSIG``), however it dies, even by
SIGKILL; they ignore Ctrl-C, which the driver alone handles: when the build stops early, the
driver terminates them instead of waiting for their shards.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from contextlib import contextmanager

from cogen.errors import BuildError

__all__ = ["EXECUTORS", "SerialExecutor", "make_executor"]

EXECUTORS = ("local", "dask")


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
def make_executor(kind: str = "local", workers: int = 1, address: str | None = None):
    """Yield an executor: ``local`` (process pool, or in-process for one worker) or ``dask``."""
    if kind == "local":
        if address:
            raise BuildError("--dask-address only goes with --executor dask")
        if workers <= 1:
            yield SerialExecutor()
            return
        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=worker_setup, initargs=(os.getpid(),))
        try:
            yield pool
        except BaseException:
            stop_workers(pool)  # don't finish running shards, don't start queued ones
            raise
        pool.shutdown(wait=True)
        return
    if kind == "dask":
        yield from _dask_executor(workers, address)
        return
    raise BuildError(f"unknown executor {kind!r}; choose one of: {', '.join(EXECUTORS)}")


_PR_SET_PDEATHSIG = 1


def worker_setup(driver_pid: int) -> None:
    """Initializer of every local worker: die with the driver, leave Ctrl-C to the driver.

    On Linux the kernel sends SIGKILL to the worker when the driver ends (``prctl``); elsewhere
    the worker still ends when the driver closes the pool's pipes.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no prctl in this libc: rely on the pipes
            pass
    if os.getppid() != driver_pid:  # the driver died before the line above took effect
        os._exit(1)


def stop_workers(pool: ProcessPoolExecutor) -> None:
    """Cancel queued calls and end the pool's workers now, without waiting for running calls."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=5)
    pool.shutdown(wait=True)


def _dask_executor(workers: int, address: str | None):
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise BuildError("the dask executor needs the `dask` extra: pip install 'cogen[dask]'") from None
    if address:
        try:
            client = Client(address, timeout="10s")
        except OSError as error:
            raise BuildError(f"cannot reach the Dask scheduler at {address}: {error}") from None
        with client:
            yield client.get_executor(pure=False)
        return
    with LocalCluster(n_workers=max(1, workers), threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        yield client.get_executor(pure=False)
