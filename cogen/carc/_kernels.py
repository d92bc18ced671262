"""Numba kernels of Compositional-ARC episodes: primitives, shapes, grammars, examples.

Everything that calls everything else lives in this one module (Numba's cache only notices edits
to a kernel's own file). The random numbers come from :mod:`cogen.rng`, whose digest this file
pins (``KERNELS_SHA256`` below; see :mod:`cogen.pins`).

An episode is a pure function of ``(stream, index, retry)``. Its first draws fix the *head*: the
transformation type and parameter variant of each indicator role (shape, colour, neighbour),
uniform and kept through every retry of the episode's grammar, so the triplet mix is exactly
uniform whatever the acceptance rates. The rest of the grammar (C, N, S) and the examples are
redrawn together until every block of examples can be filled.

Two switches in ``params`` give the two query modes of :mod:`cogen.carc.episodes`. With
``P_WEIGH_QUERIES`` a grammar is kept with exactly the probability that the public generator
would keep it, which draws its 14 queries' positions independently (within 500 draws) and restarts
unless they are all distinct (:func:`query_acceptance`); the kept grammar's level-2 examples are
then distinct valid positions in uniform order, as the reference's accepted draws are. With
``P_DISTINCT_STUDY`` no study example repeats within its block (the reference does not check).
The reference mode sets the first only, the distinct mode (cogen's first generator) the second.

Cells of an object are two int64 arrays (rows, cols) and a count; a set of cells of the 10x10
grid is also a 100-bit mask in two uint64 words (``hi`` holds cells 64..99), so "same shape",
"same cells" and "touches the indicator" are integer operations.

The vectors the kernels index (``params``, a grammar ``g``, its ``masks``, an episode's ``meta``) are
built and read by name in Python through :data:`PARAMS`, :data:`GRAMMAR`, :data:`MASKS` and
:data:`META` (see :mod:`cogen.slots`), and the batch kernels return namedtuples
(:data:`Episodes`, :data:`FixedEpisodes`).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from cogen.jit import kernel
from cogen.rng import below, next_u64, sample_state
from cogen.slots import Slots

KERNELS_SHA256 = "1640c33bdb183cd4a1537246a09f58d01be0ddef1b46ca12d5a7c43b32c1c4c8"

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
 P_MAX_SIZE, P_WEIGH_QUERIES, P_QUERY_DRAWS, P_DISTINCT_STUDY) = range(11)
P_SIZE = 11
# Layout of the int64 grammar vector ``g``: (type, a, b) per role, then the indicators.
G_ROLES, G_COLOR, G_NCOLOR, G_NSHAPE, G_NROW, G_NCOL = 0, 9, 10, 11, 12, 13
G_SN, G_SH, G_SW, G_NFORBID, G_NFREE, G_FREE = 14, 15, 16, 17, 18, 19
G_SIZE = G_FREE + 9
# Layout of the uint64 ``masks`` vector: N's halo, S (normalised), N's cells, forbidden shapes (two words each).
M_HALO, M_SHAPE, M_NCELLS, M_FORBID = 0, 2, 4, 6
MAX_FORBID = 2
M_SIZE = M_FORBID + 2 * MAX_FORBID
# Per-episode metadata columns.
META_TYPES, META_VARIANTS, META_COLOR, META_NCOLOR, META_NSHAPE = 0, 3, 6, 7, 8
META_NROW, META_NCOL, META_GRAMMARS = 9, 10, 11
META_SIZE = 12
#: The same layouts by name: ``PARAMS.pack(keep_degenerate=..., primitives=..., ...)`` builds a ``params``
#: vector (every slot needed), ``GRAMMAR.pack(roles=[...], color=...)`` a grammar, ``MASKS.pack(shape=(hi,
#: lo), ...)`` its masks, and ``META.unpack(meta)["color"]`` reads a metadata column.
PARAMS = Slots.of(globals(), "P_", P_SIZE, np.int64, complete=True)
GRAMMAR = Slots.of(globals(), "G_", G_SIZE, np.int64)
MASKS = Slots.of(globals(), "M_", M_SIZE, np.uint64)
META = Slots.of(globals(), "META_", META_SIZE, np.int64)
#: What :func:`generate` returns: per episode, its success, grids ``(example, input/output, 10, 10)``,
#: metadata (``META_*``), S's normalised mask and N's mask (two words each), its grammar key and the
#: grammar attempts by outcome (``CAUSES``).
Episodes = namedtuple("Episodes", ("ok", "grids", "meta", "shapes", "keys", "causes"))
#: What :func:`generate_fixed` returns (the same fields, for episodes of given grammars).
FixedEpisodes = namedtuple("FixedEpisodes", ("ok", "grids", "causes"))
#: What :func:`transform` returns: the object's cell count (-1: the primitive cannot apply) and colour.
Moved = namedtuple("Moved", ("count", "color"))
#: Grammar attempts by outcome: accepted, or the block that could not be filled.
#: ``reference_restart``: the reference would have restarted the episode (two of its i.i.d. query
#: positions coincided, or its draws ran out), decided with :func:`query_acceptance`.
CAUSES = ("accepted", "few_level2_positions", "shape_block", "color_block", "neighbor_block", "shape_color_block",
          "shape_neighbor_block", "color_neighbor_block", "shape_like_indicator", "reference_restart")
SHAPE_LIKE_INDICATOR = 8
REFERENCE_RESTART = 9

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
def _cells_halo(rows, cols, n):
    """The cells within one king move of the ``n`` cells (what :func:`_halo` gives for their mask)."""
    out_hi = np.uint64(0)
    out_lo = np.uint64(0)
    for i in range(n):
        for dr in range(-1, 2):
            for dc in range(-1, 2):
                r, c = rows[i] + dr, cols[i] + dc
                if 0 <= r < SIDE and 0 <= c < SIDE:
                    bit_hi, bit_lo = _bit(r, c)
                    out_hi |= bit_hi
                    out_lo |= bit_lo
    return out_hi, out_lo


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
    """Apply one primitive ``(kind, a, b)``; returns the :data:`Moved` object, count -1 when invalid."""
    if kind == SET_COLOR:
        for i in range(n):
            out_rows[i] = rows[i]
            out_cols[i] = cols[i]
        return Moved(count=n, color=a)
    if kind == GROW:
        return Moved(count=_grow(a, b, rows, cols, n, out_rows, out_cols), color=color)
    return Moved(count=_move(kind, a, b, rows, cols, n, out_rows, out_cols), color=color)


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
    rows = INDICATOR_SHAPES[shape, :, 0] + g[G_NROW]
    cols = INDICATOR_SHAPES[shape, :, 1] + g[G_NCOL]
    masks[M_NCELLS], masks[M_NCELLS + 1] = _cells_mask(rows, cols, INDICATOR_SIZES[shape])
    masks[M_HALO], masks[M_HALO + 1] = _cells_halo(rows, cols, INDICATOR_SIZES[shape])
    g[G_NFREE] = 0
    for color in range(1, 10):
        if color != g[G_COLOR] and color != g[G_NCOLOR]:
            g[G_FREE + g[G_NFREE]] = color
            g[G_NFREE] += 1


@kernel
def _draw_grammar(rng, head, variants, params, g, s_cells, masks, obj, accept):
    """One grammar for the episode's head: the roles' parameters, C, N (shape, colour, place) and S.

    Returns 0, ``SHAPE_LIKE_INDICATOR`` when no S different from N's shape could be drawn, or
    ``REFERENCE_RESTART`` when, with ``P_WEIGH_QUERIES``, the grammar's uniform draw ``accept[0]``
    already exceeds what the reference would accept with every position of S valid (the exact
    test, :func:`query_acceptance` of the valid positions, follows in :func:`_level2_block`)."""
    for role in range(3):
        for k in range(3):
            g[G_ROLES + 3 * role + k] = variants[head[3 + role], k]
    _draw_indicators(rng, g, masks, params[P_KEEP_DEGENERATE])
    if not _draw_shape(rng, g, masks, params, s_cells, obj):
        return SHAPE_LIKE_INDICATOR
    if params[P_WEIGH_QUERIES] == 1:
        accept[0] = _uniform(rng)
        total = (SIDE - g[G_SH] + 1) * (SIDE - g[G_SW] + 1)
        if accept[0] >= query_acceptance(total, total, params[P_QUERY_DRAWS], params[P_MAX_DRAWS]):
            return REFERENCE_RESTART
    _place_indicator(rng, g, masks)
    return 0


# ---------------------------------------------------------------- examples
@kernel
def _render(grid, rows, cols, n, color, g, with_indicator):
    """Draw one grid: N (when present: its indicator shape at its position) and the object."""
    grid[:, :] = 0
    if with_indicator:
        shape = g[G_NSHAPE]
        for i in range(INDICATOR_SIZES[shape]):
            grid[INDICATOR_SHAPES[shape, i, 0] + g[G_NROW], INDICATOR_SHAPES[shape, i, 1] + g[G_NCOL]] = g[G_NCOLOR]
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
    """Fill ``grids[first:first + count]`` with examples of ``kind`` (pairwise distinct with
    ``P_DISTINCT_STUDY``, independent draws otherwise); False when the block's draw budget runs out."""
    seen = np.zeros((count, 3), np.uint64)
    made = 0
    with_indicator = MARKS[kind, 2] == 1
    distinct = params[P_DISTINCT_STUDY] == 1
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
        if repeat and distinct:
            continue
        seen[made, 0], seen[made, 1], seen[made, 2] = hi, lo, np.uint64(color)
        _render(grids[first + made, 0], obj[0], obj[1], n, color, g, with_indicator)
        _render(grids[first + made, 1], work[0], work[1], m, out_color, g, with_indicator)
        made += 1
    return made == count


