"""Where shards run: in-process, a local process pool, or a Dask cluster — one interface.

Every executor is a :class:`concurrent.futures.Executor`, so the build submits the very same
shard function to each; worker count never changes what a shard contains.
"""

from __future__ import annotations

import multiprocessing
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
        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("forkserver"))
        try:
            yield pool
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)  # don't start queued shards after a failure
            raise
        pool.shutdown(wait=True)
        return
    if kind == "dask":
        yield from _dask_executor(workers, address)
        return
    raise BuildError(f"unknown executor {kind!r}; choose one of: {', '.join(EXECUTORS)}")


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
