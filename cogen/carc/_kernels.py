"""Numba kernels of Compositional-ARC episodes: primitives, shapes, grammars, examples.

Everything that calls everything else lives in this one module (Numba's cache only notices edits
to a kernel's own file). The random numbers come from :mod:`cogen._rng`, whose digest this file
pins (``KERNELS_SHA256`` below; see :mod:`cogen.pins`).

An episode is a pure function of ``(stream, index, retry)``. Its first draws fix the *head*: the
transformation type and parameter variant of each indicator role (shape, colour, neighbour),
uniform and kept through every retry of the episode's grammar, so the triplet mix is exactly
uniform whatever the acceptance rates. The rest of the grammar (C, N, S) and the examples are
redrawn together until every block of examples can be filled.

Cells of an object are two int64 arrays (rows, cols) and a count; a set of cells of the 10x10
grid is also a 100-bit mask in two uint64 words (``hi`` holds cells 64..99), so "same shape",
"same cells" and "touches the indicator" are integer operations.
"""

from __future__ import annotations

import numpy as np

from cogen._jit import kernel
from cogen._rng import below, sample_state

KERNELS_SHA256 = "4ffd1e884a260f01d63d1a187db4ab9a6b22210f37e4a6881a605b96b606cc5d"

SIDE = 10
#: Cells an object may hold: a 9-cell shape doubled by one extension, with room to spare.
CAP = 32
TRANSLATION, MIRROR, ROTATION, SET_COLOR, GROW = range(5)
N_TYPES = 5
#: Example kinds (``cogen.carc.grammar.KINDS``): the six study kinds in the reference's order, then level 2.
LEVEL2 = 6
#: Which indicator roles (shape, colour, neighbour) each kind carries; its chain applies them in that order.
MARKS = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 0, 1], [0, 1, 1], [1, 1, 1]], np.int64)
#: The ten indicator-object shapes of the reference (``gen_indicator_shapes``), as (row, col) cells.
#: The reference writes the anti-diagonal pair as "1001"; here it is the same cells, normalised.
INDICATOR_SHAPES = np.array([
    [[0, 0], [-1, -1], [-1, -1], [-1, -1]],
    [[0, 0], [0, 1], [-1, -1], [-1, -1]],
    [[0, 0], [1, 0], [-1, -1], [-1, -1]],
    [[0, 1], [1, 0], [-1, -1], [-1, -1]],
    [[0, 0], [1, 1], [-1, -1], [-1, -1]],
    [[0, 1], [1, 0], [1, 1], [-1, -1]],
    [[0, 0], [0, 1], [1, 0], [-1, -1]],
    [[0, 0], [1, 0], [1, 1], [-1, -1]],
    [[0, 0], [0, 1], [1, 1], [-1, -1]],
    [[0, 0], [0, 1], [1, 0], [1, 1]],
], np.int64)
INDICATOR_SIZES = np.array([1, 2, 2, 2, 2, 3, 3, 3, 3, 4], np.int64)

# Layout of the int64 ``params`` vector.
(P_KEEP_DEGENERATE, P_PRIMITIVES, P_COMPOSITIONS, P_LEVEL2, P_MAX_GRAMMARS, P_MAX_DRAWS, P_MIN_SIZE,
 P_MAX_SIZE) = range(8)
N_PARAMS = 8
# Layout of the int64 grammar vector ``g``: (type, a, b) per role, then the indicators.
G_ROLES, G_COLOR, G_NCOLOR, G_NSHAPE, G_NROW, G_NCOL = 0, 9, 10, 11, 12, 13
G_SN, G_SH, G_SW, G_NFORBID, G_NFREE, G_FREE = 14, 15, 16, 17, 18, 19
G_SIZE = G_FREE + 9
# Layout of the uint64 ``masks`` vector: N's halo, S (normalised), N's cells, forbidden shapes.
M_HALO, M_SHAPE, M_NCELLS, M_FORBID = 0, 2, 4, 6
MAX_FORBID = 2
M_SIZE = M_FORBID + 2 * MAX_FORBID
# Per-episode metadata columns.
META_TYPES, META_VARIANTS, META_COLOR, META_NCOLOR, META_NSHAPE = 0, 3, 6, 7, 8
META_NROW, META_NCOL, META_GRAMMARS = 9, 10, 11
META_SIZE = 12
#: Grammar attempts by outcome: accepted, or the block that could not be filled.
CAUSES = ("accepted", "few_level2_positions", "shape_block", "color_block", "neighbor_block", "shape_color_block",
          "shape_neighbor_block", "color_neighbor_block", "shape_like_indicator")
