"""Numba kernels that turn recipes into objects: RNG, footprints, grown shapes, colour patterns.

Everything here is integer arithmetic, so the output bytes are the same on every machine and with
``NUMBA_DISABLE_JIT=1``. The kernels call each other, so they live in one module (Numba's cache
only notices edits to a kernel's own file).

The RNG is a Weyl sequence on 62 bits followed by a 32-bit integer hash (every intermediate value
stays below 2**63, so plain Python ints and Numba int64 agree bit for bit). It is not NumPy's:
NumPy's streams may change between releases, ours cannot.

A recipe is one int64 row (see :mod:`cogen.bank._recipes` for the column meanings); :func:`generate`
writes each object's tight box at the top-left of a 15x15 slot and its (rows, cols), or (0, 0)
when the recipe yields nothing (an outline identical to its solid footprint).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from cogen.jit import kernel

MAX_SIDE = 15
#: What :func:`generate` returns: each recipe's object at the top-left of a 15x15 int8 slot, and its (rows, cols).
Objects = namedtuple("Objects", ("grids", "shapes"))
_MASK32 = 0xFFFFFFFF
_MASK62 = (1 << 62) - 1
_WEYL = 0x2545F4914F6CDD1D & _MASK62
_MAX_ROUNDS = 400
_P_SIXTEENTHS = 4   # growth probability p is drawn per shape in 4/16..11/16

# Recipe columns (kept in sync with cogen.bank._recipes.RECIPE_COLUMNS).
_FAMILY, _KIND, _SYMMETRY, _OUTLINE, _PATTERN, _ROWS, _COLS, _COLOR, _SEED = range(9)

# Family / footprint / connectivity / symmetry / pattern codes (index into the vocabularies).
_FOOTPRINT, _GROWN = 0, 1
_RECTANGLE, _SQUARE, _DISK, _DIAMOND, _ELLIPSE = range(5)
_CONN4, _CONN8, _DISTANCE = range(3)
_SYM_H, _SYM_V, _SYM_DIAG, _SYM_ANTI, _SYM_POINT, _SYM_NONE = range(6)
_UNIFORM, _ROW_STRIPES, _COL_STRIPES, _DIAG_STRIPES, _TOP_BOTTOM, _LEFT_RIGHT, _RANDOM = range(7)


@kernel
def mix32(x):
    """Integer hash of a 32-bit value (two multiply-xorshift rounds)."""
    x = ((x >> 16) ^ x) * 0x45D9F3B & _MASK32
    x = ((x >> 16) ^ x) * 0x45D9F3B & _MASK32
    return (x >> 16) ^ x


@kernel
def next32(state):
    """Advance ``state`` (int64 array of one element) and return 32 random bits."""
    s = (state[0] + _WEYL) & _MASK62
    state[0] = s
    return mix32(mix32(s & _MASK32) ^ (s >> 30))


@kernel
def below(state, n):
    """A random integer in ``[0, n)`` (multiply-shift; ``n`` at most 2**31)."""
    return (next32(state) * n) >> 32


@kernel
def _seed_state(seed):
    state = np.zeros(1, np.int64)
    state[0] = (mix32(seed & _MASK32) << 30 | mix32((seed >> 32) & _MASK32)) & _MASK62
    return state


# ----------------------------------------------------------------------------------- footprints


@kernel
def _footprint(kind, h, w, mask):
    """Solid footprint of ``kind`` filling an h x w box (ellipse/disk and diamond in doubled
    coordinates X = 2c-(w-1), Y = 2r-(h-1), so even sizes work and the box is always tight)."""
    for r in range(h):
        for c in range(w):
            x = abs(2 * c - (w - 1))
            y = abs(2 * r - (h - 1))
            if kind == _DISK or kind == _ELLIPSE:
                inside = x * x * h * h + y * y * w * w <= h * h * w * w
            elif kind == _DIAMOND:
                inside = x * h + y * w <= h * w
            else:
                inside = True
            mask[r, c] = 1 if inside else 0


@kernel
def _outline(h, w, mask):
    """Replace ``mask`` by its outline (mask minus its erosion by the 4-neighbour cross; cells
    outside the box count as background). Returns False when nothing was removed."""
    interior = np.zeros((h, w), np.uint8)
    for r in range(1, h - 1):
        for c in range(1, w - 1):
            if mask[r, c] and mask[r - 1, c] and mask[r + 1, c] and mask[r, c - 1] and mask[r, c + 1]:
                interior[r, c] = 1
    removed = False
    for r in range(h):
        for c in range(w):
            if interior[r, c]:
                mask[r, c] = 0
                removed = True
    return removed


# -------------------------------------------------------------------------------- grown shapes


@kernel
def _mirror(sym, h, w, r, c):
    """The image of cell (r, c) under the symmetry ``sym`` of an h x w box."""
    if sym == _SYM_H:
        return h - 1 - r, c
    if sym == _SYM_V:
        return r, w - 1 - c
    if sym == _SYM_DIAG:
        return c, r
    if sym == _SYM_ANTI:
        return w - 1 - c, h - 1 - r
    if sym == _SYM_POINT:
        return h - 1 - r, w - 1 - c
    return r, c


@kernel
def _add_orbit(sym, h, w, r, c, mask):
    mask[r, c] = 1
    mr, mc = _mirror(sym, h, w, r, c)
    mask[mr, mc] = 1


@kernel
def _plant_seed(sym, h, w, state, mask):
    """Seed cells that are invariant under ``sym`` and 4-connected (so growth keeps symmetry and
    connectivity): a cell on the axis, or the central block for point symmetry."""
    if sym == _SYM_NONE:
        _add_orbit(sym, h, w, below(state, h), below(state, w), mask)
    elif sym == _SYM_V:
        r = below(state, h)
        _add_orbit(sym, h, w, r, (w - 1) // 2, mask)
    elif sym == _SYM_H:
        c = below(state, w)
        _add_orbit(sym, h, w, (h - 1) // 2, c, mask)
    elif sym == _SYM_DIAG:
        i = below(state, h)
        mask[i, i] = 1
    elif sym == _SYM_ANTI:
        i = below(state, h)
        mask[i, w - 1 - i] = 1
    else:
        for r in range((h - 1) // 2, h // 2 + 1):
            for c in range((w - 1) // 2, w // 2 + 1):
                mask[r, c] = 1


@kernel
def _reach(conn, radius, h, w, mask, reach):
    """Mark in ``reach`` the background cells a mask cell reaches: 1 for neighbours (the cross
    for 4-connected growth, the 3x3 square otherwise), 2 for the farther cells of the
    ``distance`` disk of ``radius`` (jumps that may leave the shape disconnected)."""
    reach[:, :] = 0
    for r in range(h):
        for c in range(w):
            if not mask[r, c]:
                continue
            for rr in range(max(r - radius, 0), min(r + radius + 1, h)):
                for cc in range(max(c - radius, 0), min(c + radius + 1, w)):
                    dr, dc = abs(rr - r), abs(cc - c)
                    if max(dr, dc) <= 1 and (conn != _CONN4 or dr + dc <= 1):
                        reach[rr, cc] = 1
                    elif conn == _DISTANCE and dr * dr + dc * dc <= radius * radius and reach[rr, cc] == 0:
                        reach[rr, cc] = 2


@kernel
def _spans_box(h, w, mask):
    """True when the mask touches all four sides of the h x w box."""
    top = bottom = left = right = False
    for c in range(w):
        top = top or mask[0, c] != 0
        bottom = bottom or mask[h - 1, c] != 0
    for r in range(h):
        left = left or mask[r, 0] != 0
        right = right or mask[r, w - 1] != 0
    return top and bottom and left and right


@kernel
def _grow(conn, sym, h, w, state, mask):
    """Grow a shape from a seed until its box spans h x w. Each round, every background cell the
    structuring element reaches that has not been tried yet is tried once: it joins with
    probability p (drawn per shape in 4/16..11/16), together with its mirror image under ``sym``.
    When a round has nothing new to try (the growth died out), every cell may be tried again.
    Trying each cell once per wave gives sparse, branching shapes like the reference's (more
    holes and diagonal-only links than retrying every round). ``distance`` growth favours
    jumps: its neighbours join with p/2 and its farther cells with p."""
    threshold = (_P_SIXTEENTHS + below(state, 8)) << 28
    near = threshold >> 1 if conn == _DISTANCE else threshold
    radius = 1 if conn != _DISTANCE else 2 + below(state, 2)
    reach = np.zeros((h, w), np.uint8)
    tried = np.zeros((h, w), np.uint8)
    _plant_seed(sym, h, w, state, mask)
    for _ in range(_MAX_ROUNDS):
        if _spans_box(h, w, mask):
            break
        _reach(conn, radius, h, w, mask, reach)
        fresh = False
        for r in range(h):
            for c in range(w):
                if reach[r, c] and not mask[r, c] and not tried[r, c]:
                    fresh = True
                    _add_orbit(sym, h, w, r, c, tried)
                    if next32(state) < (near if reach[r, c] == 1 else threshold):
                        _add_orbit(sym, h, w, r, c, mask)
        if not fresh:
            tried[:, :] = 0


# ----------------------------------------------------------------------------- colour patterns


@kernel
def _palette(k, first, state):
    """``k`` distinct colours in 1..9 (partial Fisher-Yates shuffle), ``first`` leading if set."""
    colors = np.arange(1, 10)
    start = 0
    if first > 0:
        colors[0], colors[first - 1] = colors[first - 1], colors[0]
        start = 1
    for i in range(start, k):
        j = i + below(state, 9 - i)
        colors[i], colors[j] = colors[j], colors[i]
    return colors[:k]


@kernel
def _stripe_index(pattern, sym, r, c, split, k):
    """Which of the pattern's colours cell (r, c) takes (random pattern excluded)."""
    if pattern == _ROW_STRIPES:
        return r % 2
    if pattern == _COL_STRIPES:
        return c % 2
    if pattern == _DIAG_STRIPES:
        if sym == _SYM_ANTI or (sym != _SYM_DIAG and split == 1):
            return (r - c + k * MAX_SIDE) % k
        return (r + c) % k
    if pattern == _TOP_BOTTOM:
        return 0 if r < split else 1
    if pattern == _LEFT_RIGHT:
        return 0 if c < split else 1
    return 0


