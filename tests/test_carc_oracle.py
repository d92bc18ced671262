"""A slow, obviously correct pure-Python oracle of Compositional-ARC's five primitives and grids,
written from the reference semantics (carc_reference.md §2), and the kernels checked against it
exhaustively on every shape of up to 4 cells at every position.

Other ``test_carc_*`` files import the oracle from here.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from cogen.carc.grammar import KWARGS, Variant

SIDE = 10
Cells = frozenset[tuple[int, int]]


# ---------------------------------------------------------------- the oracle
def _inside(cells) -> bool:
    return all(0 <= r < SIDE and 0 <= c < SIDE for r, c in cells)


def translation(cells: Cells, direction: str, step_size: int) -> Cells | None:
    """x: (r, c) -> (r, c + step) (right for +); y: (r, c) -> (r + step, c) (down for +)."""
    moved = frozenset((r, c + step_size) if direction == "x" else (r + step_size, c) for r, c in cells)
    return moved if _inside(moved) else None


def mirror(cells: Cells, direction: str) -> Cells | None:
    """x: flip rows inside the box (upside down); y: flip columns. Invalid when nothing changes."""
    r0, r1 = min(r for r, _ in cells), max(r for r, _ in cells)
    c0, c1 = min(c for _, c in cells), max(c for _, c in cells)
    flipped = frozenset((r1 - (r - r0), c) if direction == "x" else (r, c1 - (c - c0)) for r, c in cells)
    return None if flipped == cells else flipped


def rotation(cells: Cells, rotation_type: int, mode: str = "paper") -> Cells | None:
    """0 clockwise, 1 counter-clockwise, 8 counter-clockwise (paper) or clockwise (reference), about the
    box's top-left cell (paper Def. 4: R+90(di, dj) = (dj, -di))."""
    r0, c0 = min(r for r, _ in cells), min(c for _, c in cells)
    clockwise = rotation_type == 0 or (rotation_type == 8 and mode == "reference")
    turned = frozenset((r0 + (c - c0), c0 - (r - r0)) if clockwise else (r0 - (c - c0), c0 + (r - r0))
                       for r, c in cells)
    return turned if _inside(turned) and turned != cells else None


def grow(cells: Cells, direction: str) -> Cells | None:
    """The object plus its copy one cell up (-x), down (+x), left (-y) or right (+y)."""
    dr, dc = {"-x": (-1, 0), "+x": (1, 0), "-y": (0, -1), "+y": (0, 1)}[direction]
    copy = {(r + dr, c + dc) for r, c in cells}
    return frozenset(cells | copy) if _inside(copy) else None


def apply(obj: tuple[Cells, int], name: str, kwargs: dict, mode: str = "paper") -> tuple[Cells, int] | None:
    """One primitive on an object ``(cells, colour)``; None when the reference calls it invalid."""
    cells, color = obj
    if name == "set_color":
        return cells, kwargs["new_color"]
    if name == "translation":
        out = translation(cells, **kwargs)
    elif name == "mirror":
        out = mirror(cells, **kwargs)
    elif name == "rotation":
        out = rotation(cells, kwargs["rotation_type"], mode)
    else:
        out = grow(cells, **kwargs)
    return None if out is None else (out, color)


def compose(obj, steps, mode: str = "paper"):
    """Apply ``steps`` = [(name, kwargs), ...] in order; None as soon as one is invalid."""
    for name, kwargs in steps:
        obj = apply(obj, name, kwargs, mode)
        if obj is None:
            return None
    return obj


def components(grid: np.ndarray) -> list[tuple[Cells, int]]:
    """Same-colour Moore-connected components of the non-zero cells, as (cells, colour)."""
    todo = {(int(r), int(c)) for r, c in zip(*np.nonzero(grid), strict=True)}
    out = []
    while todo:
        start = todo.pop()
        color = int(grid[start])
        group, frontier = {start}, [start]
        while frontier:
            r, c = frontier.pop()
            for dr, dc in itertools.product((-1, 0, 1), repeat=2):
                cell = (r + dr, c + dc)
                if cell in todo and int(grid[cell]) == color:
                    todo.discard(cell)
                    group.add(cell)
                    frontier.append(cell)
        out.append((frozenset(group), color))
    return out


def touching(a: Cells, b: Cells) -> bool:
    """True when two cell sets overlap or touch, diagonals included."""
    return any(max(abs(r1 - r2), abs(c1 - c2)) <= 1 for r1, c1 in a for r2, c2 in b)


def normalised(cells: Cells) -> Cells:
    """The cells moved to the top-left corner (equal results mean equal shapes)."""
    r0, c0 = min(r for r, _ in cells), min(c for _, c in cells)
    return frozenset((r - r0, c - c0) for r, c in cells)


def render(objects) -> np.ndarray:
    """A grid holding the objects ``(cells, colour)``."""
    grid = np.zeros((SIDE, SIDE), np.int8)
    for cells, color in objects:
        for r, c in cells:
            grid[r, c] = color
    return grid


