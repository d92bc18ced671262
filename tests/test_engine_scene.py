"""Scenes: apply_sequence and the run_scene kernel against a brute-force Python scene checker."""

from __future__ import annotations

import numpy as np
import oracle
import pytest

from cogen.engine import (
    CANNOT_APPLY,
    OK,
    OUT_OF_GRID,
    OVERLAP,
    TRANSFORMS,
    PlacedObject,
    apply_sequence,
    pack,
    render,
    render_scene,
    run_scene,
    sequence_tokens,
    unpack,
)
from cogen.errors import PlacementError

NAMES = list(TRANSFORMS)


def random_scene(rng: np.random.Generator):
    """(names, objects, height, width): 1-4 small objects placed without overlap."""
    height, width = rng.integers(4, 21, size=2)
    objects = []
    frame = np.zeros((height, width), dtype=bool)
    for _ in range(rng.integers(1, 5)):
        grid = oracle.random_object(rng, max_side=int(min(6, height, width)))
        h, w = grid.shape
        row, col = rng.integers(0, height - h + 1), rng.integers(0, width - w + 1)
        if not (frame[row : row + h, col : col + w] & (grid > 0)).any():
            frame[row : row + h, col : col + w] |= grid > 0
            objects.append(PlacedObject(int(row), int(col), grid))
    names = list(rng.choice(NAMES, size=rng.integers(1, 4)))
    return names, objects, int(height), int(width)


def _same_objects(expected, got) -> bool:
    return len(expected) == len(got) and all(
        (a[0], a[1]) == (b.row, b.col) and np.array_equal(a[2], b.grid) for a, b in zip(expected, got, strict=True))


def test_apply_sequence_matches_brute_force():
    rng = np.random.default_rng(7)
    causes = {}
    for _ in range(1500):
        names, objects, height, width = random_scene(rng)
        cause, final, grid = oracle.scene(names, objects, height, width)
        result = apply_sequence(names, objects, height, width)
        context = f"{names} on {height}x{width}: {objects}"
        assert result.ok == (cause is None) and result.cause == cause, context
        assert _same_objects(final, result.objects), context
        assert (grid is None and result.grid is None) or np.array_equal(grid, result.grid), context
        causes[cause] = causes.get(cause, 0) + 1
    assert set(causes) == {None, "cannot_apply", "out_of_grid", "overlap"}  # every path exercised


def test_objects_may_touch_but_not_overlap():
    a = PlacedObject(0, 0, np.array([[1]], np.int8))
    b = PlacedObject(0, 2, np.array([[2]], np.int8))
    assert apply_sequence(["translate_right"], [a, b], 3, 4).ok  # edge contact after the step
    both = apply_sequence(["double_right"], [a, b], 3, 4)
    assert both.ok and both.grid[0].tolist() == [1, 1, 2, 2]
    neighbour = PlacedObject(0, 1, np.array([[2]], np.int8))
    clash = apply_sequence(["pad_right"], [a, neighbour], 3, 4)  # a's pad column lands on it
    assert clash.cause == "overlap" and _same_objects([tuple(a), tuple(neighbour)], clash.objects)


def test_border_objects_leave_the_grid():
    corner = PlacedObject(0, 0, np.array([[3, 3]], np.int8))
    assert apply_sequence(["translate_up"], [corner], 2, 2).cause == "out_of_grid"
    assert apply_sequence(["translate_down", "translate_up", "translate_up"], [corner], 2, 2).cause == "out_of_grid"
    assert apply_sequence(["translate_down", "translate_up"], [corner], 2, 2).ok
    assert apply_sequence(["pad_bottom"], [corner], 2, 2).ok


def test_failure_reports_the_last_valid_frame():
    obj = PlacedObject(1, 1, np.array([[1, 2]], np.int8))
    result = apply_sequence(["translate_up", "translate_up"], [obj], 4, 4)
    assert not result.ok and result.grid is None
    assert (result.objects[0].row, result.objects[0].col) == (0, 1)


def test_invalid_input_frames_are_refused():
    obj = PlacedObject(0, 0, np.array([[1, 1]], np.int8))
    with pytest.raises(PlacementError):
        apply_sequence(["rot90"], [obj, obj], 5, 5)
    with pytest.raises(PlacementError):
        apply_sequence(["rot90"], [PlacedObject(4, 4, obj.grid)], 5, 5)
    with pytest.raises(PlacementError):
        render([PlacedObject(-1, 0, obj.grid)], 5, 5)


def test_empty_sequence_renders_the_input():
    objects = [PlacedObject(1, 2, np.array([[4, 0], [4, 4]], np.int8))]
    result = apply_sequence([], objects, 4, 5)
    assert result.ok and np.array_equal(result.grid, render(objects, 4, 5))


def test_run_scene_kernel_contract():
    objects = [PlacedObject(2, 2, np.array([[1, 2], [0, 3]], np.int8)),
               PlacedObject(6, 6, np.array([[5, 5, 5]], np.int8))]
    boxes, pixels = pack(objects, 10 * 10)
    grid = np.full((12, 13), -1, dtype=np.int8)  # larger than the scene: margins stay untouched
    sequence = np.array([0, TRANSFORMS["translate_up"].token, 0, TRANSFORMS["rot90"].token], np.int64)
    assert run_scene(sequence, 10, 10, boxes, pixels, grid) == OK
    result = apply_sequence(["translate_up", "rot90"], objects, 10, 10)
    assert np.array_equal(grid[:10, :10], result.grid)
    assert (grid[10:] == -1).all() and (grid[:, 10:] == -1).all()
    assert _same_objects(result.objects, unpack(boxes, pixels))
    check = np.full((12, 13), -1, dtype=np.int8)
    render_scene(boxes, pixels, 2, 10, 10, check)
    assert np.array_equal(check, grid)


@pytest.mark.parametrize("names, status", [(["translate_left"] * 4, OUT_OF_GRID),
                                           (["crop_contours"], CANNOT_APPLY),
                                           (["quadruple_shape"], OVERLAP)])
def test_run_scene_failures_zero_the_frame(names, status):
    objects = [PlacedObject(3, 3, np.array([[1, 2], [0, 3]], np.int8)),
               PlacedObject(3, 5, np.array([[5], [5]], np.int8))]
    boxes, pixels = pack(objects, 64)
    grid = np.full((8, 8), 7, dtype=np.int8)
    assert run_scene(sequence_tokens(names), 8, 8, boxes, pixels, grid) == status
    assert (grid == 0).all()


def test_run_scene_unknown_token_cannot_apply():
    boxes, pixels = pack([PlacedObject(0, 0, np.array([[1]], np.int8))], 16)
    grid = np.zeros((4, 4), np.int8)
    assert run_scene(np.array([29], np.int64), 4, 4, boxes, pixels, grid) == CANNOT_APPLY


def test_docstring_examples_run():
    import doctest

    import cogen.engine.scene

    assert doctest.testmod(cogen.engine.scene).failed == 0