SHAPE_LIKE_INDICATOR = 8

_ONE = np.uint64(1)


# ---------------------------------------------------------------- cell sets
@kernel
def _bit(r, c):
    """(hi, lo) words of the one-cell mask of (r, c)."""
    k = r * SIDE + c
    if k < 64:
        return np.uint64(0), _ONE << np.uint64(k)
    return _ONE << np.uint64(k - 64), np.uint64(0)


@kernel
def _has(hi, lo, r, c):
    """True when cell (r, c) is in the mask."""
    bit_hi, bit_lo = _bit(r, c)
    return (hi & bit_hi) | (lo & bit_lo) != np.uint64(0)


@kernel
def _cells_mask(rows, cols, n):
    """Mask of the ``n`` cells."""
    hi = np.uint64(0)
    lo = np.uint64(0)
    for i in range(n):
        bit_hi, bit_lo = _bit(rows[i], cols[i])
        hi |= bit_hi
        lo |= bit_lo
    return hi, lo


@kernel
def _mask(rows, cols, n, dr, dc):
    """Mask of the ``n`` cells shifted by (dr, dc) (all inside the grid)."""
    hi = np.uint64(0)
    lo = np.uint64(0)
    for i in range(n):
        bit_hi, bit_lo = _bit(rows[i] + dr, cols[i] + dc)
        hi |= bit_hi
        lo |= bit_lo
    return hi, lo


@kernel
def _box(rows, cols, n):
    """Bounding box (r0, r1, c0, c1) of the cells."""
    r0, r1, c0, c1 = rows[0], rows[0], cols[0], cols[0]
    for i in range(1, n):
        r0, r1 = min(r0, rows[i]), max(r1, rows[i])
        c0, c1 = min(c0, cols[i]), max(c1, cols[i])
    return r0, r1, c0, c1


@kernel
def _shape_mask(rows, cols, n):
    """Mask of the cells moved to the top-left corner: equal masks mean equal shapes."""
    r0, _, c0, _ = _box(rows, cols, n)
    return _mask(rows, cols, n, -r0, -c0)


@kernel
def _halo(hi, lo):
    """The cells within one king move of the mask (the cells an object may not occupy)."""
    out_hi = np.uint64(0)
    out_lo = np.uint64(0)
    for r in range(SIDE):
        for c in range(SIDE):
            if not _has(hi, lo, r, c):
                continue
            for dr in range(-1, 2):
                for dc in range(-1, 2):
                    if 0 <= r + dr < SIDE and 0 <= c + dc < SIDE:
                        bit_hi, bit_lo = _bit(r + dr, c + dc)
                        out_hi |= bit_hi
                        out_lo |= bit_lo
    return out_hi, out_lo


# ---------------------------------------------------------------- the five primitives
@kernel
def _grow(dr, dc, rows, cols, n, out_rows, out_cols):
    """Extension: the object plus its copy shifted by (dr, dc); -1 if the copy leaves the grid."""
    hi, lo = _cells_mask(rows, cols, n)
    for i in range(n):
        out_rows[i] = rows[i]
        out_cols[i] = cols[i]
    m = n
    for i in range(n):
        r, c = rows[i] + dr, cols[i] + dc
        if r < 0 or r >= SIDE or c < 0 or c >= SIDE:
            return -1
        if not _has(hi, lo, r, c):
            out_rows[m] = r
            out_cols[m] = c
            m += 1
    return m


