"""Numba kernel measuring the raw features of packed objects; :mod:`cogen.bank.properties` turns
them into the named properties.

An object is a tight int8 box, 0 = background. The features are integers so that one (n, F)
array holds them all; their meaning is given by :data:`FEATURES`.
"""

from __future__ import annotations

import numpy as np

from cogen.jit import kernel

FEATURES = (
    "rows",               # box height
    "cols",               # box width
    "pixels",             # non-zero cells
    "n_colors",           # distinct non-zero values
    "components",         # 8-connected components of the mask
    "hollow",             # some background cell is cut off from the box border (4-connected)
    "mirror_lr",          # mask equals its left-right mirror
    "mirror_ud",          # mask equals its up-down mirror
    "transpose",          # square box and array (colours included) equals its transpose
    "antitranspose",      # square box and array equals its anti-transpose
    "diagonal_line",      # non-zero exactly on the cells (i, i)
    "antidiagonal_line",  # non-zero exactly on the cells (i, rows - 1 - i)
    "cross",              # >= 3x3, one full row + one full column, nothing else
    "diamond",            # odd square box, row i is the centred run of 2(r - |i - r|) + 1 cells
    "half_turn",          # mask equals its 180-degree turn
)
_N_FEATURES = len(FEATURES)


@kernel
def _colors(grid):
    """(pixels, distinct colours) of one object."""
    seen = np.zeros(256, np.bool_)
    pixels = 0
    distinct = 0
    for value in grid.ravel():
        if value != 0:
            pixels += 1
            if not seen[value & 0xFF]:
                seen[value & 0xFF] = True
                distinct += 1
    return pixels, distinct


@kernel
def _components(grid):
    """Number of 8-connected components of the non-zero cells (depth-first, explicit stack)."""
    h, w = grid.shape
    label = np.zeros((h, w), np.int32)
    stack = np.empty(h * w, np.int64)
    count = 0
    for start in range(h * w):
        if grid.flat[start] == 0 or label.flat[start] != 0:
            continue
        count += 1
        label.flat[start] = count
        top = 0
        stack[0] = start
        while top >= 0:
            cell = stack[top]
            top -= 1
            r, c = cell // w, cell % w
            for rr in range(max(r - 1, 0), min(r + 2, h)):
                for cc in range(max(c - 1, 0), min(c + 2, w)):
                    if grid[rr, cc] != 0 and label[rr, cc] == 0:
                        label[rr, cc] = count
                        top += 1
                        stack[top] = rr * w + cc
    return count


@kernel
def _hollow(grid):
    """True when a background cell cannot reach the box border through 4-connected background
    (what ``scipy.ndimage.binary_fill_holes`` would fill)."""
    h, w = grid.shape
    outside = np.zeros((h, w), np.bool_)
    stack = np.empty(h * w, np.int64)
    top = -1
    for r in range(h):
        for c in range(w):
            if (r == 0 or c == 0 or r == h - 1 or c == w - 1) and grid[r, c] == 0:
                outside[r, c] = True
                top += 1
                stack[top] = r * w + c
    while top >= 0:
        cell = stack[top]
        top -= 1
        r, c = cell // w, cell % w
        for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if 0 <= rr < h and 0 <= cc < w and grid[rr, cc] == 0 and not outside[rr, cc]:
                outside[rr, cc] = True
                top += 1
                stack[top] = rr * w + cc
    for r in range(h):
        for c in range(w):
            if grid[r, c] == 0 and not outside[r, c]:
                return True
    return False


@kernel
def _mirrors(grid):
    """(mask left-right symmetric, mask up-down symmetric, array == transpose,
    array == anti-transpose, mask unchanged by a 180-degree turn); the transposes are False for
    non-square boxes."""
    h, w = grid.shape
    lr = ud = turn = True
    square = h == w
    tr = anti = square
    for r in range(h):
        for c in range(w):
            filled = grid[r, c] != 0
            lr = lr and filled == (grid[r, w - 1 - c] != 0)
            ud = ud and filled == (grid[h - 1 - r, c] != 0)
            turn = turn and filled == (grid[h - 1 - r, w - 1 - c] != 0)
            if square:
                tr = tr and grid[r, c] == grid[c, r]
                anti = anti and grid[r, c] == grid[w - 1 - c, h - 1 - r]
    return lr, ud, tr, anti, turn


@kernel
def _lines(grid):
    """(diagonal line, anti-diagonal line): non-zero exactly where i == j (i + j == rows - 1)."""
    h, w = grid.shape
    diagonal = anti = True
    for r in range(h):
        for c in range(w):
            filled = grid[r, c] != 0
            diagonal = diagonal and filled == (r == c)
            anti = anti and filled == (r + c == h - 1)
    return diagonal, anti


@kernel
def _cross(grid, pixels):
    """Box at least 3x3 holding exactly one full row and one full column and nothing else
    (plus, T and L shapes all qualify)."""
    h, w = grid.shape
    if h < 3 or w < 3 or pixels != h + w - 1:
        return False
    full_rows = 0
    for r in range(h):
        full_rows += np.all(grid[r, :] != 0)
    full_cols = 0
    for c in range(w):
        full_cols += np.all(grid[:, c] != 0)
    return full_rows == 1 and full_cols == 1


@kernel
def _diamond(grid):
    """Odd square box whose mask is the digital diamond |i - r| + |j - r| <= r."""
    h, w = grid.shape
    if h != w or h % 2 == 0:
        return False
    radius = h // 2
    for r in range(h):
        for c in range(w):
            if (grid[r, c] != 0) != (abs(r - radius) + abs(c - radius) <= radius):
                return False
    return True


@kernel
def _measure(grid, out):
    """Fill ``out`` (one row of FEATURES) for one object."""
    pixels, n_colors = _colors(grid)
    lr, ud, tr, anti, turn = _mirrors(grid)
    diagonal, antidiagonal = _lines(grid)
    out[0], out[1], out[2], out[3] = grid.shape[0], grid.shape[1], pixels, n_colors
    out[4], out[5] = _components(grid), _hollow(grid)
    out[6], out[7], out[8], out[9] = lr, ud, tr, anti
    out[10], out[11] = diagonal, antidiagonal
    out[12], out[13], out[14] = _cross(grid, pixels), _diamond(grid), turn


@kernel
def measure_packed(pixels, offsets, shapes):
    """Features of every packed object: int64 array (n, len(FEATURES))."""
    n = shapes.shape[0]
    out = np.zeros((n, _N_FEATURES), np.int64)
    for i in range(n):
        grid = pixels[offsets[i]:offsets[i + 1]].reshape((shapes[i, 0], shapes[i, 1]))
        _measure(grid, out[i])
    return out
