"""What a build's first pass leaves to its second, held in memory when both run in the driver's process.

A family's first pass (the key pass of :meth:`~cogen.family.Builder.prepare`) may leave files to the
shard writers in the build's scratch folder: pooled workers share the driver's disk, not its memory.
When a build runs in the driver's process (``--workers 1``, or a tiny build: :mod:`cogen.pipeline.driver`),
writing those files and reading them back is wasted work. Inside :func:`holding`, which the driver
opens around such a build, :func:`keep_in_memory` keeps a value under the scratch path it would have been written
to, as long as the bytes held stay within the driver's bound; :func:`kept_in_memory` gives it back. Outside it
(pooled or Dask workers, ``cogen verify``), and past the bound, :func:`keep_in_memory` refuses and the family
writes its file as before: either way the shard's bytes are the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["HELD_BYTES", "holding", "keep_in_memory", "kept_in_memory"]

#: Most bytes an in-process build holds in memory for its second pass (256 MiB): less than the
#: process that :func:`cogen.pipeline.driver.estimate_memory` counts for a worker, which an in-process
#: build does not start. A build whose first pass leaves more writes the rest to its scratch folder.
HELD_BYTES = 256 * 2**20

_values: dict[str, object] = {}
_room = [0]  # bytes that may still be held (0 outside holding())


@contextmanager
def holding(limit: int = HELD_BYTES) -> Iterator[None]:
    """Let :func:`keep_in_memory` keep up to ``limit`` bytes in memory in this block (0: nothing); forget them after it."""
    _values.clear()
    _room[0] = max(0, int(limit))
    try:
        yield
    finally:
        _values.clear()
        _room[0] = 0


def keep_in_memory(path: str, value: object, nbytes: int) -> bool:
    """Keep ``value`` (``nbytes`` bytes) under ``path`` instead of writing it there; False when there is no
    room (outside :func:`holding`, or past its bound): the caller then writes the file."""
    if nbytes > _room[0]:
        return False
    _room[0] -= nbytes
    _values[str(path)] = value
    return True


def kept_in_memory(path: str) -> object | None:
    """The value kept under ``path`` by :func:`keep_in_memory` (None: none was)."""
    return _values.get(str(path))