@kernel
def _move(kind, a, b, rows, cols, n, out_rows, out_cols):
    """Translation (a, b) = (drow, dcol), mirror (a = 0 flips rows, 1 columns) or rotation
    (a = 0 clockwise, 1 counter-clockwise about the box's top-left cell); -1 when invalid."""
    r0, r1, c0, c1 = _box(rows, cols, n)
    for i in range(n):
        r, c = rows[i], cols[i]
        if kind == TRANSLATION:
            r, c = r + a, c + b
        elif kind == MIRROR:
            r, c = (r1 - (r - r0), c) if a == 0 else (r, c1 - (c - c0))
        else:
            r, c = (r0 + (c - c0), c0 - (r - r0)) if a == 0 else (r0 - (c - c0), c0 + (r - r0))
        if r < 0 or r >= SIDE or c < 0 or c >= SIDE:
            return -1
        out_rows[i] = r
        out_cols[i] = c
    if kind != TRANSLATION:  # the reference rejects mirrors and rotations that change nothing
        in_hi, in_lo = _cells_mask(rows, cols, n)
        out_hi, out_lo = _cells_mask(out_rows, out_cols, n)
        if in_hi == out_hi and in_lo == out_lo:
            return -1
    return n


@kernel
def transform(kind, a, b, rows, cols, n, color, out_rows, out_cols):
    """Apply one primitive ``(kind, a, b)``; returns (count, colour), count -1 when invalid."""
    if kind == SET_COLOR:
        for i in range(n):
            out_rows[i] = rows[i]
            out_cols[i] = cols[i]
        return n, a
    if kind == GROW:
        return _grow(a, b, rows, cols, n, out_rows, out_cols), color
    return _move(kind, a, b, rows, cols, n, out_rows, out_cols), color


@kernel
def _run_chain(kind, g, rows, cols, n, color, keep, work):
    """Apply the roles ``kind`` marks, shape -> colour -> neighbour, to the object.

    The result is left in ``work[0]`` (rows) and ``work[1]`` (cols). Returns (count, colour);
    count -1 when a step is invalid, -2 when the example is degenerate and ``keep`` is 0 (a
    colour change to the current colour, or an output equal to the input).
    """
    for i in range(n):
        work[0, i] = rows[i]
        work[1, i] = cols[i]
    m, c, noop = n, color, False
    for role in range(3):
        if MARKS[kind, role] == 0:
            continue
        step = G_ROLES + 3 * role
        if g[step] == SET_COLOR and g[step + 1] == c:
            noop = True
        m, c = transform(g[step], g[step + 1], g[step + 2], work[0], work[1], m, c, work[2], work[3])
        if m < 0:
            return -1, c
        for i in range(m):
            work[0, i] = work[2, i]
            work[1, i] = work[3, i]
    if keep == 0:
        in_hi, in_lo = _cells_mask(rows, cols, n)
        out_hi, out_lo = _cells_mask(work[0], work[1], m)
        if noop or (c == color and in_hi == out_hi and in_lo == out_lo):
            return -2, c
    return m, c


# ---------------------------------------------------------------- shapes
@kernel
def _walk(rng, size, rows, cols):
    """The reference's random-walk shape: a uniform start cell, then at most ``4 * size`` uniform
    king moves inside the grid, keeping new cells; the walk may end short of ``size``."""
    side = np.int64(SIDE)  # an int64, not a literal: one compiled below serves every call
    r, c = below(rng, side), below(rng, side)
    rows[0], cols[0] = r, c
    hi, lo = _bit(r, c)
    n = 1
    moves = 0
    while n < size and moves < 4 * size:
        choices = (3 if 0 < r < SIDE - 1 else 2) * (3 if 0 < c < SIDE - 1 else 2) - 1
        pick = below(rng, choices)
        next_r, next_c = r, c
        for dr in range(-1, 2):
            for dc in range(-1, 2):
                if (dr != 0 or dc != 0) and 0 <= r + dr < SIDE and 0 <= c + dc < SIDE:
                    if pick == 0:
                        next_r, next_c = r + dr, c + dc
                    pick -= 1
        r, c = next_r, next_c
        moves += 1
        if not _has(hi, lo, r, c):
            bit_hi, bit_lo = _bit(r, c)
            hi |= bit_hi
            lo |= bit_lo
            rows[n], cols[n] = r, c
            n += 1
    return n


