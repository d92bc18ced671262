"""Arrow grid columns into :class:`~cogen.metrics.grids.GridStack` objects, checked on the way.

``list<list<integer>>`` columns take a vectorised path (no Python object per cell); anything else is
checked cell by cell with :func:`~cogen.metrics.grids.check_grid` (a string is not a grid: ``string``).
"""

from __future__ import annotations

import numpy as np

from cogen.metrics.grids import MAX_SIDE, PAD, GridStack, check_grid, stack_grids

__all__ = ["check_value", "is_grid_type", "stack_column"]


def check_value(value) -> tuple[np.ndarray | None, str | None]:
    """:func:`check_grid`; a string is a format error (``string``), never decoded: a grid written as JSON text
    where a grid belongs is a double encoding the model's pipeline should not hide."""
    if isinstance(value, str):
        return None, "string"
    return check_grid(value)


def stack_column(column) -> tuple[GridStack, list[str | None]]:
    """The grids of an Arrow column (array or chunked array) and, per row, why it is not a grid (or None)."""
    import pyarrow as pa

    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    kind = array.type
    if is_grid_type(kind):
        return _stack_lists(array)
    checked = [check_value(value) for value in array.to_pylist()]
    return stack_grids([grid for grid, _ in checked]), [reason for _, reason in checked]


def is_grid_type(kind) -> bool:
    """True for ``list<list<integer>>``."""
    import pyarrow as pa

    return (pa.types.is_list(kind) and pa.types.is_list(kind.value_type)
            and pa.types.is_integer(kind.value_type.value_type))


def _stack_lists(array) -> tuple[GridStack, list[str | None]]:
    """Vectorised checks of a ``list<list<int>>`` array, then one reshape per well-formed grid."""
    n = len(array)
    outer = np.asarray(array.offsets, np.int64)
    rows = array.values
    row_offsets = np.asarray(rows.offsets, np.int64)
    cells = rows.values
    values = cells.to_numpy(zero_copy_only=False) if cells.null_count == 0 else \
        cells.fill_null(-1).to_numpy(zero_copy_only=False)
    heights = np.diff(outer)
    row_index = np.arange(outer[0], outer[-1])
    sample = np.repeat(np.arange(n), heights)
    row_length = np.diff(row_offsets)[row_index] if len(row_index) else np.zeros(0, np.int64)
    first_row = np.where(heights > 0, outer[:-1], 0)
    widths = np.where(heights > 0, np.diff(row_offsets)[first_row] if len(row_offsets) > 1 else 0, 0)
    flags = {
        "null": ~np.asarray(array.is_valid()),
        "not 2-D": _any(sample[~np.asarray(rows.is_valid())[row_index]], n),
        "empty": (heights == 0) | (widths == 0),
        "ragged rows": _any(sample[row_length != widths[sample]], n),
        "value outside 0-9": _outside(values, row_offsets[outer]),
        "too large": (heights > MAX_SIDE) | (widths > MAX_SIDE),
    }
    reasons: list[str | None] = [None] * n
    for reason in reversed(flags):  # the first reason in ``flags`` wins
        for k in np.flatnonzero(flags[reason]):
            reasons[k] = reason
    ok = np.array([reason is None for reason in reasons], bool)
    stack = _fill(values, outer, row_offsets, heights, widths, ok)
    return stack, reasons


def _outside(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per grid, whether a cell lies outside 0..9 (grid k is ``values[starts[k]:starts[k + 1]]``)."""
    out = np.zeros(len(starts) - 1, bool)
    present = np.flatnonzero(starts[1:] > starts[:-1])
    if len(present):  # segments of the non-empty grids, the last one cut at its own end
        segments, used = starts[:-1][present], values[: starts[-1]]
        out[present] = (np.minimum.reduceat(used, segments) < 0) | (np.maximum.reduceat(used, segments) > 9)
    return out


def _any(samples: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(samples, minlength=n)[:n] > 0


def _fill(values, outer, row_offsets, heights, widths, ok) -> GridStack:
    keep_h = np.where(ok, heights, 0).astype(np.int32)
    keep_w = np.where(ok, widths, 0).astype(np.int32)
    cells = np.full((len(ok), max(int(keep_h.max(initial=0)), 1), max(int(keep_w.max(initial=0)), 1)), PAD, np.int8)
    for k in np.flatnonzero(ok):
        start, h, w = row_offsets[outer[k]], keep_h[k], keep_w[k]
        cells[k, :h, :w] = values[start: start + h * w].reshape(h, w)
    return GridStack(cells, keep_h, keep_w)
