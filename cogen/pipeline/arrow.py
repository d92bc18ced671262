"""Turn the sampler's padded NumPy buffers into Arrow columns without Python lists, and back
(:func:`read_grids`, :func:`read_lists`, for ``cogen verify``).

Arrays are made from NumPy buffers (:func:`numpy_array`, :func:`string_array`), not with
``pa.array``: that imports pandas when it is installed (half a CPU-second in every process that
writes a shard), to check whether its argument is a pandas object."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

__all__ = ["Grids", "grids_column", "names_column", "numbered_strings", "numpy_array", "padded_rows_column",
           "pairs_column", "read_grids", "read_lists", "string_array"]


def numpy_array(values: np.ndarray, type_: pa.DataType) -> pa.Array:
    """The Arrow array of ``values`` (1-D) as fixed-width ``type_`` (an integer type), sharing their memory."""
    values = np.ascontiguousarray(values, dtype=np.dtype(str(type_))).reshape(-1)
    return pa.Array.from_buffers(type_, len(values), [None, pa.py_buffer(values)])


def string_array(strings) -> pa.Array:
    """``string`` array of a sequence of ``str``."""
    encoded = [text.encode() for text in strings]
    offsets = np.zeros(len(encoded) + 1, np.int32)
    np.cumsum(np.fromiter(map(len, encoded), np.int64, len(encoded)), out=offsets[1:])
    return pa.Array.from_buffers(pa.string(), len(encoded), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))])


def numbered_strings(prefix: str, start: int, count: int) -> pa.Array:
    """``string`` array of ``f"{prefix}{i}"`` for ``i`` in ``range(start, start + count)`` (``start >= 0``),
    written digit by digit into one buffer instead of formatting and encoding a string per row."""
    head = np.frombuffer(prefix.encode(), np.uint8)
    numbers = np.arange(start, start + count, dtype=np.int64)
    digits = np.ones(count, np.int64)
    power = 10
    while count and power <= numbers[-1]:
        digits += numbers >= power
        power *= 10
    offsets = np.zeros(count + 1, np.int64)
    np.cumsum(len(head) + digits, out=offsets[1:])
    data = np.empty(int(offsets[-1]), np.uint8)
    data[(offsets[:-1, None] + np.arange(len(head))).reshape(-1)] = np.tile(head, count)
    ends, rest = offsets[1:] - 1, numbers.copy()
    for place in range(int(digits.max(initial=0))):
        has = digits > place
        data[ends[has] - place] = 48 + rest[has] % 10  # ASCII '0' + the digit
        rest //= 10
    return pa.Array.from_buffers(pa.string(), count, [None, pa.py_buffer(offsets.astype(np.int32)),
                                                      pa.py_buffer(data)])


def _offsets(lengths: np.ndarray) -> pa.Array:
    offsets = np.zeros(len(lengths) + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return numpy_array(offsets, pa.int32())


def grids_column(grids: np.ndarray, sizes: np.ndarray) -> pa.Array:
    """``list<list<int8>>`` of the true ``sizes[i] = (H, W)`` corner of each padded ``grids[i]``."""
    k, max_h, max_w = grids.shape
    heights, widths = sizes[:, 0].astype(np.int64), sizes[:, 1].astype(np.int64)
    if (heights == max_h).all() and (widths == max_w).all():  # every grid fills its buffer: no mask to apply
        cells = numpy_array(grids, pa.int8())
    else:
        from cogen.pipeline._corners import gather_corners

        kept = np.empty(int((heights * widths).sum()), np.int8)
        gather_corners(np.ascontiguousarray(grids, dtype=np.int8), heights, widths, kept)
        cells = numpy_array(kept, pa.int8())
    rows = pa.ListArray.from_arrays(_offsets(np.repeat(widths, heights)), cells)
    return pa.ListArray.from_arrays(_offsets(heights), rows)


def padded_rows_column(values: np.ndarray, lengths: np.ndarray, type_: pa.DataType) -> pa.Array:
    """``list<type>`` of the first ``lengths[i]`` entries of each row of ``values``."""
    keep = np.arange(values.shape[1])[None, :] < lengths[:, None]
    return pa.ListArray.from_arrays(_offsets(lengths), numpy_array(values[keep], type_))


def pairs_column(values: np.ndarray, lengths: np.ndarray, type_: pa.DataType) -> pa.Array:
    """``list<list<type>>`` of the first ``lengths[i]`` pairs of ``values[i]`` (shape ``(k, m, 2)``)."""
    keep = np.arange(values.shape[1])[None, :] < lengths[:, None]
    flat = values[keep].reshape(-1)
    inner = pa.ListArray.from_arrays(numpy_array(np.arange(0, flat.size + 1, 2), pa.int32()), numpy_array(flat, type_))
    return pa.ListArray.from_arrays(_offsets(lengths), inner)


def names_column(tokens: np.ndarray, names: np.ndarray) -> pa.Array:
    """``list<string>``: each row of ``tokens`` (``-1`` padded) mapped through ``names[token]``."""
    keep = tokens >= 0
    return pa.ListArray.from_arrays(_offsets(keep.sum(axis=1)), string_array(names[tokens[keep]]))


@dataclass(frozen=True)
class Grids:
    """A ``list<list<int>>`` column as arrays: each row's ``(height, width)`` in ``sizes``, its cells
    row-major in ``cells[starts[i]:]``; ``regular[i]`` is False for a null grid or one whose lines
    are not all ``width`` long."""

    sizes: np.ndarray
    cells: np.ndarray
    starts: np.ndarray
    regular: np.ndarray


def _combined(column) -> pa.Array:
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def read_grids(column) -> Grids:
    """The grids of a ``list<list<int8>>`` column, without Python lists."""
    grids = _combined(column)
    outer = grids.offsets.to_numpy().astype(np.int64)
    lines = grids.values
    inner = lines.offsets.to_numpy().astype(np.int64)
    cells = lines.values.to_numpy(zero_copy_only=False)
    heights = np.diff(outer)
    starts, stops = inner[outer[:-1]], inner[outer[1:]]
    widths = (stops - starts) // np.maximum(heights, 1)
    regular = ~grids.is_null().to_numpy(zero_copy_only=False)
    wrong_lines = np.diff(inner[outer[0]: outer[-1] + 1]) != np.repeat(widths, heights)
    regular[np.repeat(np.arange(len(heights)), heights)[wrong_lines]] = False
    return Grids(np.stack([heights, widths], axis=1), cells, starts, regular)


def read_lists(column) -> tuple[np.ndarray, np.ndarray]:
    """``(values, offsets)`` of a ``list<...>`` column: row ``i``'s items are
    ``values[offsets[i]:offsets[i + 1]]`` (int64 offsets from 0; values as NumPy, or the child Arrow
    array for nested lists)."""
    lists = _combined(column)
    offsets = lists.offsets.to_numpy().astype(np.int64)
    values = lists.values.slice(offsets[0], offsets[-1] - offsets[0])
    values = values if pa.types.is_list(values.type) else values.to_numpy(zero_copy_only=False)
    return values, offsets - offsets[0]