@kernel
def _paint(pattern, sym, first, h, w, state, mask, grid):
    """Colour the mask into ``grid`` with ``pattern``. Random colours are drawn per cell, so they
    usually break a shape's symmetry once colours count (as in the reference's bank)."""
    k = 2
    if pattern == _UNIFORM:
        k = 1
    elif pattern == _DIAG_STRIPES:
        k = 2 + below(state, 2)
    elif pattern == _RANDOM:
        k = 2 + below(state, 8)
    colors = _palette(k, first, state)
    split = 0
    if pattern == _TOP_BOTTOM:
        split = (h + below(state, 2)) // 2
    elif pattern == _LEFT_RIGHT:
        split = (w + below(state, 2)) // 2
    elif pattern == _DIAG_STRIPES:
        split = below(state, 2)
    for r in range(h):
        for c in range(w):
            if not mask[r, c]:
                grid[r, c] = 0
            elif pattern == _RANDOM:
                grid[r, c] = colors[below(state, k)]
            else:
                grid[r, c] = colors[_stripe_index(pattern, sym, r, c, split, k)]


# ------------------------------------------------------------------------------------- drivers


@kernel
def _tight_copy(h, w, grid, out):
    """Copy the tight box of ``grid``'s non-zero cells to the top-left of ``out``."""
    r0, r1, c0, c1 = h, -1, w, -1
    for r in range(h):
        for c in range(w):
            if grid[r, c]:
                r0, r1, c0, c1 = min(r0, r), max(r1, r), min(c0, c), max(c1, c)
    if r1 < 0:
        return 0, 0
    for r in range(r0, r1 + 1):
        for c in range(c0, c1 + 1):
            out[r - r0, c - c0] = grid[r, c]
    return r1 - r0 + 1, c1 - c0 + 1


