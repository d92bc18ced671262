"""The object properties: the reference's 73 boolean names, then cogen's own, each computed from
measured features.

:data:`PROPERTIES` is the one registry (name -> :class:`Property`). The first 73 names are the
reference's config strings so specs stay comparable; where a name is a misnomer the definition
says what it really tests (``is_shape_filled_square`` is "square box and one colour", holes
allowed). cogen adds the symmetries the reference lacks (``reference=False``): a 180-degree turn
and a truly asymmetric shape. All definitions are evaluated on the object's tight box; "mask"
means the non-zero cells.

:func:`property_columns` turns the feature table of :mod:`cogen.bank._features` into one boolean
array per property; :func:`object_properties` does the same for a single grid.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

__all__ = ["NUMERIC_COLUMNS", "PROPERTIES", "Property", "measure", "object_properties", "property_columns"]

NUMERIC_COLUMNS = ("rows", "cols", "pixels", "n_colors", "components")
"""Integer columns: box height and width, non-zero cells, distinct colours, 8-connected parts."""

Features = Mapping[str, np.ndarray]


@dataclass(frozen=True)
class Property:
    """One boolean object property: its name, what it tests, and how it is computed.

    ``reference`` is False for the properties cogen adds to the reference's 73."""

    name: str
    definition: str
    compute: Callable[[Features], np.ndarray]
    misnomer: bool = False
    reference: bool = True


def _symmetric(f: Features) -> np.ndarray:
    return (f["mirror_lr"] | f["mirror_ud"] | f["transpose"] | f["antitranspose"]).astype(bool)


def _asymmetric(f: Features) -> np.ndarray:
    return ~_symmetric(f) & (f["half_turn"] == 0)


def _simple(f: Features) -> np.ndarray:
    return _symmetric(f) & (f["n_colors"] == 1) & (f["pixels"] > 2) & (f["components"] == 1)


def _rectangular(f: Features) -> np.ndarray:
    return f["pixels"] == f["rows"] * f["cols"]


