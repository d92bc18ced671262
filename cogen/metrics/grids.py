"""Grids as the metrics take them: validated, then stacked into one padded int8 array.

A prediction is *well formed* when it is a non-empty 2-D grid: a list of equally long, non-empty
rows of integers 0..9 (or a 2-D integer array holding those values), at most
:data:`MAX_SIDE` cells a side. :func:`check_grid` returns the grid or the reason it is not one;
the reasons are short fixed strings, so they can be counted.

A :class:`GridStack` holds ``n`` grids of any sizes in one ``(n, height, width)`` int8 array, each
at the top-left, with :data:`PAD` (-1) in every cell outside it; a grid that is absent (a
missing or malformed prediction) is all :data:`PAD` with size 0 x 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["MAX_SIDE", "PAD", "REASONS", "GridStack", "align", "as_stack", "check_grid", "stack_grids"]

#: Value of the cells outside a grid in a :class:`GridStack`.
PAD = -1
#: Largest accepted height or width of a prediction (ARC grids are at most 30 x 30).
MAX_SIDE = 64
#: Every reason :func:`check_grid` (and the predictions readers) can give.
REASONS = ("missing", "duplicate id", "null", "not a list", "empty", "not 2-D", "ragged rows", "non-integer value",
           "value outside 0-9", "too large", "string")


@dataclass(frozen=True)
class GridStack:
    """``n`` grids in one array: ``cells[k, :heights[k], :widths[k]]`` is grid ``k``; PAD elsewhere."""

    cells: np.ndarray
    heights: np.ndarray
    widths: np.ndarray

    def __len__(self) -> int:
        return len(self.heights)

    @property
    def present(self) -> np.ndarray:
        """True for the grids that exist (size above 0 x 0)."""
        return self.heights > 0

    def grid(self, k: int) -> np.ndarray | None:
        """Grid ``k`` as its own array, or None when absent."""
        if self.heights[k] <= 0:
            return None
        return self.cells[k, : self.heights[k], : self.widths[k]]

    def take(self, index: np.ndarray) -> GridStack:
        """The grids at ``index``; an index of -1 gives an absent grid."""
        index = np.asarray(index, np.int64)
        keep = index >= 0
        cells = np.full((len(index), *self.cells.shape[1:]), PAD, np.int8)
        cells[keep] = self.cells[index[keep]]
        heights = np.where(keep, self.heights[np.maximum(index, 0)] if len(self) else 0, 0).astype(np.int32)
        widths = np.where(keep, self.widths[np.maximum(index, 0)] if len(self) else 0, 0).astype(np.int32)
        return GridStack(cells, heights, widths)

    def canvas(self, height: int, width: int) -> np.ndarray:
        """The cells on a ``height x width`` canvas (PAD-filled or cropped)."""
        out = np.full((len(self), height, width), PAD, np.int8)
        h, w = min(height, self.cells.shape[1]), min(width, self.cells.shape[2])
        out[:, :h, :w] = self.cells[:, :h, :w]
        return out


def check_grid(value) -> tuple[np.ndarray | None, str | None]:
    """``(grid, None)`` for a well-formed grid (int8 array), else ``(None, reason)``.

    >>> check_grid([[0, 1], [2, 3]])[0].tolist()
    [[0, 1], [2, 3]]
    >>> check_grid([[0, 1], [2]])
    (None, 'ragged rows')
    """
    if value is None:
        return None, "null"
    if isinstance(value, np.ndarray):
        return _check_array(value)
    if not isinstance(value, (list, tuple)):
        return None, "not a list"
    try:
        array = np.array(value)
    except (ValueError, TypeError, OverflowError):  # NumPy refuses ragged or mixed nesting
        return None, _irregular(value)
    return _check_array(array)


def _irregular(value) -> str:
    """Why a nested list that NumPy cannot make an array of is not a grid."""
    if not all(isinstance(row, (list, tuple)) for row in value):
        return "not 2-D"
    if len({len(row) for row in value}) != 1:
        return "ragged rows"
    return "not 2-D" if any(isinstance(cell, (list, tuple)) for row in value for cell in row) else "non-integer value"


def _check_array(array: np.ndarray) -> tuple[np.ndarray | None, str | None]:
    if array.size == 0:
        return None, "empty"
    if array.ndim != 2:
        return None, "not 2-D"
    if array.dtype.kind not in "iu":
        if array.dtype.kind != "f" or not np.all(np.isfinite(array)) or not np.all(array == np.round(array)):
            return None, "non-integer value"
    if array.min() < 0 or array.max() > 9:
        return None, "value outside 0-9"
    if max(array.shape) > MAX_SIDE:
        return None, "too large"
    return array.astype(np.int8), None


def stack_grids(grids: Sequence[np.ndarray | None], height: int = 0, width: int = 0) -> GridStack:
    """Stack grids (None = absent) into a :class:`GridStack` at least ``height x width`` large."""
    heights = np.array([0 if g is None else np.shape(g)[0] for g in grids], np.int32)
    widths = np.array([0 if g is None else np.shape(g)[1] for g in grids], np.int32)
    cells = np.full((len(grids), max(height, heights.max(initial=0)), max(width, widths.max(initial=0))), PAD,
                    np.int8)
    for k, grid in enumerate(grids):
        if grid is not None:
            cells[k, : heights[k], : widths[k]] = grid
    return GridStack(cells, heights, widths)


def as_stack(grids) -> GridStack:
    """A :class:`GridStack` as is; a sequence of grids (None = absent) stacked."""
    if isinstance(grids, GridStack):
        return grids
    return stack_grids([None if g is None else np.asarray(g, np.int8) for g in grids])


def align(*stacks: GridStack) -> tuple[np.ndarray, ...]:
    """The stacks' cells on one common canvas (the largest of their shapes)."""
    height = max(s.cells.shape[1] for s in stacks)
    width = max(s.cells.shape[2] for s in stacks)
    return tuple(s.canvas(height, width) for s in stacks)
