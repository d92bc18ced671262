"""Visual tokens: padded grids drawn on a canvas that shows where each grid ends.

The papers' Grid-TF, PL-TF and LLaDA read a grid as an ``(H+2) x (W+2)`` canvas of 15
token classes instead of the plain ``H x W`` padding of :func:`cogen.io.split_arrays` (11
classes): colours 0-9, then

* ``VT_PAD`` (10) everywhere outside the grid and its borders,
* ``X_END`` (11) one column right of each grid row (the right border),
* ``Y_END`` (12) one row below each grid column (the bottom border),
* ``XY_END`` (13) the corner where both borders meet,
* ``NEWLINE`` (14) the last column of every canvas row.

So a model must also predict where its output grid ends. :func:`visual_tokens` turns the padded
arrays and true shapes that :func:`cogen.io.split_arrays` returns into canvases; NumPy only,
vectorised over the whole split.

>>> grids, shapes = pad_grids([[[1, 2, 3]]], size=3)
>>> visual_tokens(grids, shapes)[0]
array([[ 1,  2,  3, 11, 14],
       [12, 12, 12, 13, 14],
       [10, 10, 10, 10, 14],
       [10, 10, 10, 10, 14],
       [10, 10, 10, 10, 14]], dtype=int8)
"""

from __future__ import annotations

import numpy as np

from cogen.errors import DataError

__all__ = ["NEWLINE", "VISUAL_CLASSES", "VT_PAD", "XY_END", "X_END", "Y_END", "visual_tokens"]

VT_PAD, X_END, Y_END, XY_END, NEWLINE = 10, 11, 12, 13, 14
#: Token classes of a visual-token canvas: ten colours and five layout tokens.
VISUAL_CLASSES = 15


def visual_tokens(grids: np.ndarray, shapes: np.ndarray) -> np.ndarray:
    """Canvases ``(..., H+2, W+2)`` int8 of padded grids ``(..., H, W)`` and their true shapes ``(..., 2)``.

    ``grids`` and ``shapes`` are a grid column and its ``_shape`` column of
    :func:`cogen.io.split_arrays` (any pad value: only the cells inside each true shape are read).
    A grid of shape ``(0, 0)`` (a missing list entry) becomes an empty canvas: pad and newlines.
    """
    grids, shapes = np.asarray(grids), np.asarray(shapes)
    if grids.ndim < 2 or shapes.shape != grids.shape[:-2] + (2,):
        raise DataError(f"visual_tokens needs grids (..., H, W) and shapes (..., 2); got {grids.shape} and "
                        f"{shapes.shape}")
    height, width = grids.shape[-2:]
    if shapes.size and ((shapes[..., 0] > height).any() or (shapes[..., 1] > width).any()):
        raise DataError(f"a true shape is larger than the {height}x{width} padded grids")
    heights = shapes[..., 0, None, None]
    widths = shapes[..., 1, None, None]
    rows = np.arange(height + 2)[:, None]
    cols = np.arange(width + 2)[None, :]
    canvas = np.full(grids.shape[:-2] + (height + 2, width + 2), VT_PAD, np.int8)
    canvas[..., :height, :width] = grids
    inside_rows, inside_cols = rows < heights, cols < widths
    canvas[~(inside_rows & inside_cols)] = VT_PAD
    canvas[inside_rows & (cols == widths)] = X_END
    canvas[(rows == heights) & inside_cols] = Y_END
    canvas[(rows == heights) & (cols == widths)] = XY_END
    canvas[..., :, width + 1] = NEWLINE
    return canvas
