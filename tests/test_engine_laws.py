"""The algebra each registry record declares holds, and every flag it leaves off is really off.

True claims are Hypothesis properties over random objects; false claims need a witness among
fixed objects, so the metadata is exact in both directions.
"""

from __future__ import annotations

import numpy as np
import oracle
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cogen.engine import TRANSFORMS, PlacedObject, apply

MAX_POWER = 12  # "order None" means no power up to this one is the identity on the witnesses


@st.composite
def placed_objects(draw):
    """A random tight object at a random anchor (sizes up to 7x7, up to 4 colours)."""
    h, w = draw(st.integers(1, 7)), draw(st.integers(1, 7))
    palette = draw(st.lists(st.integers(1, 9), min_size=1, max_size=4, unique=True))
    cells = draw(st.lists(st.sampled_from([0, 0, *palette]), min_size=h * w, max_size=h * w))
    grid = np.array(cells, dtype=np.int8).reshape(h, w)
    if not grid.any():
        grid[draw(st.integers(0, h - 1)), draw(st.integers(0, w - 1))] = palette[0]
    row, col = draw(st.integers(-30, 30)), draw(st.integers(-30, 30))
    return PlacedObject(*oracle.tighten(row, col, grid))


def same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a.row == b.row and a.col == b.col and np.array_equal(a.grid, b.grid)


def power(name, obj, n):
    for _ in range(n):
        if obj is None:
            return None
        obj = apply(name, obj)
    return obj


def colors(obj) -> set[int]:
    return set(np.unique(obj.grid[obj.grid > 0]).tolist())


def pixel_count(obj) -> int:
    return int(np.count_nonzero(obj.grid))


PRESERVED = {
    "preserves_box": lambda obj: obj.grid.shape,
    "preserves_colors": colors,
    "preserves_pixel_count": pixel_count,
}


@pytest.mark.parametrize("name", TRANSFORMS)
@settings(max_examples=60, deadline=None)
@given(obj=placed_objects())
def test_declared_laws_hold(name, obj):
    t = TRANSFORMS[name]
    result = apply(name, obj)
    if result is None:
        assert t.can_fail, f"{name} refused an object but does not declare can_fail"
        return
    if t.order is not None:
        assert same(power(name, obj, t.order), obj)
    if t.undone_by is not None:
        assert same(apply(t.undone_by, result), obj)
    if t.inverse is not None:
        assert same(apply(name, apply(t.inverse, obj)), obj)
    if t.idempotent:
        assert same(apply(name, result), result)
    for flag, measure in PRESERVED.items():
        if getattr(t, flag):
            assert measure(result) == measure(obj), flag


def _witnesses() -> list[PlacedObject]:
    grids = oracle.sample_objects(300, seed=11)
    grids += [np.array(t.example.before, np.int8) for t in TRANSFORMS.values()]
    return [PlacedObject(0, 0, g) for g in grids]


WITNESSES = _witnesses()


def _some_witness(predicate) -> bool:
    return any(predicate(obj) for obj in WITNESSES)


def _undoes(undo, name) -> bool:
    """undo(name(x)) == x on every witness where name applies."""
    return not _some_witness(lambda x: (y := apply(name, x)) is not None and not same(apply(undo, y), x))


@pytest.mark.parametrize("name", TRANSFORMS)
def test_undeclared_laws_fail_somewhere(name):
    t = TRANSFORMS[name]
    shortest = t.order or MAX_POWER + 1
    for k in range(1, shortest):
        assert _some_witness(lambda x, k=k: not same(power(name, x, k), x)), f"{name}^{k} is the identity"
    for other in TRANSFORMS:
        if other != t.undone_by:
            assert not _undoes(other, name), f"{other} undoes {name}"
        if other != t.inverse:
            assert not (_undoes(other, name) and _undoes(name, other)), f"{other} inverts {name}"
    if not t.idempotent:
        assert _some_witness(lambda x: (y := apply(name, x)) is not None and not same(apply(name, y), y))
    for flag, measure in PRESERVED.items():
        if not getattr(t, flag):
            assert _some_witness(lambda x, measure=measure: (y := apply(name, x)) is not None
                                 and measure(y) != measure(x)), f"{name} always {flag}"
    if t.can_fail:
        assert _some_witness(lambda x: apply(name, x) is None)


@pytest.mark.parametrize("name", TRANSFORMS)
def test_algebra_fields_are_consistent(name):
    t = TRANSFORMS[name]
    assert t.self_inverse == (t.inverse == name)
    if t.self_inverse:
        assert t.order == 2
    if t.inverse is not None:
        assert TRANSFORMS[t.inverse].inverse == name and t.undone_by == t.inverse
    if t.idempotent:
        assert t.order is None and t.inverse is None
