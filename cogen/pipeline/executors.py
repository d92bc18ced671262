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

__all__ = ["EXECUTORS", "SerialExecutor", "check_worker_versions", "make_executor", "worker_versions"]

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
        if len(given) > 1:
            raise BuildError(f"give one way to reach the Dask cluster, not {' and '.join(given)}")
        yield from _dask_executor(workers, address, scheduler_file, client)
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

    The bytes of a shard depend on cogen, numpy, numba and pyarrow, so a mixed cluster would
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
