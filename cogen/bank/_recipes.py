"""The bank's sweep: which objects the builder attempts, as a table of integer recipes.

The sweep follows paper appendix D.1 (footprints with hollow outlines, grown shapes with three
connectivities and six symmetries, seven colour patterns). It is a plain enumeration; all
randomness (growth, colours) happens in :mod:`cogen.bank._generate` from each recipe's seed.
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
_SMALL = 5          # boxes up to 5x5 get every uniform colour (they feed the experiment pools)

# Codes (indices into the vocabularies above) the enumeration needs by name.
_FOOTPRINT, _GROWN = (FAMILIES.index(name) for name in ("footprint", "grown"))
_RECTANGLE, _SQUARE, _DISK, _DIAMOND, _ELLIPSE = range(len(FOOTPRINTS))
_TRANSPOSES = (SYMMETRIES.index("diagonal"), SYMMETRIES.index("antidiagonal"))
_NO_SYMMETRY = SYMMETRIES.index("none")
_UNIFORM = COLOR_PATTERNS.index("uniform")
# Patterns that can keep a transpose symmetry with colours included.
_TRANSPOSE_PATTERNS = tuple(COLOR_PATTERNS.index(p) for p in ("uniform", "diagonal_stripes", "random"))


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
    """Each footprint, solid and (from 3x3 up) outlined, in uniform colour plus two other
    patterns taken in turn. Regular footprints (squares, disks, odd diamonds) and boxes up to
    5x5 come in all nine uniform colours; regular ones also in all six other patterns."""
    rows, turn = [], 0
    for kind, h, w in _footprint_masks():
        regular = h == w and (kind != _DIAMOND or h % 2 == 1)
        colors = range(1, 10) if regular or max(h, w) <= _SMALL else (0,)
        for outline in (0, 1) if min(h, w) >= 3 else (0,):
            rows += [(_FOOTPRINT, kind, _NO_SYMMETRY, outline, _UNIFORM, h, w, color) for color in colors]
            for _ in range(6 if regular else 2):
                turn += 1
                pattern = 1 + turn % (len(COLOR_PATTERNS) - 1)   # any pattern but uniform
                rows.append((_FOOTPRINT, kind, _NO_SYMMETRY, outline, pattern, h, w, 0))
    return rows


def _grown_attempts(h, w, symmetry):
    """How many grown shapes to attempt for one (connectivity, symmetry, size).

    The weights give the experiment pools the make-up of the reference bank's: among boxes up
    to 5x5 most objects are 4x4 to 5x5 or under 4x4, and 6x6 to 8x8 boxes are the commonest
    medium size (the G3/G5 test pools draw from them)."""
    small, large = min(h, w), max(h, w)
    if symmetry in _TRANSPOSES:          # transpose symmetries exist only on square boxes
        return 20 if small >= 3 else 8
    if large <= _SMALL:
        return 40 if small >= 4 else 5 if large >= 4 else 24
    if large <= 8:
        return 22 if small > _SMALL else 4
    return 5


def _grown_recipes():
    """Grown shapes for every connectivity, symmetry and box size; patterns taken in turn."""
    rows, turn = [], 0
    for kind in range(len(CONNECTIVITIES)):
        for symmetry in range(len(SYMMETRIES)):
            transpose = symmetry in _TRANSPOSES
            patterns = _TRANSPOSE_PATTERNS if transpose else range(len(COLOR_PATTERNS))
            for h, w in ((h, w) for h in _SIDES for w in _SIDES if h == w or not transpose):
                for _ in range(_grown_attempts(h, w, symmetry)):
                    turn += 1
                    rows.append((_GROWN, kind, symmetry, 0, patterns[turn % len(patterns)], h, w, 0))
    return rows


def sweep(seed: int = BANK_SEED) -> np.ndarray:
    """The recipe table: int64 array (n, len(RECIPE_COLUMNS)); row i's seed mixes ``seed`` and i."""
    rows = _footprint_recipes() + _grown_recipes()
    table = np.zeros((len(rows), len(RECIPE_COLUMNS)), np.int64)
    table[:, :-1] = rows
    table[:, -1] = (seed << 32) | np.arange(len(rows), dtype=np.int64)
    return table