@kernel
def _shape_size(rng, params):
    """Requested size of a random shape: uniform in the spec's range."""
    return params[P_MIN_SIZE] + below(rng, params[P_MAX_SIZE] - params[P_MIN_SIZE] + 1)


@kernel
def _forbidden(g, masks, rows, cols, n):
    """True when the object's shape is one of the grammar's forbidden shapes (S, and others)."""
    hi, lo = _shape_mask(rows, cols, n)
    for f in range(g[G_NFORBID]):
        if masks[M_FORBID + 2 * f] == hi and masks[M_FORBID + 2 * f + 1] == lo:
            return True
    return False


@kernel
def _place_shape(r, c, g, s_cells, rows, cols):
    """Put S with its top-left corner at (r, c); returns its cell count."""
    for i in range(g[G_SN]):
        rows[i] = s_cells[0, i] + r
        cols[i] = s_cells[1, i] + c
    return g[G_SN]


# ---------------------------------------------------------------- grammars
@kernel
def draw_head(rng, type_start, head):
    """Types (three distinct of five) and parameter variants of the shape, colour and neighbour roles."""
    taken = 0
    for role in range(3):
        pick = below(rng, N_TYPES - role)
        for kind in range(N_TYPES):
            if taken & (1 << kind) == 0:
                if pick == 0:
                    head[role] = kind
                    taken |= 1 << kind
                    break
                pick -= 1
    for role in range(3):
        kind = head[role]
        head[3 + role] = type_start[kind] + below(rng, type_start[kind + 1] - type_start[kind])


@kernel
def _pick_color(rng, excluded):
    """Uniform colour in 1..9 outside the bit set ``excluded``."""
    count = np.int64(0)
    for color in range(1, 10):
        if (excluded >> color) & 1 == 0:
            count += 1
    pick = below(rng, count)
    for color in range(1, 10):
        if (excluded >> color) & 1 == 0:
            if pick == 0:
                return color
            pick -= 1
    return 0


@kernel
def _draw_shape(rng, g, masks, params, s_cells, obj):
    """S: a random-walk shape of uniform requested size, redrawn until it differs from N's shape.
    False when 100 draws all gave N's shape (only possible with tiny ``shape_size`` ranges)."""
    n_hi, n_lo = masks[M_NCELLS], masks[M_NCELLS + 1]
    for _ in range(100):
        n = _walk(rng, _shape_size(rng, params), obj[0], obj[1])
        hi, lo = _shape_mask(obj[0], obj[1], n)
        if hi != n_hi or lo != n_lo:
            r0, r1, c0, c1 = _box(obj[0], obj[1], n)
            for i in range(n):
                s_cells[0, i] = obj[0, i] - r0
                s_cells[1, i] = obj[1, i] - c0
            g[G_SN], g[G_SH], g[G_SW] = n, r1 - r0 + 1, c1 - c0 + 1
            masks[M_SHAPE], masks[M_SHAPE + 1] = hi, lo
            masks[M_FORBID], masks[M_FORBID + 1] = hi, lo
            g[G_NFORBID] = 1
            return True
    return False


@kernel
def _draw_indicators(rng, g, masks, keep):
    """C (avoiding colour-change targets unless degenerate examples are kept), N's colour and shape."""
    excluded = np.int64(0)
    for role in range(3):
        if g[G_ROLES + 3 * role] == SET_COLOR and keep == 0:
            excluded |= 1 << g[G_ROLES + 3 * role + 1]
    g[G_COLOR] = _pick_color(rng, excluded)
    g[G_NCOLOR] = _pick_color(rng, 1 << g[G_COLOR])
    g[G_NSHAPE] = below(rng, np.int64(INDICATOR_SHAPES.shape[0]))
    hi, lo = np.uint64(0), np.uint64(0)
    for i in range(INDICATOR_SIZES[g[G_NSHAPE]]):
        bit_hi, bit_lo = _bit(INDICATOR_SHAPES[g[G_NSHAPE], i, 0], INDICATOR_SHAPES[g[G_NSHAPE], i, 1])
        hi |= bit_hi
        lo |= bit_lo
    masks[M_NCELLS], masks[M_NCELLS + 1] = hi, lo  # normalised until placed


