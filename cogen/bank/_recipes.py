"""The bank's sweep: which objects the builder attempts, as a table of integer recipes.

The sweep follows paper appendix D.1 (footprints with hollow outlines, grown shapes with three
connectivities and six symmetries, seven colour patterns). It is a plain enumeration; all
randomness (growth, colours) happens in :mod:`cogen.bank._generate` from each recipe's seed.

How many shapes of each kind the sweep attempts is set by the tables below, per box band: the
in-domain pools of the experiments use boxes up to 5x5, the size-shift pools 6x6 to 10x10. The
weights give those pools the object statistics of the reference generator's pools (the figures
of :mod:`cogen.bank.fidelity`; ``benchmarks/bank_fidelity.py`` prints both side by side): mostly
square boxes, about half of them with a mask equal to its transpose, rarely a shape whose only
symmetry is a 180-degree turn. They also keep the symmetric single-coloured pool (G4/G5 training) from
being mostly two-axis-symmetric footprints, which ``mirror_horizontal`` leaves unchanged.
"""

from __future__ import annotations

import numpy as np

FAMILIES = ("footprint", "grown")
FOOTPRINTS = ("rectangle", "square", "disk", "diamond", "ellipse")
CONNECTIVITIES = ("4-connected", "8-connected", "distance")
SYMMETRIES = ("horizontal", "vertical", "diagonal", "antidiagonal", "point", "none")
COLOR_PATTERNS = (
    "uniform", "row_stripes", "col_stripes", "diagonal_stripes", "top_bottom", "left_right", "random",
)
NOT_APPLICABLE = "n/a"

RECIPE_COLUMNS = ("family", "kind", "symmetry", "outline", "pattern", "rows", "cols", "color", "seed")

BANK_SEED = 20_250_523
MAX_SIDE = 15
_SIDES = range(1, MAX_SIDE + 1)
SMALL, MEDIUM = 5, 10   # longest box side of the "small" and "medium" bands; "large" is the rest

# Codes (indices into the vocabularies above) the enumeration needs by name.
_FOOTPRINT, _GROWN = (FAMILIES.index(name) for name in ("footprint", "grown"))
_RECTANGLE, _SQUARE, _DISK, _DIAMOND, _ELLIPSE = range(len(FOOTPRINTS))
_TRANSPOSES = (SYMMETRIES.index("diagonal"), SYMMETRIES.index("antidiagonal"))
_NO_SYMMETRY = SYMMETRIES.index("none")
_UNIFORM = COLOR_PATTERNS.index("uniform")

GROWN_ATTEMPTS = {
    # band -> symmetry -> attempts per connectivity for a (square box, oblong box); the transposes
    # exist only on square boxes. Small boxes: transpose symmetry (mostly the main diagonal) and no
    # symmetry dominate, as in the reference's small objects; mirror symmetry is mostly on oblong
    # boxes, and point symmetry rare.
    "small": {"horizontal": (2, 4), "vertical": (2, 4), "diagonal": (175, 0), "antidiagonal": (45, 0),
              "point": (2, 0), "none": (90, 10)},
    "medium": {"horizontal": (10, 2), "vertical": (10, 2), "diagonal": (45, 0), "antidiagonal": (15, 0),
               "point": (3, 1), "none": (35, 3)},
    "large": {"horizontal": (16, 8), "vertical": (16, 8), "diagonal": (20, 0), "antidiagonal": (20, 0),
              "point": (4, 2), "none": (4, 2)},
}
UNIFORM_ATTEMPTS = {
    # extra single-coloured grown shapes in small boxes, per connectivity, for the symmetric
    # single-colour pools: mostly transposes, so mirror symmetry (a no-op for a mirror) stays a minority
    "horizontal": (2, 0), "vertical": (3, 1), "diagonal": (22, 0), "antidiagonal": (20, 0),
}
SIDE_WEIGHT = {1: 1.0, 2: 0.6, 3: 1.2, 4: 0.9, 5: 1.1, 6: 1.3, 7: 1.1, 8: 1.0, 9: 0.9, 10: 0.8,
               11: 1.0, 12: 1.0, 13: 1.0, 14: 1.0, 15: 1.0}
"""Multiplies the attempts by the box's longer side: it shapes the height distribution of a band."""
CONNECTIVITY_WEIGHT = {"small": (1.0, 1.2, 1.2), "medium": (1.0, 1.4, 1.2), "large": (1.0, 1.2, 1.2)}
"""Multiplies the attempts by connectivity (4-connected, 8-connected, distance), per band."""

