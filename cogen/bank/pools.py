"""Named object pools: the filters the reference experiments apply to the bank.

Each :class:`Pool` spells out one row of the "Pool sizes" table of the reference notes: the
experiment's compulsory properties plus the exclusions its transformations impose (fill needs a
hollow single-coloured object, crops at least 4 rows/cols, ``empty_inside_pixels`` a solid
connected object of at least 3x3 and 6 pixels). ``reference`` is the pool's size in the bank
regenerated with the reference's own script (22,520 objects), for comparison.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cogen.bank.bank import Bank

__all__ = ["POOLS", "SYMMETRIC_SINGLE_COLOUR", "Pool", "mirror_noop_share", "pool_sizes"]


@dataclass(frozen=True)
class Pool:
    """A named query on the bank, with the reference bank's count for the same query."""

    name: str
    description: str
    where: MappingProxyType
    reference: int


_FC = "is_shape_fully_connected"
_BASE = {"is_shape_less_than_6_rows": True, "is_shape_less_than_6_cols": True, _FC: True}
_SMALL_5 = {"is_shape_less_than_5_rows": True, "is_shape_less_than_5_cols": True, _FC: True}
_MEDIUM = {"is_shape_more_than_5_rows": True, "is_shape_less_than_9_rows": True,
           "is_shape_more_than_5_cols": True, "is_shape_less_than_9_cols": True, _FC: True}
_SIMPLE = {"is_shape_symmetric": True, "is_shape_evenly_colored": True, _FC: True}
_COMPLEX = {"is_shape_not_symmetric": True, "is_shape_not_evenly_colored": True, _FC: True}
_ABOVE_2 = {**_BASE, "is_shape_more_than_2_cell": True}

_TABLE = (
    ("base", "CompGen/EnvGen default {<6 rows, <6 cols, fully connected}", _BASE, 4506),
    ("fill", "base, compatible with fill (hollow, single colour)",
     {**_BASE, "is_shape_not_hollow": False, "is_shape_not_evenly_colored": False}, 149),
    ("crop_top_bottom", "base, compatible with crop_top/bottom_side (>= 4 rows)",
     {**_BASE, "is_shape_less_than_4_rows": False}, 2245),
    ("crop_contours", "base, compatible with crop_contours (>= 4 rows and cols)",
     {**_BASE, "is_shape_less_than_4_rows": False, "is_shape_less_than_4_cols": False}, 1910),
    ("empty_inside", "base, compatible with empty_inside_pixels (solid, >= 3x3, >= 6 pixels)",
     {**_BASE, "is_shape_hollow": False, "is_shape_not_fully_connected": False,
      "is_shape_less_than_3_rows": False, "is_shape_less_than_3_cols": False,
      "is_shape_less_than_6_cell": False}, 2158),
    ("g3_train", "G3 train {<5 rows, <5 cols, fully connected}", _SMALL_5, 3010),
    ("g3_test", "G3 test {6-8 rows, 6-8 cols, fully connected}", _MEDIUM, 2293),
    ("g4_train", "G4 train {symmetric, single colour, fully connected}", _SIMPLE, 3382),
    ("g4_test", "G4 test {not symmetric, multi-colour, fully connected}", _COMPLEX, 4788),
    ("g5_train", "G5 train {symmetric, single colour, <5 rows, <5 cols, fully connected}",
     {**_SIMPLE, **_SMALL_5}, 470),
    ("g5_test", "G5 test {not symmetric, multi-colour, 6-8 rows and cols, fully connected}",
     {**_COMPLEX, **_MEDIUM}, 1013),
    ("compgen_s1_s2", "compgen.py S1/S2 {base, >2 pixels, single colour, cross or rectangle}",
     {**_ABOVE_2, "is_shape_evenly_colored": True, "is_shape_cross_or_rectangle": True}, 90),
    ("compgen_basics", "compgen_basics {base, >2 pixels, single colour, not hollow}",
     {**_ABOVE_2, "is_shape_evenly_colored": True, "is_shape_not_hollow": True}, 606),
    ("additional_compgen", "additionnal_compgen {base, >2 pixels}", _ABOVE_2, 4334),
    ("gridsize", "compositionality_gridsize {<9 rows, <9 cols, fully connected}",
     {"is_shape_less_than_9_rows": True, "is_shape_less_than_9_cols": True, _FC: True}, 8602),
)

POOLS: MappingProxyType = MappingProxyType({
    name: Pool(name, description, MappingProxyType(dict(where)), reference)
    for name, description, where, reference in _TABLE
})
"""Every experiment pool by name, in the order of the reference's table."""


SYMMETRIC_SINGLE_COLOUR = MappingProxyType({**_SIMPLE, "rows": (1, 5), "cols": (1, 5)})
"""The in-domain objects of G4 and G5 (``split_specs/g4.yaml``, ``g5.yaml``): symmetric,
single-coloured, fully connected, at most 5x5."""


def mirror_noop_share(bank: Bank, ids) -> float:
    """Share of the objects ``ids`` that ``mirror_horizontal`` (an up-down flip) leaves unchanged."""
    unchanged = [(grid == grid[::-1]).all() for grid in (bank.object(int(i)) for i in ids)]
    return float(sum(unchanged)) / max(len(unchanged), 1)


def pool_sizes(bank: Bank) -> dict[str, int]:
    """How many objects of ``bank`` each pool holds."""
    return {name: len(bank.select(pool.where)) for name, pool in POOLS.items()}