@kernel
def _place_indicator(rng, g, masks):
    """N at a uniform position where it fits; sets its cells, its halo and the free colours."""
    shape = g[G_NSHAPE]
    height, width = 1, 1
    for i in range(INDICATOR_SIZES[shape]):
        height = max(height, INDICATOR_SHAPES[shape, i, 0] + 1)
        width = max(width, INDICATOR_SHAPES[shape, i, 1] + 1)
    g[G_NROW], g[G_NCOL] = below(rng, SIDE - height + 1), below(rng, SIDE - width + 1)
    hi, lo = np.uint64(0), np.uint64(0)
    for i in range(INDICATOR_SIZES[shape]):
        bit_hi, bit_lo = _bit(INDICATOR_SHAPES[shape, i, 0] + g[G_NROW], INDICATOR_SHAPES[shape, i, 1] + g[G_NCOL])
        hi |= bit_hi
        lo |= bit_lo
    masks[M_NCELLS], masks[M_NCELLS + 1] = hi, lo
    masks[M_HALO], masks[M_HALO + 1] = _halo(hi, lo)
    g[G_NFREE] = 0
    for color in range(1, 10):
        if color != g[G_COLOR] and color != g[G_NCOLOR]:
            g[G_FREE + g[G_NFREE]] = color
            g[G_NFREE] += 1


@kernel
def _draw_grammar(rng, head, variants, params, g, s_cells, masks, obj):
    """One grammar for the episode's head: the roles' parameters, C, N (shape, colour, place) and S.
    False when no S different from N's shape could be drawn."""
    for role in range(3):
        for k in range(3):
            g[G_ROLES + 3 * role + k] = variants[head[3 + role], k]
    _draw_indicators(rng, g, masks, params[P_KEEP_DEGENERATE])
    if not _draw_shape(rng, g, masks, params, s_cells, obj):
        return False
    _place_indicator(rng, g, masks)
    return True


# ---------------------------------------------------------------- examples
@kernel
def _render(grid, rows, cols, n, color, g, masks, with_indicator):
    """Draw one grid: N (when present) and the object."""
    grid[:, :] = 0
    if with_indicator:
        hi, lo = masks[M_NCELLS], masks[M_NCELLS + 1]
        for r in range(SIDE):
            for c in range(SIDE):
                if _has(hi, lo, r, c):
                    grid[r, c] = g[G_NCOLOR]
    for i in range(n):
        grid[rows[i], cols[i]] = color


@kernel
def _touches(rows, cols, n, masks):
    """True when the cells touch or overlap N (diagonals included)."""
    hi, lo = _cells_mask(rows, cols, n)
    return (hi & masks[M_HALO]) | (lo & masks[M_HALO + 1]) != np.uint64(0)


@kernel
def _draw_object(rng, kind, g, s_cells, params, obj):
    """The main object of an example of ``kind``: (count, colour); count 0 for a forbidden shape."""
    color = g[G_COLOR] if MARKS[kind, 1] == 1 else g[G_FREE + below(rng, g[G_NFREE])]
    if MARKS[kind, 0] == 1:
        r, c = below(rng, SIDE - g[G_SH] + 1), below(rng, SIDE - g[G_SW] + 1)
        return _place_shape(r, c, g, s_cells, obj[0], obj[1]), color
    n = _walk(rng, _shape_size(rng, params), obj[0], obj[1])
    return n, color


@kernel
def _example(kind, n, color, g, masks, params, obj, work):
    """Check and transform a drawn object: (count, colour) of the output; count < 0 rejects it."""
    with_indicator = MARKS[kind, 2] == 1
    if with_indicator and _touches(obj[0], obj[1], n, masks):
        return -1, color
    m, out_color = _run_chain(kind, g, obj[0], obj[1], n, color, params[P_KEEP_DEGENERATE], work)
    if m < 0 or (with_indicator and _touches(work[0], work[1], m, masks)):
        return -1, out_color
    return m, out_color