@kernel
def _uniform(rng):
    """Uniform float in [0, 1) with 53 random bits."""
    return np.float64(next_u64(rng) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@kernel
def _within_budget(p, draws, budget):
    """P(Binomial(budget, p) >= draws): ``draws`` valid positions found within ``budget`` i.i.d. draws
    that are each valid with probability ``p`` (the reference's ``tries > max_tries`` rule)."""
    if p >= 1.0:
        return 1.0 if budget >= draws else 0.0
    term = (1.0 - p) ** budget  # P(exactly j valid), j = 0, 1, ...
    fewer = 0.0
    for j in range(draws):
        fewer += term
        term *= (budget - j) / (j + 1) * p / (1.0 - p)
    return max(0.0, 1.0 - fewer)


@kernel
def query_acceptance(valid, total, draws, budget):
    """Probability that the reference keeps a grammar's query block: its object fits at ``total``
    positions, ``valid`` of them give a valid example; the reference draws positions uniformly
    until ``draws`` are valid (failing after ``budget`` draws) and restarts unless those ``draws``
    positions are pairwise distinct. The two events are independent: the product of
    P(``draws`` i.i.d. picks among ``valid`` are distinct) and P(Binomial(budget, valid/total) >= draws)."""
    if valid < draws or total <= 0:
        return 0.0
    distinct = 1.0
    for i in range(draws):
        distinct *= (valid - i) / valid
    return distinct * _within_budget(valid / total, draws, budget)


@kernel
def _shift(hi, lo, k):
    """The mask moved by ``k`` cell indices (``10 * rows + cols``; negative moves up or left). The
    caller makes sure no cell leaves the grid or wraps to another row."""
    if k > 0:
        if k >= 64:
            return lo << np.uint64(k - 64), np.uint64(0)
        return (hi << np.uint64(k)) | (lo >> np.uint64(64 - k)), lo << np.uint64(k)
    if k < 0:
        k = -k
        if k >= 64:
            return np.uint64(0), hi >> np.uint64(k - 64)
        return hi >> np.uint64(k), (lo >> np.uint64(k)) | (hi << np.uint64(64 - k))
    return hi, lo


@kernel
def _chain_reach(g, reach):
    """Rows and columns the level-2 chain's steps reach, S anchored at (0, 0): ``reach`` = (top,
    bottom, left, right) of the union of every step's box. The primitives move boxes the same way
    wherever the object is, so the chain stays on the grid exactly at the anchors (r, c) with
    ``r + top >= 0``, ``r + bottom < SIDE``, ``c + left >= 0`` and ``c + right < SIDE``."""
    r0, r1, c0, c1 = 0, g[G_SH] - 1, 0, g[G_SW] - 1
    reach[0], reach[1], reach[2], reach[3] = r0, r1, c0, c1
    for role in range(3):
        kind, a, b = g[G_ROLES + 3 * role], g[G_ROLES + 3 * role + 1], g[G_ROLES + 3 * role + 2]
        if kind == TRANSLATION:
            r0, r1, c0, c1 = r0 + a, r1 + a, c0 + b, c1 + b
        elif kind == ROTATION:  # about the box's top-left cell: clockwise swings left, counter-clockwise up
            height, width = r1 - r0 + 1, c1 - c0 + 1
            if a == 0:
                r0, r1, c0, c1 = r0, r0 + width - 1, c0 - height + 1, c0
            else:
                r0, r1, c0, c1 = r0 - width + 1, r0, c0, c0 + height - 1
        elif kind == GROW:
            r0, r1, c0, c1 = min(r0, r0 + a), max(r1, r1 + a), min(c0, c0 + b), max(c1, c1 + b)
        reach[0], reach[1] = min(reach[0], r0), max(reach[1], r1)
        reach[2], reach[3] = min(reach[2], c0), max(reach[3], c1)


@kernel
def level2_positions(g, s_cells, masks, params, obj, work, positions):
    """Every top-left cell (``r * SIDE + c``, row-major) where S makes a valid level-2 example:
    the chain stays on the grid and is valid there, and neither S nor the output touches N.
    Fills ``positions`` and returns their count.

    The primitives commute with moving the object, so the chain is run once, at the first anchor
    where it stays on the grid; every other anchor only moves the input and output masks and
    tests them against N's halo (what :func:`_example` would decide at each anchor)."""
    reach = np.zeros(4, np.int64)
    _chain_reach(g, reach)
    rows_lo, rows_hi = max(0, -reach[0]), min(SIDE - g[G_SH], SIDE - 1 - reach[1])
    cols_lo, cols_hi = max(0, -reach[2]), min(SIDE - g[G_SW], SIDE - 1 - reach[3])
    if rows_lo > rows_hi or cols_lo > cols_hi:
        return 0
    level2 = np.int64(LEVEL2)  # not a literal, so _run_chain compiles once
    n = _place_shape(rows_lo, cols_lo, g, s_cells, obj[0], obj[1])
    m, _ = _run_chain(level2, g, obj[0], obj[1], n, g[G_COLOR], params[P_KEEP_DEGENERATE], work)
    if m < 0:  # a mirror or rotation that changes nothing, or a degenerate chain: the same everywhere
        return 0
    out_hi, out_lo = _cells_mask(work[0], work[1], m)
    anchor = rows_lo * SIDE + cols_lo
    halo_hi, halo_lo = masks[M_HALO], masks[M_HALO + 1]
    found = 0
    for r in range(rows_lo, rows_hi + 1):
        for c in range(cols_lo, cols_hi + 1):
            in_hi, in_lo = _shift(masks[M_SHAPE], masks[M_SHAPE + 1], r * SIDE + c)
            moved_hi, moved_lo = _shift(out_hi, out_lo, r * SIDE + c - anchor)
            if (in_hi | moved_hi) & halo_hi | (in_lo | moved_lo) & halo_lo == np.uint64(0):
                positions[found] = r * SIDE + c
                found += 1
    return found


@kernel
def _level2_block(rng, g, s_cells, masks, params, obj, work, grids, first, accept):
    """Level-2 examples at distinct valid positions, drawn without replacement. Returns 0, 1 when
    there are fewer valid positions than examples, or ``REFERENCE_RESTART`` when, with
    ``P_WEIGH_QUERIES``, the grammar's uniform draw ``accept`` is at least the reference's
    probability of keeping it (:func:`query_acceptance`)."""
    positions = np.empty(SIDE * SIDE, np.int64)
    found = level2_positions(g, s_cells, masks, params, obj, work, positions)
    need = params[P_LEVEL2]
    if found < need:
        return 1
    total = (SIDE - g[G_SH] + 1) * (SIDE - g[G_SW] + 1)
    if params[P_WEIGH_QUERIES] == 1 and accept >= query_acceptance(found, total, params[P_QUERY_DRAWS],
                                                                     params[P_MAX_DRAWS]):
        return REFERENCE_RESTART
    level2 = np.int64(LEVEL2)
    with_indicator = MARKS[level2, 2] == 1
    for i in range(need):
        j = i + below(rng, found - i)
        positions[i], positions[j] = positions[j], positions[i]
        n = _place_shape(positions[i] // SIDE, positions[i] % SIDE, g, s_cells, obj[0], obj[1])
        m, out_color = _example(level2, n, g[G_COLOR], g, masks, params, obj, work)
        _render(grids[first + i, 0], obj[0], obj[1], n, g[G_COLOR], g, with_indicator)
        _render(grids[first + i, 1], work[0], work[1], m, out_color, g, with_indicator)
    return 0


@kernel
def fill_episode(rng, g, s_cells, masks, params, grids, accept):
    """All examples of one grammar: level-2 first (the block most likely to fail), then the six
    study kinds. Returns 0, or the index in ``CAUSES`` of why the grammar was turned down
    (``accept``: the grammar's uniform draw, see :func:`_level2_block`)."""
    obj = np.zeros((2, CAP), np.int64)
    work = np.zeros((4, CAP), np.int64)
    primitives, compositions = params[P_PRIMITIVES], params[P_COMPOSITIONS]
    cause = _level2_block(rng, g, s_cells, masks, params, obj, work, grids, 3 * (primitives + compositions), accept)
    if cause != 0:
        return cause
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
    """Episodes ``indices`` (with their retry numbers) of a stream, as :data:`Episodes`."""
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
    accept = np.zeros(1, np.float64)
    for i in range(n):
        rng[0] = sample_state(stream, indices[i], retries[i])
        draw_head(rng, type_start, head)
        for _ in range(params[P_MAX_GRAMMARS]):
            cause = _draw_grammar(rng, head, variants, params, g, s_cells, masks, obj, accept)
            if cause == 0:
                cause = fill_episode(rng, g, s_cells, masks, params, grids[i], accept[0])
            causes[i, cause] += 1
            if cause == 0:
                ok[i] = True
                break
        _record(head, g, masks, meta[i], shapes[i], keys[i])
        meta[i, META_GRAMMARS] = causes[i].sum()
    return Episodes(ok=ok, grids=grids, meta=meta, shapes=shapes, keys=keys, causes=causes)


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
    """Episodes of fixed grammars (the static variant), as :data:`FixedEpisodes`: episode ``i`` uses
    ``grammars[i]``, ``s_cells[i]`` and ``masks[i]`` and only redraws its examples. ``P_WEIGH_QUERIES`` is ignored:
    a fixed grammar's weight changes nothing, the reference's restarts only redraw its positions."""
    params = params.copy()
    params[P_WEIGH_QUERIES] = 0
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
            cause = fill_episode(rng, grammars[i], s_cells[i], masks[i], params, grids[i], 0.0)
            causes[i, cause] += 1
            if cause == 0:
                ok[i] = True
                break
    return FixedEpisodes(ok=ok, grids=grids, causes=causes)