_TWO_COLOURS = ("row_stripes", "col_stripes", "top_bottom", "left_right")
_MIXED = ("uniform", *_TWO_COLOURS, "diagonal_stripes", "random", *_TWO_COLOURS, "random", *_TWO_COLOURS)
PATTERN_CYCLE = {band: tuple(COLOR_PATTERNS.index(name) for name in names)
                 for band, names in (("small", _MIXED), ("medium", _MIXED), ("large", COLOR_PATTERNS))}
"""Colour patterns grown shapes take in turn, per band (small and medium: two-colour patterns
three times as often, as the reference's objects of those sizes are mostly two-coloured)."""


def _band(h, w):
    side = max(h, w)
    return "small" if side <= SMALL else "medium" if side <= MEDIUM else "large"


def _attempts(per_box, h, w, kind):
    """Attempts for one (connectivity ``kind``, box h x w) from a (square, oblong) pair."""
    base = per_box[0] if h == w else per_box[1]
    return int(round(base * SIDE_WEIGHT[max(h, w)] * CONNECTIVITY_WEIGHT[_band(h, w)][kind]))


def _footprint_masks():
    """(footprint, rows, cols) of every footprint size the sweep tries (disks below 4x4 and
    ellipses or diamonds thinner than 3 would only repeat squares and rectangles)."""
    masks = [(_SQUARE, n, n) for n in _SIDES]
    masks += [(_RECTANGLE, h, w) for h in _SIDES for w in _SIDES if h != w]
    masks += [(_DISK, n, n) for n in _SIDES if n >= 4]
    masks += [(_ELLIPSE, h, w) for h in _SIDES for w in _SIDES if h != w and min(h, w) >= 3]
    masks += [(_DIAMOND, h, w) for h in _SIDES for w in _SIDES if min(h, w) >= 3]
    return masks


def _footprint_recipes():
    """Each footprint, solid and (from 3x3 up) outlined, in one uniform colour (all nine for
    regular footprints larger than 5x5: squares, disks, odd diamonds) plus two other patterns
    taken in turn (six for regular ones). Uniform colours go round 1..9."""
    rows, turn, hue = [], 0, 0
    for kind, h, w in _footprint_masks():
        regular = h == w and (kind != _DIAMOND or h % 2 == 1)
        colors = 9 if regular and max(h, w) > SMALL else 1
        for outline in (0, 1) if min(h, w) >= 3 else (0,):
            for _ in range(colors):
                hue += 1
                rows.append((_FOOTPRINT, kind, _NO_SYMMETRY, outline, _UNIFORM, h, w, 1 + hue % 9))
            for _ in range(6 if regular else 2):
                turn += 1
                pattern = 1 + turn % (len(COLOR_PATTERNS) - 1)   # any pattern but uniform
                rows.append((_FOOTPRINT, kind, _NO_SYMMETRY, outline, pattern, h, w, 0))
    return rows


def _boxes(symmetry, sides=_SIDES):
    """Every box (h, w) a shape of ``symmetry`` can fill (transposes need square boxes)."""
    return [(h, w) for h in sides for w in sides if h == w or symmetry not in _TRANSPOSES]


def _grown_recipes():
    """Grown shapes for every connectivity, symmetry and box size (:data:`GROWN_ATTEMPTS`), with
    the band's colour patterns taken in turn; then the extra uniform ones (:data:`UNIFORM_ATTEMPTS`)."""
    rows, turn = [], 0
    for kind in range(len(CONNECTIVITIES)):
        for symmetry, name in enumerate(SYMMETRIES):
            for h, w in _boxes(symmetry):
                cycle = PATTERN_CYCLE[_band(h, w)]
                for _ in range(_attempts(GROWN_ATTEMPTS[_band(h, w)][name], h, w, kind)):
                    turn += 1
                    rows.append((_GROWN, kind, symmetry, 0, cycle[turn % len(cycle)], h, w, 0))
    for kind in range(len(CONNECTIVITIES)):
        for name, per_box in UNIFORM_ATTEMPTS.items():
            symmetry = SYMMETRIES.index(name)
            for h, w in _boxes(symmetry, range(1, SMALL + 1)):
                rows += [(_GROWN, kind, symmetry, 0, _UNIFORM, h, w, 0)] * _attempts(per_box, h, w, kind)
    return rows


def sweep(seed: int = BANK_SEED) -> np.ndarray:
    """The recipe table: int64 array (n, len(RECIPE_COLUMNS)); row i's seed mixes ``seed`` and i."""
    rows = _footprint_recipes() + _grown_recipes()
    table = np.zeros((len(rows), len(RECIPE_COLUMNS)), np.int64)
    table[:, :-1] = rows
    table[:, -1] = (seed << 32) | np.arange(len(rows), dtype=np.int64)
    return table