@kernel
def _study_block(rng, kind, g, s_cells, masks, params, obj, work, grids, first, count):
    """Fill ``grids[first:first + count]`` with distinct examples of ``kind``; False when the
    block's draw budget runs out."""
    seen = np.zeros((count, 3), np.uint64)
    made = 0
    with_indicator = MARKS[kind, 2] == 1
    for _ in range(params[P_MAX_DRAWS]):
        if made == count:
            break
        n, color = _draw_object(rng, kind, g, s_cells, params, obj)
        if MARKS[kind, 0] == 0 and _forbidden(g, masks, obj[0], obj[1], n):
            continue
        m, out_color = _example(kind, n, color, g, masks, params, obj, work)
        if m < 0:
            continue
        hi, lo = _cells_mask(obj[0], obj[1], n)
        repeat = False
        for j in range(made):
            repeat |= seen[j, 0] == hi and seen[j, 1] == lo and seen[j, 2] == np.uint64(color)
        if repeat:
            continue
        seen[made, 0], seen[made, 1], seen[made, 2] = hi, lo, np.uint64(color)
        _render(grids[first + made, 0], obj[0], obj[1], n, color, g, masks, with_indicator)
        _render(grids[first + made, 1], work[0], work[1], m, out_color, g, masks, with_indicator)
        made += 1
    return made == count


