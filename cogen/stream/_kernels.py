"""Numba kernel of the stream: pad value written outside each grid's true size, in place."""

from __future__ import annotations

from cogen.jit import kernel


@kernel
def pad_outside(grids, sizes, value):
    """Set every cell of ``grids[s]`` (``(n, H, W)``) outside ``sizes[s]`` (height, width) to ``value``."""
    for s in range(grids.shape[0]):
        height, width = sizes[s, 0], sizes[s, 1]
        for r in range(grids.shape[1]):
            for c in range(width if r < height else 0, grids.shape[2]):
                grids[s, r, c] = value
