"""Arrow columns to padded NumPy arrays, vectorised over the list offsets (no per-row Python).

Functions here take plain (single-chunk) Arrow arrays; callers combine chunks first.

A grid column is ``list<list<int>>`` (one grid per row) or ``list<list<list<int>>>`` (several
grids per row, e.g. an episode's study examples). Grids are scattered into a pre-filled array
in one NumPy assignment: each cell's row, line and column index come from repeating the
offsets, so the cost is that of copying the cells once.
"""

from __future__ import annotations

import re

import numpy as np

from cogen.errors import DataError

__all__ = ["GRID_NAME", "column_shapes", "grid_depth", "grid_shapes", "pad_grid_column", "token_matrix"]


def _lengths(array) -> np.ndarray:
    import pyarrow.compute as pc

    return pc.list_value_length(array).to_numpy(zero_copy_only=False).astype(np.int64)


#: Grid columns are named ``input``/``output`` or end in ``_input(s)``/``_output(s)``; other nested
#: integer columns (object positions, indicator cells) are not grids.
GRID_NAME = re.compile(r"(^|_)(input|output)s?$|^frames$")  # frames: a sequential row's (depth + 1) grids


def grid_depth(name: str, type_) -> int:
    """2 for a ``list<list<int>>`` grid column, 3 for ``list<list<list<int>>>``, 0 for anything else."""
    import pyarrow as pa

    if not GRID_NAME.search(name):
        return 0
    depth = 0
    while pa.types.is_list(type_) or pa.types.is_large_list(type_):
        type_, depth = type_.value_type, depth + 1
    return depth if depth in (2, 3) and pa.types.is_integer(type_) else 0


def _starts(lengths: np.ndarray) -> np.ndarray:
    return np.cumsum(lengths) - lengths


def _positions(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every child of lists of ``lengths``: the index of its list and its place in that list."""
    owner = np.repeat(np.arange(len(lengths)), lengths)
    return owner, np.arange(int(lengths.sum())) - np.repeat(_starts(lengths), lengths)


def grid_shapes(array) -> np.ndarray:
    """``(n, 2)`` true heights and widths of a ``list<list<int>>`` array; ragged grids are refused."""
    heights = _lengths(array)
    widths_of_rows = _lengths(array.flatten())
    widths = np.zeros_like(heights)
    widths[heights > 0] = widths_of_rows[_starts(heights)[heights > 0]]
    ragged = np.flatnonzero(np.repeat(widths, heights) != widths_of_rows)
    if len(ragged):
        raise DataError(f"grid {np.repeat(np.arange(len(heights)), heights)[ragged[0]]} is not rectangular "
                        "(its rows have different lengths)")
    return np.stack([heights, widths], axis=1)


def _padded_grids(array, size: tuple[int, int], pad_value: int) -> np.ndarray:
    """``(n, H, W)`` int8 array of the grids of a ``list<list<int>>`` array, padded with ``pad_value``."""
    heights = _lengths(array)
    rows = array.flatten()
    widths_of_rows = _lengths(rows)
    cells = rows.flatten().to_numpy(zero_copy_only=False)
    out = np.full((len(heights), *size), pad_value, np.int8)
    if len(heights) and (heights == heights[0]).all() and (widths_of_rows == widths_of_rows[:1]).all():
        height, width = int(heights[0]), int(widths_of_rows[0]) if len(widths_of_rows) else 0
        out[:, :height, :width] = cells.reshape(len(heights), height, width)  # every grid the same shape
        return out
    grid_of_row, line_of_row = _positions(heights)
    first_cell_of_row = (grid_of_row * size[0] + line_of_row) * size[1]  # flat index of each row's first cell
    out.reshape(-1)[np.arange(len(cells)) + np.repeat(first_cell_of_row - _starts(widths_of_rows), widths_of_rows)] = cells
    return out


def _check_size(shapes: np.ndarray, size: tuple[int, int], name: str) -> None:
    flat = shapes.reshape(-1, 2)
    too_big = np.flatnonzero((flat[:, 0] > size[0]) | (flat[:, 1] > size[1]))
    if len(too_big):
        height, width = flat[too_big[0]]
        raise DataError(f"column {name!r}: a {height}x{width} grid does not fit the padding size "
                        f"{size[0]}x{size[1]}; pass a larger size (or size=None for the largest grid)")


def column_shapes(array, depth: int) -> np.ndarray:
    """True grid shapes of a grid column: ``(n, 2)``, or ``(n, k, 2)`` with zeros for missing examples."""
    if depth == 2:
        return grid_shapes(array)
    counts = _lengths(array)
    shapes = np.zeros((len(counts), int(counts.max(initial=0)), 2), np.int64)
    owner, place = _positions(counts)
    shapes[owner, place] = grid_shapes(array.flatten())
    return shapes


def pad_grid_column(array, depth: int, size: tuple[int, int], pad_value: int, name: str = "grid"):
    """Padded grids and true shapes of one grid column (``depth`` 2 or 3, see :func:`grid_depth`)."""
    shapes = column_shapes(array, depth)
    _check_size(shapes, size, name)
    if depth == 2:
        return _padded_grids(array, size, pad_value), shapes.astype(np.int32)
    counts = _lengths(array)
    out = np.full((len(counts), shapes.shape[1], *size), pad_value, np.int8)
    owner, place = _positions(counts)
    out[owner, place] = _padded_grids(array.flatten(), size, pad_value)
    return out, shapes.astype(np.int32)


def token_matrix(array, tokens_of: dict[str, int], depth: int, pad_token: int) -> np.ndarray:
    """``(n, depth)`` int64 token ids of a ``list<string>`` array, padded on the right with ``pad_token``."""
    import pyarrow.compute as pc

    lengths = _lengths(array)
    if len(lengths) and lengths.max() > depth:
        raise DataError(f"a sequence has {int(lengths.max())} transformations, more than depth={depth}; "
                        "pass a larger depth (or depth=None for the longest sequence)")
    encoded = pc.dictionary_encode(array.flatten())
    ids = np.array([tokens_of[name] for name in encoded.dictionary.to_pylist()] or [0], np.int64)
    out = np.full((len(lengths), depth), pad_token, np.int64)
    owner, place = _positions(lengths)
    out[owner, place] = ids[encoded.indices.to_numpy(zero_copy_only=False)]
    return out