@kernel
def _make_object(recipe, out):
    """Build one object from its recipe into ``out`` (15x15); returns its (rows, cols)."""
    h, w = recipe[_ROWS], recipe[_COLS]
    state = _seed_state(recipe[_SEED])
    mask = np.zeros((h, w), np.uint8)
    grid = np.zeros((h, w), np.int8)
    sym = _SYM_NONE
    if recipe[_FAMILY] == _FOOTPRINT:
        _footprint(recipe[_KIND], h, w, mask)
        if recipe[_OUTLINE] and not _outline(h, w, mask):
            return 0, 0
    else:
        sym = recipe[_SYMMETRY]
        _grow(recipe[_KIND], sym, h, w, state, mask)
    _paint(recipe[_PATTERN], sym, recipe[_COLOR], h, w, state, mask, grid)
    return _tight_copy(h, w, grid, out)


@kernel
def generate(recipes):
    """:data:`Objects` for every recipe row: grids int8 (n, 15, 15), shapes int64 (n, 2)."""
    n = recipes.shape[0]
    grids = np.zeros((n, MAX_SIDE, MAX_SIDE), np.int8)
    shapes = np.zeros((n, 2), np.int64)
    for i in range(n):
        rows, cols = _make_object(recipes[i], grids[i])
        shapes[i, 0] = rows
        shapes[i, 1] = cols
    return Objects(grids=grids, shapes=shapes)