def _records() -> list[Property]:
    """All properties, grouped as in the reference's documentation."""
    P = Property
    records = [
        P("is_shape_vertically_symmetric", "mask unchanged by a left-right flip (colours ignored)",
          lambda f: f["mirror_lr"] == 1),
        P("is_shape_horizontally_symmetric", "mask unchanged by an up-down flip (colours ignored)",
          lambda f: f["mirror_ud"] == 1),
        P("is_shape_horizontally_or_vertically_symmetric", "either mirror symmetry of the mask",
          lambda f: (f["mirror_lr"] | f["mirror_ud"]) == 1),
        P("is_shape_diagonally_symmetric", "square box and array equal to its transpose (colours included)",
          lambda f: f["transpose"] == 1),
        P("is_shape_antidiagonally_symmetric",
          "square box and array equal to its anti-transpose (colours included)",
          lambda f: f["antitranspose"] == 1),
        P("is_shape_diagonally_or_antidiagonally_symmetric", "either transpose symmetry",
          lambda f: (f["transpose"] | f["antitranspose"]) == 1),
        P("is_shape_symmetric", "any of the four symmetries above (no rotational symmetry test)", _symmetric),
        P("is_shape_not_symmetric", "none of the four symmetries above", lambda f: ~_symmetric(f)),
        P("is_shape_evenly_colored", "exactly one distinct colour", lambda f: f["n_colors"] == 1),
        P("is_shape_not_evenly_colored", "more than one distinct colour", lambda f: f["n_colors"] > 1),
        P("is_shape_of_2_colors", "exactly 2 distinct colours", lambda f: f["n_colors"] == 2),
        P("is_shape_of_3_colors", "exactly 3 distinct colours", lambda f: f["n_colors"] == 3),
        P("is_shape_more_than_3_colors", "more than 3 distinct colours", lambda f: f["n_colors"] > 3),
        P("is_shape_hollow", "filling holes changes the mask: some background cell of the box cannot reach "
          "the box border through 4-connected background", lambda f: f["hollow"] == 1),
        P("is_shape_not_hollow", "no hole (see is_shape_hollow)", lambda f: f["hollow"] == 0),
        P("is_shape_fully_connected", "the mask is exactly one 8-connected component",
          lambda f: f["components"] == 1),
        P("is_shape_not_fully_connected", "the mask has several 8-connected components",
          lambda f: f["components"] != 1),
        P("is_shape_simple", "symmetric, one colour, more than 2 pixels and fully connected", _simple),
        P("is_shape_not_simple", "not is_shape_simple", lambda f: ~_simple(f)),
        P("is_shape_line", "box height 1 or width 1 (gaps allowed; a 1x1 object counts)",
          lambda f: (f["rows"] == 1) | (f["cols"] == 1), True),
        P("is_shape_vertical_line", "box width 1 (gaps allowed)", lambda f: f["cols"] == 1, True),
        P("is_shape_horizontal_line", "box height 1 (gaps allowed)", lambda f: f["rows"] == 1, True),
        P("is_shape_diagonal_line", "non-zero exactly on the main diagonal cells (i, i) of the box",
          lambda f: f["diagonal_line"] == 1),
        P("is_shape_anti_diagonal_line", "non-zero exactly on the cells (i, rows-1-i) of the box",
          lambda f: f["antidiagonal_line"] == 1),
        P("is_shape_diagonal_or_antidiagonal_line", "either diagonal line",
          lambda f: (f["diagonal_line"] | f["antidiagonal_line"]) == 1),
        P("is_shape_filled_square", "square box and one colour (holes allowed: not 'filled')",
          lambda f: (f["rows"] == f["cols"]) & (f["n_colors"] == 1), True),
        P("is_shape_filled_rectangle", "non-square box and one colour (holes allowed: not 'filled')",
          lambda f: (f["rows"] != f["cols"]) & (f["n_colors"] == 1), True),
        P("is_shape_rectangular", "every cell of the box is non-zero", _rectangular),
        P("is_shape_rectangular_not_square", "every cell of the box is non-zero and rows != cols",
          lambda f: _rectangular(f) & (f["rows"] != f["cols"])),
        P("is_shape_cross", "box at least 3x3 holding exactly one full row and one full column and no "
          "other pixel (plus, T and L shapes all qualify)", lambda f: f["cross"] == 1, True),
        P("is_shape_diamond", "odd square box of side 2r+1 whose row i is the centred run of "
          "2(r-|i-r|)+1 pixels (mask = |i-r|+|j-r| <= r)", lambda f: f["diamond"] == 1),
        P("is_shape_cross_or_rectangle", "is_shape_cross or is_shape_rectangular",
          lambda f: (f["cross"] == 1) | _rectangular(f)),
        P("is_shape_cross_or_rectangle_or_diamond", "is_shape_cross_or_rectangle or is_shape_diamond",
          lambda f: (f["cross"] == 1) | _rectangular(f) | (f["diamond"] == 1)),
        P("is_shape_higher_than_wide", "rows > cols", lambda f: f["rows"] > f["cols"]),
        P("is_shape_wider_than_high", "rows < cols", lambda f: f["rows"] < f["cols"]),
        P("is_shape_same_height_width", "rows == cols", lambda f: f["rows"] == f["cols"]),
        P("is_shape_not_same_height_width", "rows != cols", lambda f: f["rows"] != f["cols"]),
    ]
    return records + _size_records() + _cogen_records()


