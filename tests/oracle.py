"""Slow, obviously correct NumPy versions of the 28 transformations and of a scene, for tests.

Written from the semantics ("clean model"), not from the kernels: an object is
(row, col, tight int8 array); every result is re-tightened; ``None`` means "cannot apply".
Also holds the random test objects shared by the engine tests.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path

import numpy as np

PAD_TOP, PAD_BOTTOM, PAD_LEFT, PAD_RIGHT = 8, 9, 7, 6


def tighten(row, col, grid):
    """(row, col, grid) cut to the non-zero cells, or None if there are none."""
    rows = np.flatnonzero(grid.any(axis=1))
    cols = np.flatnonzero(grid.any(axis=0))
    if rows.size == 0:
        return None
    r0, r1, c0, c1 = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
    return row + int(r0), col + int(c0), grid[r0:r1, c0:c1].astype(np.int8)


def next_color(grid):
    """Colour shift c -> c mod 9 + 1 on non-zero cells."""
    return np.where(grid > 0, grid % 9 + 1, 0)


def most_frequent_color(grid):
    """Most frequent non-zero colour, smallest colour on ties."""
    values, counts = np.unique(grid[grid > 0], return_counts=True)
    return int(values[np.argmax(counts)])  # np.unique sorts, argmax takes the first maximum


def holes(grid):
    """Mask of background cells not 4-connected to the outside of the box."""
    h, w = grid.shape
    outside = np.zeros((h, w), dtype=bool)
    queue = deque((i, j) for i in range(h) for j in range(w)
                  if grid[i, j] == 0 and (i in (0, h - 1) or j in (0, w - 1)))
    for i, j in queue:
        outside[i, j] = True
    while queue:
        i, j = queue.popleft()
        for y, x in ((i - 1, j), (i + 1, j), (i, j - 1), (i, j + 1)):
            if 0 <= y < h and 0 <= x < w and grid[y, x] == 0 and not outside[y, x]:
                outside[y, x] = True
                queue.append((y, x))
    return (grid == 0) & ~outside


def _fill(grid, same):
    hole = holes(grid)
    if not hole.any():
        return 0, 0, grid
    color = most_frequent_color(grid)
    if same:
        return 0, 0, np.where((grid > 0) | hole, color, 0)
    return 0, 0, np.where(hole, color % 9 + 1, grid)


def _empty(grid):
    filled = np.pad(grid > 0, 1)
    inner = filled[1:-1, 1:-1] & filled[:-2, 1:-1] & filled[2:, 1:-1] & filled[1:-1, :-2] & filled[1:-1, 2:]
    return 0, 0, np.where(inner, 0, grid)


def _extend(grid, recolor):
    h, w = grid.shape
    out = np.zeros((h + 2, w + 2), dtype=np.int64)
    out[0, 1:-1], out[-1, 1:-1] = grid[0], grid[-1]
    out[1:-1, 0], out[1:-1, -1] = grid[:, 0], grid[:, -1]
    if recolor:
        out = np.where(out > 0, most_frequent_color(grid) % 9 + 1, 0)
    out[1:-1, 1:-1] = grid
    return -1, -1, out


def _pad_ring(grid):
    h, w = grid.shape
    out = np.zeros((h + 2, w + 2), dtype=np.int64)
    out[1:-1, 1:-1] = grid
    out[0, :], out[-1, :] = PAD_TOP, PAD_BOTTOM
    out[:, 0], out[:, -1] = PAD_LEFT, PAD_RIGHT
    return -1, -1, out


def _crop_contours(grid):
    h, w = grid.shape
    if h < 3 or w < 3:
        return None
    return 1, 1, grid[1:-1, 1:-1]


def _full(h, w, color):
    return np.full((h, w), color)


RULES = {
    "translate_up": lambda g: (-1, 0, g),
    "translate_down": lambda g: (1, 0, g),
    "translate_left": lambda g: (0, -1, g),
    "translate_right": lambda g: (0, 1, g),
    "rot90": lambda g: (0, 0, np.rot90(g, 1)),
    "mirror_horizontal": lambda g: (0, 0, np.flipud(g)),
    "mirror_vertical": lambda g: (0, 0, np.fliplr(g)),
    "crop_top_side": lambda g: (g.shape[0] // 2, 0, g[g.shape[0] // 2:]),
    "crop_bottom_side": lambda g: (0, 0, g[: -(-g.shape[0] // 2)]),
    "crop_left_side": lambda g: (0, g.shape[1] // 2, g[:, g.shape[1] // 2:]),
    "crop_right_side": lambda g: (0, 0, g[:, : -(-g.shape[1] // 2)]),
    "crop_contours": _crop_contours,
    "change_shape_color": lambda g: (0, 0, next_color(g)),
    "fill_holes_same_color": lambda g: _fill(g, True),
    "fill_holes_different_color": lambda g: _fill(g, False),
    "empty_inside_pixels": _empty,
    "extend_contours_same_color": lambda g: _extend(g, False),
    "extend_contours_different_color": lambda g: _extend(g, True),
    "pad_top": lambda g: (-1, 0, np.vstack([_full(1, g.shape[1], PAD_TOP), g])),
    "pad_bottom": lambda g: (0, 0, np.vstack([g, _full(1, g.shape[1], PAD_BOTTOM)])),
    "pad_left": lambda g: (0, -1, np.hstack([_full(g.shape[0], 1, PAD_LEFT), g])),
    "pad_right": lambda g: (0, 0, np.hstack([g, _full(g.shape[0], 1, PAD_RIGHT)])),
    "pad_shape": _pad_ring,
    "double_right": lambda g: (0, 0, np.hstack([g, g])),
    "double_left": lambda g: (0, -g.shape[1], np.hstack([g, g])),
    "double_down": lambda g: (0, 0, np.vstack([g, g])),
    "double_up": lambda g: (-g.shape[0], 0, np.vstack([g, g])),
    "quadruple_shape": lambda g: (-g.shape[0], -g.shape[1], np.tile(g, (2, 2))),
}


def transform(name, row, col, grid):
    """Oracle result (row, col, tight int8 grid) of ``name`` on an object, or None."""
    result = RULES[name](np.asarray(grid, dtype=np.int64))
    if result is None:
        return None
    dr, dc, out = result
    return tighten(row + dr, col + dc, np.asarray(out))


def scene(names, objects, height, width):
    """Brute-force scene: (cause or None, objects of the last valid frame, final grid or None)."""
    for name in names:
        moved = [transform(name, *obj) for obj in objects]
        if any(obj is None for obj in moved):
            return "cannot_apply", objects, None
        frame = np.zeros((height, width), dtype=np.int8)
        for row, col, grid in moved:  # objects in order; each: inside the grid, then no overlap
            cells = [(row + y, col + x, v) for (y, x), v in np.ndenumerate(grid) if v != 0]
            if any(not (0 <= r < height and 0 <= c < width) for r, c, _ in cells):
                return "out_of_grid", objects, None
            if any(frame[r, c] != 0 for r, c, _ in cells):
                return "overlap", objects, None
            for r, c, value in cells:
                frame[r, c] = value
        objects = moved
    frame = np.zeros((height, width), dtype=np.int8)
    for row, col, grid in objects:
        frame[row : row + grid.shape[0], col : col + grid.shape[1]] += grid
    return None, objects, frame


# ----------------------------------------------------------------------------- test objects

EDGE_CASES = [np.array(g, dtype=np.int8) for g in (
    [[5]],
    [[1, 2, 3, 4]],
    [[1], [2], [3]],
    [[1, 0, 2]],
    [[1], [0], [2]],
    [[1, 1], [1, 1]],
    [[1, 1, 1], [1, 0, 1], [1, 1, 1]],               # one hole
    [[1, 1, 1, 1], [1, 0, 0, 1], [1, 1, 1, 1]],      # crop_contours interior empty
    [[1, 1, 1, 1], [1, 0, 0, 1], [1, 0, 0, 1], [1, 1, 1, 1]],
    [[0, 1, 0], [1, 0, 1], [0, 1, 0]],               # diamond ring: hollow
    [[0, 1, 0], [1, 1, 1], [0, 1, 0]],               # plus: empty leaves a diamond ring
    [[1, 0], [0, 1]],                                # only diagonally connected
    [[9, 9, 2], [9, 0, 2], [2, 2, 2]],               # hollow, two colours, tie 9/2 -> 2
    [[3, 3, 3], [3, 4, 3], [3, 3, 3]],
    [[1, 2, 1, 2, 1], [2, 0, 0, 0, 2], [1, 0, 7, 0, 1], [2, 0, 0, 0, 2], [1, 2, 1, 2, 1]],
    [[1, 0, 0], [0, 0, 0], [0, 0, 1]],
)]


def random_object(rng: np.random.Generator, max_side: int = 15) -> np.ndarray:
    """A random tight object: random size, density and colour count; rings now and then."""
    h, w = rng.integers(1, max_side + 1, size=2)
    if rng.random() < 0.2 and h >= 3 and w >= 3:  # hollow outline
        mask = np.ones((h, w), dtype=bool)
        mask[1:-1, 1:-1] = rng.random((h - 2, w - 2)) < 0.15
    else:
        mask = rng.random((h, w)) < rng.uniform(0.2, 1.0)
    colors = rng.choice(np.arange(1, 10), size=rng.integers(1, 4), replace=False)
    grid = np.where(mask, rng.choice(colors, size=(h, w)), 0).astype(np.int8)
    if not grid.any():
        grid[0, 0] = colors[0]
    return tighten(0, 0, grid)[2]


def bank_available() -> bool:
    """True when the object bank of this checkout has been built."""
    return (Path(__file__).resolve().parents[1] / "objects" / "manifest.json").exists()


def sample_objects(count: int, seed: int, source: str = "random") -> list[np.ndarray]:
    """Edge cases, then ``count`` objects drawn from the bank (``source="bank"``) or random."""
    rng = np.random.default_rng(seed)
    if source == "bank":
        from cogen.bank import load_bank

        bank = load_bank()
        picks = rng.choice(len(bank), size=min(count, len(bank)), replace=False)
        drawn = [np.asarray(bank.object(int(i)), dtype=np.int8) for i in picks]
    else:
        drawn = [random_object(rng) for _ in range(count)]
    return EDGE_CASES + drawn
