"""Numba kernel that re-derives stored Compositional-ARC examples with the primitives (``cogen verify``).

An example's output is its input's object transformed by the roles its kind marks (shape, then
colour, then neighbour; :data:`cogen.carc._kernels.MARKS`), drawn with the indicator object N
when the kind includes the neighbour role. :func:`replay` takes the object from the stored input
(every non-background cell that is not N), applies the row's grammar with
:func:`cogen.carc._kernels.transform` and compares the result with the stored output. It calls
the episode kernels, so this module pins their file's digest (``KERNELS_SHA256``, see
:mod:`cogen.pins`).
"""

from __future__ import annotations

import numpy as np

from cogen.carc._kernels import MARKS, SIDE, transform
from cogen.jit import kernel

KERNELS_SHA256 = "8a98af5ddda5e3f61e5c133bdd85b9e11979398f0bfdbaad1a1cebbaca3f7b4f"

__all__ = ["CANNOT_REPLAY", "INPUT_DIFFERS", "OUTPUT_DIFFERS", "REPLAYED", "UNKNOWN_KIND", "replay"]

#: Outcome of each example: replayed and equal, input not one object (and N where the kind has
#: it), a primitive that cannot apply, output differs, an example kind or grammar that cannot be.
REPLAYED, INPUT_DIFFERS, CANNOT_REPLAY, OUTPUT_DIFFERS, UNKNOWN_KIND = range(5)
_CELLS = 2 * SIDE * SIDE


@kernel
def _object(grid, with_neighbor, neighbor, ncolor, work):
    """The object of an input grid into ``work[0:2]``: (count, colour); count -1 when the grid is not
    one single-coloured object (plus N, drawn in its colour, when ``with_neighbor``)."""
    n, color = 0, -1
    for r in range(SIDE):
        for c in range(SIDE):
            value = grid[r, c]
            if with_neighbor and neighbor[r, c]:
                if value != ncolor:
                    return -1, color
                continue
            if value == 0:
                continue
            if color >= 0 and value != color:
                return -1, color
            color = value
            work[0, n], work[1, n] = r, c
            n += 1
    return (n if n > 0 else -1), color


@kernel
def _chain(kind, params, n, color, work):
    """Apply the roles ``kind`` marks to the object in ``work[0:2]`` (result left there): (count, colour)."""
    for role in range(3):
        if MARKS[kind, role] == 0:
            continue
        n, color = transform(params[3 * role], params[3 * role + 1], params[3 * role + 2], work[0], work[1], n,
                             color, work[2], work[3])
        if n < 0:
            return n, color
        for i in range(n):
            work[0, i], work[1, i] = work[2, i], work[3, i]
    return n, color


@kernel
def _matches(grid, with_neighbor, neighbor, ncolor, work, n, color):
    """True when ``grid`` is N (when ``with_neighbor``) under the object ``work[0:2, :n]`` in ``color``."""
    expected = np.zeros((SIDE, SIDE), np.int64)
    if with_neighbor:
        for r in range(SIDE):
            for c in range(SIDE):
                if neighbor[r, c]:
                    expected[r, c] = ncolor
    for i in range(n):
        expected[work[0, i], work[1, i]] = color
    for r in range(SIDE):
        for c in range(SIDE):
            if grid[r, c] != expected[r, c]:
                return False
    return True


@kernel
def replay(inputs, outputs, kinds, rows, params, neighbors, ncolors, status):
    """Re-derive every example; ``status[e]`` gets the outcome of example ``e`` (``REPLAYED``, ...).

    ``inputs``/``outputs`` (m, 10, 10) int8; ``kinds`` (m,) int64 index of the example's kind in
    :data:`cogen.carc.grammar.KINDS` (-1: unknown); ``rows`` (m,) the row each example belongs to;
    per row: ``params`` (r, 9) int64, the (type, a, b) of the shape, colour and neighbour roles
    (type -1: unknown); ``neighbors`` (r, 10, 10) bool, N's cells; ``ncolors`` (r,) N's colour.
    """
    work = np.zeros((4, _CELLS), np.int64)
    for e in range(inputs.shape[0]):
        kind, row = kinds[e], rows[e]
        if kind < 0 or kind >= MARKS.shape[0] or min(params[row, 0], params[row, 3], params[row, 6]) < 0:
            status[e] = UNKNOWN_KIND
            continue
        with_neighbor = MARKS[kind, 2] == 1
        n, color = _object(inputs[e], with_neighbor, neighbors[row], ncolors[row], work)
        if n < 0:
            status[e] = INPUT_DIFFERS
            continue
        n, color = _chain(kind, params[row], n, color, work)
        if n < 0:
            status[e] = CANNOT_REPLAY
        elif not _matches(outputs[e], with_neighbor, neighbors[row], ncolors[row], work, n, color):
            status[e] = OUTPUT_DIFFERS
        else:
            status[e] = REPLAYED
