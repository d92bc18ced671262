"""Object indices for Grid-TF's object positional encoding (OPE), computed once per split.

The paper (App. H) computes them on the visual-token canvas with ViTARC's routine: the most
frequent value is the background; every other value's 8-connected regions (OpenCV's external
contours) are found, and each region's bounding box is filled with a new index 1, 2, ... (later
boxes paint over earlier ones; the background keeps 0). cogen finds the regions with a flood fill
in one Numba kernel over the whole split, visiting values in increasing order and regions in
raster order of their first cell (OpenCV's contour order differs; the indices are labels, so only
the partition matters to the model).

One deliberate difference: only colours (0-9) form objects, and the background is the most
frequent colour. Layout tokens (pad, borders, newlines) keep index 0. Taken as objects, the pad
region of any grid smaller than the canvas is an L whose bounding box is the whole canvas, and
painting it last would give every cell the same index, erasing the encoding.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["object_indices"]

#: Values that can form objects: the colours.
COLOURS = 10
_NEIGHBOURS = np.array([(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)], np.int64)


def object_indices(canvases: np.ndarray) -> np.ndarray:
    """``(n, H, W)`` int16 object index of every cell of ``(n, H, W)`` integer grids (see the module docstring)."""
    canvases = np.ascontiguousarray(canvases, np.int64)
    if canvases.ndim != 3:
        raise ValueError(f"object_indices needs (n, H, W) grids, got shape {canvases.shape}")
    out = np.zeros(canvases.shape, np.int16)
    if canvases.size:
        _object_indices(canvases, out, _NEIGHBOURS, COLOURS)
    return out


@numba.njit(cache=True, nogil=True)
def _object_indices(grids, out, neighbours, colours):  # pragma: no cover - compiled
    height, width = grids.shape[1], grids.shape[2]
    seen = np.zeros((height, width), np.bool_)
    stack = np.empty((height * width, 2), np.int64)
    counts = np.zeros(colours, np.int64)
    for n in range(grids.shape[0]):
        grid = grids[n]
        counts[:] = 0
        for r in range(height):
            for c in range(width):
                if 0 <= grid[r, c] < colours:
                    counts[grid[r, c]] += 1
        background = np.argmax(counts)
        seen[:, :] = False
        label = 0
        for value in range(colours):
            if value == background or counts[value] == 0:
                continue
            for r in range(height):
                for c in range(width):
                    if grid[r, c] != value or seen[r, c]:
                        continue
                    label += 1
                    top, bottom, left, right = r, r, c, c
                    seen[r, c] = True
                    stack[0, 0], stack[0, 1] = r, c
                    size = 1
                    while size:
                        size -= 1
                        y, x = stack[size, 0], stack[size, 1]
                        top, bottom, left, right = min(top, y), max(bottom, y), min(left, x), max(right, x)
                        for k in range(8):
                            ny, nx = y + neighbours[k, 0], x + neighbours[k, 1]
                            if 0 <= ny < height and 0 <= nx < width and not seen[ny, nx] and grid[ny, nx] == value:
                                seen[ny, nx] = True
                                stack[size, 0], stack[size, 1] = ny, nx
                                size += 1
                    out[n, top: bottom + 1, left: right + 1] = label