def _cogen_records() -> list[Property]:
    """cogen's own symmetry properties, for the asymmetric out-of-domain pools of G4 and G5.

    Mirror and 180-degree symmetry are tested on the mask, because a shape whose mask is symmetric
    stays the same shape under the move: ``mirror_horizontal`` and ``mirror_vertical`` give the
    same footprint (and the same grid when the colours are symmetric too), so the out-of-domain
    objects would not be the "asymmetric" ones the paper names. The transposes keep the reference's
    colours-included test, which no G4/G5 transformation makes a no-op of.
    """
    P = Property
    return [
        P("is_shape_point_symmetric", "mask unchanged by a 180-degree turn (colours ignored); two-axis mirror "
          "symmetry implies it", lambda f: f["half_turn"] == 1, reference=False),
        P("is_shape_asymmetric", "none of the symmetries: no mirror symmetry of the mask (either axis), no "
          "transpose symmetry of the array (either diagonal, colours included, as in is_shape_symmetric), "
          "and the mask changes under a 180-degree turn; so mirror_horizontal, mirror_vertical and a "
          "180-degree turn all change the object, and give three different masks",
          _asymmetric, reference=False),
    ]


def _threshold(column: str, op: str, k: int) -> Callable[[Features], np.ndarray]:
    if op == "==":
        return lambda f: f[column] == k
    if op == "<":
        return lambda f: f[column] < k
    return lambda f: f[column] > k


def _size_records() -> list[Property]:
    """The families of size thresholds (rows, cols, pixel counts)."""
    P, records = Property, []
    for axis, column in (("rows", "rows"), ("cols", "cols")):
        for k, word in ((2, "two"), (3, "three"), (4, "four"), (5, "five")):
            records.append(P(f"is_shape_of_{word}_{axis}", f"{column} == {k}", _threshold(column, "==", k)))
    for axis in ("rows", "cols"):
        for k in (2, 3, 4, 5, 6, 9, 11):
            records.append(P(f"is_shape_less_than_{k}_{axis}", f"{axis} < {k}", _threshold(axis, "<", k)))
        records.append(P(f"is_shape_more_than_5_{axis}", f"{axis} > 5", _threshold(axis, ">", 5)))
    records.append(P("is_shape_small", "rows < 9 and cols < 9", lambda f: (f["rows"] < 9) & (f["cols"] < 9)))
    for k in range(1, 7):
        records.append(P(f"is_shape_more_than_{k}_cell", f"pixels > {k}", _threshold("pixels", ">", k)))
    for k in range(2, 7):
        records.append(P(f"is_shape_less_than_{k}_cell", f"pixels < {k}", _threshold("pixels", "<", k)))
    return records


PROPERTIES: Mapping[str, Property] = MappingProxyType({p.name: p for p in _records()})
"""Every boolean property by name: the reference's 73 in documentation order, then cogen's own."""


def measure(pixels: np.ndarray, offsets: np.ndarray, shapes: np.ndarray) -> dict[str, np.ndarray]:
    """Raw features of packed objects, one int64 array per feature name (Numba kernel)."""
    from cogen.bank._features import FEATURES, measure_packed

    table = measure_packed(np.ascontiguousarray(pixels, np.int8), np.asarray(offsets, np.int64),
                           np.asarray(shapes, np.int64))
    return {name: table[:, j] for j, name in enumerate(FEATURES)}


def property_columns(features: Features) -> dict[str, np.ndarray]:
    """Numeric columns then one boolean array per property, computed from ``features``."""
    columns = {name: features[name].astype(np.int16) for name in NUMERIC_COLUMNS}
    columns.update({name: np.asarray(p.compute(features), bool) for name, p in PROPERTIES.items()})
    return columns


def object_properties(grid) -> dict[str, bool | int]:
    """Numeric columns and properties of one object given as a 2-D array (its tight box)."""
    grid = np.ascontiguousarray(grid, np.int8)
    if grid.ndim != 2 or grid.size == 0:
        raise ValueError(f"expected a non-empty 2-D grid, got shape {grid.shape}")
    columns = property_columns(measure(grid.ravel(), np.array([0, grid.size]), np.array([grid.shape])))
    return {name: (bool(v[0]) if v.dtype == bool else int(v[0])) for name, v in columns.items()}