# ---------------------------------------------------------------- oracle self-checks
L_TROMINO = frozenset({(5, 5), (6, 5), (6, 6)})


def test_oracle_follows_the_reference_table():
    # translation: x moves right, y moves down
    assert translation(L_TROMINO, "x", 1) == {(5, 6), (6, 6), (6, 7)}
    assert translation(L_TROMINO, "y", -2) == {(3, 5), (4, 5), (4, 6)}
    assert translation(frozenset({(9, 0)}), "y", 1) is None
    # mirror x is upside down, y left-right; symmetric shapes are invalid
    assert mirror(L_TROMINO, "x") == {(5, 5), (5, 6), (6, 5)}
    assert mirror(L_TROMINO, "y") == {(5, 6), (6, 5), (6, 6)}
    assert mirror(frozenset({(1, 1), (1, 2)}), "y") is None
    # clockwise swings left of the top-left cell, counter-clockwise swings up
    assert rotation(L_TROMINO, 0) == {(5, 4), (5, 5), (6, 4)}  # X. / XX  ->  XX / X.
    assert rotation(L_TROMINO, 1) == {(4, 6), (5, 5), (5, 6)}  # X. / XX  ->  .X / XX
    assert rotation(L_TROMINO, 8, "reference") == rotation(L_TROMINO, 0)
    assert rotation(L_TROMINO, 8, "paper") == rotation(L_TROMINO, 1)
    assert rotation(frozenset({(4, 4)}), 0) is None
    # extension adds the shifted copy, invalid at the edge it grows towards
    assert grow(L_TROMINO, "-x") == L_TROMINO | {(4, 5), (5, 6)}
    assert grow(frozenset({(0, 3)}), "-x") is None
    assert compose((L_TROMINO, 3), [("set_color", {"new_color": 1}), ("grow", {"direction": "-y"})]) == \
        (L_TROMINO | {(5, 4), (6, 4)}, 1)


def test_components_and_touching():
    grid = render([(L_TROMINO, 3), (frozenset({(0, 0), (1, 1)}), 4)])
    assert sorted(components(grid), key=lambda o: o[1]) == [(L_TROMINO, 3), (frozenset({(0, 0), (1, 1)}), 4)]
    assert touching(frozenset({(1, 1)}), frozenset({(2, 2)})) and not touching(frozenset({(1, 1)}), frozenset({(3, 1)}))


# ---------------------------------------------------------------- kernels against the oracle
def polyplets(max_cells: int) -> list[Cells]:
    """Every king-connected shape of up to ``max_cells`` cells, normalised."""
    shapes = {frozenset({(0, 0)})}
    level = set(shapes)
    for _ in range(max_cells - 1):
        grown = set()
        for shape in level:
            for r, c in shape:
                for dr, dc in itertools.product((-1, 0, 1), repeat=2):
                    cell = (r + dr, c + dc)
                    if cell not in shape:
                        grown.add(normalised(shape | {cell}))
        level = grown
        shapes |= grown
    return sorted(shapes, key=sorted)


def every_variant() -> list[Variant]:
    """Every variant a spec can ask for (translations and colour changes limited to the paper's range)."""
    return [Variant(name, tuple(zip(kwargs, values, strict=True))) for name, kwargs in KWARGS.items()
            for values in itertools.product(*kwargs.values())
            if (name != "set_color" or values[0] <= 4) and (name != "translation" or abs(values[1]) <= 2)]


@pytest.mark.slow
def test_kernel_primitives_match_the_oracle_on_every_small_shape_everywhere():
    """Checklist §11.1: every shape of up to 4 cells at every position, every variant, both rotation
    modes (only rotations differ between them)."""
    from cogen.carc._kernels import CAP, transform

    shapes = polyplets(4)
    assert len(shapes) == 135  # 1 + 4 + 20 + 110 fixed polyplets
    rows, cols = np.zeros(CAP, np.int64), np.zeros(CAP, np.int64)
    out_rows, out_cols = np.zeros(CAP, np.int64), np.zeros(CAP, np.int64)
    checked = 0
    cases = [(v, "paper") for v in every_variant()]
    cases += [(v, "reference") for v in every_variant() if v.name == "rotation"]
    for variant, mode in cases:
        code, a, b = variant.params(mode)
        for shape in shapes:
            height, width = max(r for r, _ in shape) + 1, max(c for _, c in shape) + 1
            for top, left in itertools.product(range(SIDE - height + 1), range(SIDE - width + 1)):
                cells = frozenset((r + top, c + left) for r, c in shape)
                ordered = sorted(cells)
                rows[: len(cells)] = [r for r, _ in ordered]
                cols[: len(cells)] = [c for _, c in ordered]
                n, color = transform(code, a, b, rows, cols, len(cells), 5, out_rows, out_cols)
                expected = apply((cells, 5), variant.name, dict(variant.kwargs), mode)
                got = None if n < 0 else (frozenset(zip(out_rows[:n].tolist(), out_cols[:n].tolist(), strict=True)), color)
                assert got == expected, (variant, sorted(cells))
                checked += 1
    assert checked > 50_000
