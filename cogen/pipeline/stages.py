"""CPU time per build stage, for ``benchmarks/bench_build.py``'s breakdown.

The pipeline wraps each stage in :func:`stage`; the totals cover work done in this process (with
``--workers 1`` that is the whole build). Stages may nest: time goes to the innermost one, so a
writer that pulls row groups from a sampler while it encodes (the polars writer of
:mod:`cogen.pipeline.parquet`) counts its sampling as sampling, not as encoding. Measuring costs
two clock reads per row group.

A stage counts the CPU time of the thread that runs it, except one opened with ``threads=True``:
the encoders', whose library may encode on threads of its own (polars does, and pulls the row
groups it encodes by calling back into Python on them). Such a stage counts the whole process's
CPU time while it is open, less the stages nested in it, whichever thread ran them: the encoding
threads' time is encoding, and the sampling they called back for is sampling. Stage code runs one
thread at a time (the caller waits while polars calls back), so one stack of open stages serves
them all.

``key pass`` is the first pass's sampling (for a shard its family encodes then, the only one);
``sampling`` is the second pass's, for shards written again (for a family that caches what the key
pass generated, mostly reading it back); ``file i/o`` includes writing such a cache.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["STAGES", "reset", "stage", "totals"]

#: The stages, in pipeline order.
STAGES = ("sampling", "key pass", "dedup plan", "arrow conversion", "parquet encoding", "file i/o")
_totals: dict[str, float] = {}
#: CPU seconds spent in the stages nested inside each open stage (innermost last).
_nested: list[float] = []


@contextmanager
def stage(name: str, *, threads: bool = False) -> Iterator[None]:
    """Add the CPU seconds of the ``with`` block, less those of stages nested in it, to stage ``name``:
    the calling thread's, or with ``threads`` the whole process's (see the module docstring)."""
    clock = time.process_time if threads else time.thread_time
    start = clock()
    _nested.append(0.0)
    try:
        yield
    finally:
        spent = clock() - start
        inner = _nested.pop()
        _totals[name] = _totals.get(name, 0.0) + max(0.0, spent - inner)
        if _nested:
            _nested[-1] += spent


def reset() -> None:
    """Start counting from zero."""
    _totals.clear()


def totals() -> dict[str, float]:
    """CPU seconds per stage since the last :func:`reset`, in :data:`STAGES` order."""
    return {name: _totals.get(name, 0.0) for name in STAGES}
