"""Object properties against slow, obviously correct oracles written independently of the kernels."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cogen.bank import PROPERTIES, object_properties
from cogen.bank.properties import measure, property_columns

# ------------------------------------------------------------------------------------- oracles


def components8(mask: np.ndarray) -> int:
    """Union-find over the non-zero cells, joining each cell to its 8 neighbours."""
    parent = {cell: cell for cell in zip(*np.nonzero(mask), strict=True)}

    def find(cell):
        while parent[cell] != cell:
            cell = parent[cell]
        return cell

    for r, c in list(parent):
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                if (r + dr, c + dc) in parent:
                    parent[find((r, c))] = find((r + dr, c + dc))
    return len({find(cell) for cell in parent})


def hollow(mask: np.ndarray) -> bool:
    """Pad with a background frame, grow the outside by 4-neighbour dilation until it stops;
    a background cell the outside never reaches is a hole."""
    background = np.pad(mask == 0, 1, constant_values=True)
    outside = np.zeros_like(background)
    outside[0, 0] = True
    while True:
        grown = outside.copy()
        grown[1:] |= outside[:-1]
        grown[:-1] |= outside[1:]
        grown[:, 1:] |= outside[:, :-1]
        grown[:, :-1] |= outside[:, 1:]
        grown &= background
        if (grown == outside).all():
            break
        outside = grown
    return bool((background & ~outside).any())


def is_cross(mask: np.ndarray) -> bool:
    """Some full row r plus full column c is the whole mask."""
    h, w = mask.shape
    if h < 3 or w < 3:
        return False
    for r in range(h):
        for c in range(w):
            shape = np.zeros_like(mask)
            shape[r, :] = True
            shape[:, c] = True
            if (shape == mask).all():
                return True
    return False


def is_diamond(mask: np.ndarray) -> bool:
    h, w = mask.shape
    if h != w or h % 2 == 0:
        return False
    r = h // 2
    rows = [np.flatnonzero(mask[i]) for i in range(h)]
    return all(list(cols) == list(range(r - (r - abs(i - r)), r + (r - abs(i - r)) + 1))
               for i, cols in enumerate(rows))


def reference_oracle(grid: np.ndarray) -> dict[str, bool]:
    """The 73 reference properties, transcribed again from the reference notes (section 2.3)."""
    mask = grid != 0
    h, w = grid.shape
    pixels = int(mask.sum())
    colors = len(set(grid[mask].tolist()))
    lr = (mask == mask[:, ::-1]).all()
    ud = (mask == mask[::-1, :]).all()
    tr = h == w and (grid == grid.T).all()
    anti = h == w and (grid == grid[::-1, ::-1].T).all()
    symmetric = lr or ud or tr or anti
    connected = components8(mask) == 1
    rectangular = bool(mask.all())
    eye = np.eye(h, w, dtype=bool)
    props = {
        "is_shape_vertically_symmetric": lr, "is_shape_horizontally_symmetric": ud,
        "is_shape_horizontally_or_vertically_symmetric": lr or ud,
        "is_shape_diagonally_symmetric": tr, "is_shape_antidiagonally_symmetric": anti,
        "is_shape_diagonally_or_antidiagonally_symmetric": tr or anti,
        "is_shape_symmetric": symmetric, "is_shape_not_symmetric": not symmetric,
        "is_shape_evenly_colored": colors == 1, "is_shape_not_evenly_colored": colors > 1,
        "is_shape_of_2_colors": colors == 2, "is_shape_of_3_colors": colors == 3,
        "is_shape_more_than_3_colors": colors > 3,
        "is_shape_hollow": hollow(mask), "is_shape_not_hollow": not hollow(mask),
        "is_shape_fully_connected": connected, "is_shape_not_fully_connected": not connected,
        "is_shape_simple": symmetric and colors == 1 and pixels > 2 and connected,
        "is_shape_not_simple": not (symmetric and colors == 1 and pixels > 2 and connected),
        "is_shape_line": h == 1 or w == 1, "is_shape_vertical_line": w == 1, "is_shape_horizontal_line": h == 1,
        "is_shape_diagonal_line": (mask == eye).all(),
        "is_shape_anti_diagonal_line": (mask == np.eye(h, w, dtype=bool)[::-1]).all() if h == w
        else all(mask[i, j] == (i + j == h - 1) for i in range(h) for j in range(w)),
        "is_shape_filled_square": h == w and colors == 1, "is_shape_filled_rectangle": h != w and colors == 1,
        "is_shape_rectangular": rectangular, "is_shape_rectangular_not_square": rectangular and h != w,
        "is_shape_cross": is_cross(mask), "is_shape_diamond": is_diamond(mask),
        "is_shape_cross_or_rectangle": is_cross(mask) or rectangular,
        "is_shape_cross_or_rectangle_or_diamond": is_cross(mask) or rectangular or is_diamond(mask),
        "is_shape_higher_than_wide": h > w, "is_shape_wider_than_high": h < w,
        "is_shape_same_height_width": h == w, "is_shape_not_same_height_width": h != w,
        "is_shape_small": h < 9 and w < 9,
    }
    props["is_shape_diagonal_or_antidiagonal_line"] = (props["is_shape_diagonal_line"]
                                                       or props["is_shape_anti_diagonal_line"])
    for k, word in ((2, "two"), (3, "three"), (4, "four"), (5, "five")):
        props[f"is_shape_of_{word}_rows"], props[f"is_shape_of_{word}_cols"] = h == k, w == k
    for k in (2, 3, 4, 5, 6, 9, 11):
        props[f"is_shape_less_than_{k}_rows"], props[f"is_shape_less_than_{k}_cols"] = h < k, w < k
    props["is_shape_more_than_5_rows"], props["is_shape_more_than_5_cols"] = h > 5, w > 5
    for k in range(1, 7):
        props[f"is_shape_more_than_{k}_cell"] = pixels > k
    for k in range(2, 7):
        props[f"is_shape_less_than_{k}_cell"] = pixels < k
    return {name: bool(value) for name, value in props.items()}


def cogen_oracle(grid: np.ndarray) -> dict[str, bool]:
    """cogen's own symmetry properties, from their definitions: a mask is point symmetric when a
    half turn keeps it; an asymmetric object changes under both mirrors and a half turn (masks)
    and under both transposes (colours included)."""
    mask = grid != 0
    half_turn = bool((np.rot90(mask, 2) == mask).all())
    mirrored = bool((np.flipud(mask) == mask).all() or (np.fliplr(mask) == mask).all())
    square = grid.shape[0] == grid.shape[1]
    transposed = square and bool((grid.T == grid).all() or (np.rot90(grid, 2).T == grid).all())
    return {"is_shape_point_symmetric": half_turn,
            "is_shape_asymmetric": not (half_turn or mirrored or transposed)}


def oracle(grid: np.ndarray) -> dict[str, bool]:
    """Every property of the registry: the reference's and cogen's."""
    return {**reference_oracle(grid), **cogen_oracle(grid)}


def grid_of(text: str) -> np.ndarray:
    """A grid from rows of digits, '.' for background."""
    return np.array([[0 if ch == "." else int(ch) for ch in row] for row in text.split()], np.int8)


# ----------------------------------------------------------------------------------- the tests


def test_registry_has_the_73_reference_names_first_then_cogens():
    names = list(PROPERTIES)
    reference = list(reference_oracle(np.ones((1, 1), np.int8)))
    assert len(reference) == 73 and set(names[:73]) == set(reference)
    assert names[73:] == list(cogen_oracle(np.ones((1, 1), np.int8)))
    for prop in PROPERTIES.values():
        assert prop.name.startswith("is_shape_") and prop.definition
        assert prop.reference == (prop.name in reference)


HAND_MADE = {
    "plus": (".1. 111 .1.", {"is_shape_cross": True, "is_shape_diamond": True, "is_shape_hollow": False,
                             "is_shape_symmetric": True, "is_shape_simple": True}),
    "T": ("111 .1. .1.", {"is_shape_cross": True, "is_shape_vertically_symmetric": True,
                          "is_shape_horizontally_symmetric": False}),
    "L": ("1.. 1.. 111", {"is_shape_cross": True, "is_shape_symmetric": True,
                          "is_shape_diagonally_symmetric": False, "is_shape_antidiagonally_symmetric": True}),
    "diamond ring": (".1. 1.1 .1.", {"is_shape_hollow": True, "is_shape_fully_connected": True,
                                     "is_shape_cross": False, "is_shape_diamond": False}),
    "ring": ("111 1.1 111", {"is_shape_hollow": True, "is_shape_rectangular": False}),
    "open ring": ("111 1.. 111", {"is_shape_hollow": False}),
    "ring with diagonal gap": ("11. 1.1 111", {"is_shape_hollow": True}),
    "diagonal": ("1.. .1. ..1", {"is_shape_diagonal_line": True, "is_shape_fully_connected": True,
                                 "is_shape_line": False, "is_shape_anti_diagonal_line": False}),
    "anti-diagonal": ("..2 .2. 2..", {"is_shape_anti_diagonal_line": True, "is_shape_diagonal_line": False}),
    "gapped line": ("1.1", {"is_shape_line": True, "is_shape_fully_connected": False,
                            "is_shape_horizontal_line": True}),
    "dot": ("5", {"is_shape_line": True, "is_shape_diagonal_line": True, "is_shape_diamond": True,
                  "is_shape_anti_diagonal_line": True, "is_shape_less_than_2_cell": True}),
    "two colours, transpose-symmetric": ("12 21", {"is_shape_diagonally_symmetric": True,
                                                  "is_shape_of_2_colors": True}),
    "colours break the transpose": ("12 12", {"is_shape_diagonally_symmetric": False,
                                              "is_shape_vertically_symmetric": True}),
    "checkerboard": ("1.1 .1. 1.1", {"is_shape_fully_connected": True, "is_shape_hollow": False}),
    "two blobs": ("11.. 11.. ...1", {"is_shape_fully_connected": False}),
    "hollow square, one colour": ("3333 3..3 3..3 3333", {"is_shape_filled_square": True,
                                                          "is_shape_hollow": True}),
    "rectangle": ("444 444", {"is_shape_rectangular_not_square": True, "is_shape_filled_rectangle": True,
                              "is_shape_cross_or_rectangle": True}),
    "many colours": ("1234 5678", {"is_shape_more_than_3_colors": True, "is_shape_rectangular": True}),
    "S, only a half-turn symmetry": (".11 11.", {"is_shape_point_symmetric": True, "is_shape_symmetric": False,
                                               "is_shape_asymmetric": False}),
    "S with colours the half turn breaks": (".12 11.", {"is_shape_point_symmetric": True,
                                                       "is_shape_asymmetric": False}),
    "F pentomino": (".11 11. .1.", {"is_shape_asymmetric": True, "is_shape_point_symmetric": False,
                                    "is_shape_not_symmetric": True}),
    "transposed mask, colours break it": ("112 1.. 1..", {"is_shape_asymmetric": True,
                                                          "is_shape_diagonally_symmetric": False}),
    "rectangle, two-axis symmetric": ("44 44 44", {"is_shape_point_symmetric": True, "is_shape_asymmetric": False}),
}


@pytest.mark.parametrize("name", sorted(HAND_MADE))
def test_hand_made_objects(name):
    text, expected = HAND_MADE[name]
    grid = grid_of(text)
    got = object_properties(grid)
    for prop, value in expected.items():
        assert got[prop] is value, f"{name}: {prop}"
    truth = oracle(grid)
    assert {k: got[k] for k in truth} == truth


def _random_grids(count: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    grids = []
    for _ in range(count):
        h, w = rng.integers(1, 9, size=2)
        density = rng.choice([0.3, 0.6, 0.85, 1.0])
        grid = (rng.random((h, w)) < density) * rng.integers(1, rng.integers(2, 5), size=(h, w))
        grid.flat[rng.integers(grid.size)] = 1  # never empty
        grids.append(grid.astype(np.int8))
    return grids


@pytest.mark.slow
def test_random_objects_match_the_oracle_in_one_batch():
    grids = _random_grids(1500, seed=7)
    offsets = np.cumsum([0] + [g.size for g in grids])
    shapes = np.array([g.shape for g in grids])
    columns = property_columns(measure(np.concatenate([g.ravel() for g in grids]), offsets, shapes))
    for i, grid in enumerate(grids):
        truth = oracle(grid)
        got = {name: bool(columns[name][i]) for name in truth}
        assert got == truth, grid
        assert columns["pixels"][i] == np.count_nonzero(grid)
        assert columns["components"][i] == components8(grid != 0)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 6).flatmap(lambda h: st.integers(1, 6).flatmap(
    lambda w: st.lists(st.integers(0, 3), min_size=h * w, max_size=h * w).map(
        lambda cells: np.array(cells, np.int8).reshape(h, w)))))
def test_hypothesis_objects_match_the_oracle(grid):
    if not grid.any():
        grid[0, 0] = 1
    got = object_properties(grid)
    truth = oracle(grid)
    assert {k: got[k] for k in truth} == truth


def test_symmetric_shapes_from_transforms():
    """Objects built symmetric by construction are recognised as such."""
    rng = np.random.default_rng(3)
    for _ in range(50):
        half = rng.integers(0, 3, size=(5, 3)).astype(np.int8)
        half[0, 0] = 1
        lr = np.hstack([half, half[:, ::-1]])
        assert object_properties(lr)["is_shape_vertically_symmetric"]
        square = rng.integers(0, 3, size=(4, 4)).astype(np.int8)
        square[0, 0] = 1
        transposed = np.triu(square) + np.triu(square, 1).T
        assert object_properties(transposed)["is_shape_diagonally_symmetric"]


def test_object_properties_rejects_empty_grids():
    with pytest.raises(ValueError):
        object_properties(np.zeros((0, 3), np.int8))