@kernel
def _level2_block(rng, g, s_cells, masks, params, obj, work, grids, first):
    """Level-2 examples at distinct positions, drawn without replacement from every valid one;
    False when there are fewer valid positions than examples."""
    positions = np.empty(SIDE * SIDE, np.int64)
    found = 0
    level2 = np.int64(LEVEL2)  # not a literal, so _example and _run_chain compile once
    with_indicator = MARKS[level2, 2] == 1
    for r in range(SIDE - g[G_SH] + 1):
        for c in range(SIDE - g[G_SW] + 1):
            n = _place_shape(r, c, g, s_cells, obj[0], obj[1])
            if _example(level2, n, g[G_COLOR], g, masks, params, obj, work)[0] >= 0:
                positions[found] = r * SIDE + c
                found += 1
    need = params[P_LEVEL2]
    if found < need:
        return False
    for i in range(need):
        j = i + below(rng, found - i)
        positions[i], positions[j] = positions[j], positions[i]
        n = _place_shape(positions[i] // SIDE, positions[i] % SIDE, g, s_cells, obj[0], obj[1])
        m, out_color = _example(level2, n, g[G_COLOR], g, masks, params, obj, work)
        _render(grids[first + i, 0], obj[0], obj[1], n, g[G_COLOR], g, masks, with_indicator)
        _render(grids[first + i, 1], work[0], work[1], m, out_color, g, masks, with_indicator)
    return True


@kernel
def fill_episode(rng, g, s_cells, masks, params, grids):
    """All examples of one grammar: level-2 first (the block most likely to fail), then the six
    study kinds. Returns 0, or the index in ``CAUSES`` of the block that could not be filled."""
    obj = np.zeros((2, CAP), np.int64)
    work = np.zeros((4, CAP), np.int64)
    primitives, compositions = params[P_PRIMITIVES], params[P_COMPOSITIONS]
    if not _level2_block(rng, g, s_cells, masks, params, obj, work, grids, 3 * (primitives + compositions)):
        return 1
    for kind in range(6):
        count = primitives if kind < 3 else compositions
        first = kind * primitives if kind < 3 else 3 * primitives + (kind - 3) * compositions
        if not _study_block(rng, kind, g, s_cells, masks, params, obj, work, grids, first, count):
            return 2 + kind
    return 0


# ---------------------------------------------------------------- batches
@kernel
def _record(head, g, masks, meta, shapes, keys):
    """Store an episode's metadata, S and N masks, and its exact 128-bit grammar key."""
    for k in range(6):
        meta[META_TYPES + k] = head[k]
    meta[META_COLOR], meta[META_NCOLOR], meta[META_NSHAPE] = g[G_COLOR], g[G_NCOLOR], g[G_NSHAPE]
    meta[META_NROW], meta[META_NCOL] = g[G_NROW], g[G_NCOL]
    for k in range(4):
        shapes[k] = masks[M_SHAPE + k]
    # S lies inside a 9x9 box, so its cells 64..99 need 25 bits: the key is exact, not a hash.
    key = np.uint64(head[3]) | np.uint64(head[4]) << np.uint64(6) | np.uint64(head[5]) << np.uint64(12)
    key |= np.uint64(g[G_COLOR]) << np.uint64(18) | np.uint64(g[G_NCOLOR]) << np.uint64(22)
    key |= np.uint64(g[G_NSHAPE]) << np.uint64(26) | masks[M_SHAPE] << np.uint64(30)
    keys[0], keys[1] = key, masks[M_SHAPE + 1]


@kernel
def generate(stream, indices, retries, variants, type_start, params):
    """Episodes ``indices`` (with their retry numbers) of a stream.

    Returns ``ok``, ``grids`` (episode, example, input/output, 10, 10), ``meta`` (see ``META_*``),
    ``shapes`` (S's normalised mask and N's mask, two words each), ``keys`` and ``causes``
    (grammar attempts by outcome).
    """
    n = indices.shape[0]
    examples = 3 * (params[P_PRIMITIVES] + params[P_COMPOSITIONS]) + params[P_LEVEL2]
    ok = np.zeros(n, np.bool_)
    grids = np.zeros((n, examples, 2, SIDE, SIDE), np.int8)
    meta = np.zeros((n, META_SIZE), np.int64)
    shapes = np.zeros((n, 4), np.uint64)
    keys = np.zeros((n, 2), np.uint64)
    causes = np.zeros((n, len(CAUSES)), np.int64)
    g = np.zeros(G_SIZE, np.int64)
    masks = np.zeros(M_SIZE, np.uint64)
    s_cells = np.zeros((2, CAP), np.int64)
    obj = np.zeros((2, CAP), np.int64)
    head = np.zeros(6, np.int64)
    rng = np.zeros(1, np.uint64)
    for i in range(n):
        rng[0] = sample_state(stream, indices[i], retries[i])
        draw_head(rng, type_start, head)
        for _ in range(params[P_MAX_GRAMMARS]):
            cause = SHAPE_LIKE_INDICATOR
            if _draw_grammar(rng, head, variants, params, g, s_cells, masks, obj):
                cause = fill_episode(rng, g, s_cells, masks, params, grids[i])
            causes[i, cause] += 1
            if cause == 0:
                ok[i] = True
                break
        _record(head, g, masks, meta[i], shapes[i], keys[i])
        meta[i, META_GRAMMARS] = causes[i].sum()
    return ok, grids, meta, shapes, keys, causes


@kernel
def heads(stream, indices, retries, type_start):
    """The heads (role types, then role variants) of episodes ``indices``, without generating them."""
    out = np.zeros((indices.shape[0], 6), np.int64)
    rng = np.zeros(1, np.uint64)
    for i in range(indices.shape[0]):
        rng[0] = sample_state(stream, indices[i], retries[i])
        draw_head(rng, type_start, out[i])
    return out


@kernel
def generate_fixed(stream, grammars, s_cells, masks, params):
    """Episodes of fixed grammars (the static variant): episode ``i`` uses ``grammars[i]``,
    ``s_cells[i]`` and ``masks[i]`` and only redraws its examples."""
    n = grammars.shape[0]
    examples = 3 * (params[P_PRIMITIVES] + params[P_COMPOSITIONS]) + params[P_LEVEL2]
    ok = np.zeros(n, np.bool_)
    grids = np.zeros((n, examples, 2, SIDE, SIDE), np.int8)
    causes = np.zeros((n, len(CAUSES)), np.int64)
    rng = np.zeros(1, np.uint64)
    for i in range(n):
        rng[0] = sample_state(stream, i, 0)
        masks[i, M_HALO], masks[i, M_HALO + 1] = _halo(masks[i, M_NCELLS], masks[i, M_NCELLS + 1])
        for _ in range(params[P_MAX_GRAMMARS]):
            cause = fill_episode(rng, grammars[i], s_cells[i], masks[i], params, grids[i])
            causes[i, cause] += 1
            if cause == 0:
                ok[i] = True
                break
    return ok, grids, causes
