"""COGITAO metrics on hand-built grids whose answers can be counted by eye."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from cogen.errors import EvalError
from cogen.metrics import (
    PAD,
    Scene,
    check_grid,
    components,
    equal_grids,
    grid_accuracy,
    object_counts,
    object_pixel_accuracy,
    object_pixel_error,
    per_pixel_accuracy,
    score_grids,
    sequence_outputs,
    stack_grids,
    stubbornness,
)
from cogen.metrics.grids import MAX_SIDE, REASONS


@pytest.mark.slow
def test_import_metrics_needs_numpy_only():
    code = "import sys, cogen.metrics; print(' '.join(sorted(sys.modules)))"
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    for heavy in ("numba", "pyarrow", "datasets", "torch", "cogen.engine._kernels"):
        assert heavy not in loaded


@pytest.mark.parametrize(("value", "reason"), [
    (None, "null"), ("[[1]]", "not a list"), ([], "empty"), ([[]], "empty"), ([1, 2], "not 2-D"),
    ([[1, 2], [3]], "ragged rows"), ([[1, 10]], "value outside 0-9"), ([[-1]], "value outside 0-9"),
    ([[1.5]], "non-integer value"), ([[True]], "non-integer value"), ([[[1]]], "not 2-D"),
    (np.zeros((MAX_SIDE + 1, 1), np.int64), "too large"), (np.zeros((2, 2, 2)), "not 2-D"),
])
def test_check_grid_names_what_is_wrong(value, reason):
    assert check_grid(value) == (None, reason)
    assert reason in REASONS


def test_check_grid_accepts_lists_tuples_and_integral_arrays():
    for value in ([[0, 9], [3, 4]], ((0, 9), (3, 4)), np.array([[0, 9], [3, 4]]), np.array([[0.0, 9.0], [3.0, 4.0]])):
        grid, reason = check_grid(value)
        assert reason is None and grid.dtype == np.int8 and grid.tolist() == [[0, 9], [3, 4]]


def test_stack_grids_pads_and_marks_absent_grids():
    stack = stack_grids([np.ones((1, 3), np.int8), None, np.zeros((2, 1), np.int8)])
    assert stack.cells.shape == (3, 2, 3)
    assert stack.heights.tolist() == [1, 0, 2] and stack.widths.tolist() == [3, 0, 1]
    assert (stack.cells[1] == PAD).all() and stack.grid(1) is None
    assert stack.grid(2).tolist() == [[0], [0]] and stack.cells[2, 0, 1] == PAD


def test_grid_accuracy_counts_only_perfect_grids_of_the_right_size():
    target = [[1, 0], [0, 2]]
    predictions = [[[1, 0], [0, 2]], [[1, 0], [0, 3]], [[1, 0, 0], [0, 2, 0]], None]
    assert equal_grids(predictions, [target] * 4).tolist() == [True, False, False, False]
    assert grid_accuracy(predictions, [target] * 4) == 0.25


def test_per_pixel_accuracy_true_size_and_padded():
    target = [[1, 0, 0], [0, 0, 0]]
    prediction = [[1, 0], [0, 0]]  # 4 of the 6 target cells are shared and equal
    assert per_pixel_accuracy([prediction], [target]) == pytest.approx(4 / 6)
    # padded to 5x5: only the two cells of the target's third column differ (pad vs 0)
    assert per_pixel_accuracy([prediction], [target], pad=(5, 5)) == pytest.approx(23 / 25)
    assert per_pixel_accuracy([target], [target], pad=(5, 5)) == 1.0
    # a larger prediction loses the cells outside the target too
    assert per_pixel_accuracy([[[1, 0, 0, 0], [0, 0, 0, 0]]], [target]) == pytest.approx(6 / 8)


def test_pad_smaller_than_a_target_is_refused():
    with pytest.raises(EvalError, match="pad size"):
        per_pixel_accuracy([[[1, 2, 3]]], [[[1, 2, 3]]], pad=(1, 2))


def test_oversized_predictions_are_cropped_to_the_pad_box_and_counted():
    scores = score_grids([np.ones((4, 4), np.int8)], [np.ones((2, 2), np.int8)], pad=(3, 3))
    assert scores.oversized.tolist() == [True]
    assert scores.pixel_padded[0] == pytest.approx(4 / 9)  # the 2x2 agrees, the other 5 cells are 1 vs pad


def test_object_pixel_accuracy_looks_only_at_coloured_cells():
    target = [[1, 0, 0], [0, 0, 0], [0, 0, 2]]
    assert object_pixel_accuracy([target], [target]) == 1.0
    assert object_pixel_accuracy([[[0] * 3] * 3], [target]) == 0.0  # 2 coloured cells, both missed
    half = [[1, 0, 0], [0, 0, 0], [0, 0, 3]]
    assert object_pixel_accuracy([half], [target]) == 0.5
    extra = [[1, 0, 5], [0, 0, 0], [0, 0, 2]]  # one extra coloured cell: 2 of 3 coloured cells right
    assert object_pixel_accuracy([extra], [target]) == pytest.approx(2 / 3)
    assert object_pixel_accuracy([[[0]]], [[[0]]]) == 1.0  # nothing to get wrong


def test_object_pixel_error_is_the_papers_formula():
    target = [[1, 0], [0, 0]]
    wrong = [[0, 0], [0, 2]]  # two cells differ where one grid is non-zero
    assert object_pixel_error([wrong], [target], pad=(2, 2)) == pytest.approx(2 / 4)
    assert object_pixel_error([wrong], [target], pad=(4, 5)) == pytest.approx(2 / 20)
    assert object_pixel_error([target], [target], pad=(4, 5)) == 0.0


def test_missing_predictions_score_zero_and_worst_error():
    scores = score_grids([None], [[[1]]], pad=(2, 2))
    assert (scores.exact[0], scores.pixel[0], scores.pixel_padded[0], scores.object_pixel[0]) == (0, 0, 0, 0)
    assert scores.object_error_paper[0] == 1.0 and scores.found[0] == 0 and scores.missed[0] == 1


def test_components_are_8_connected_colour_agnostic_or_same_colour():
    grid = [[1, 0, 0, 3],
            [0, 2, 0, 0],
            [0, 0, 0, 3]]
    assert len(components(grid)) == 3  # 1 and 2 touch diagonally; the two 3s do not touch
    assert len(components(grid, same_color=True)) == 4
    assert components(grid)[0].tolist() == [[1, 0, 0, 0], [0, 2, 0, 0], [0, 0, 0, 0]]


def test_object_counts_found_missed_extra():
    target = [[1, 1, 0, 0, 0],
              [0, 0, 0, 2, 0],
              [0, 0, 0, 0, 0]]
    assert object_counts([target], [target]) == {"found": 2, "missed": 0, "extra": 0, "reconstruction_accuracy": 1.0}
    moved = [[1, 1, 0, 0, 0],
             [0, 0, 0, 0, 0],
             [0, 0, 0, 0, 2]]  # the 2 moved: one found, one missed, one extra
    assert object_counts([moved], [target]) == {"found": 1, "missed": 1, "extra": 1, "reconstruction_accuracy": 0.5}
    recoloured = [[1, 3, 0, 0, 0], [0, 0, 0, 2, 0], [0, 0, 0, 0, 0]]
    assert object_counts([recoloured], [target])["found"] == 1
    grown = [[1, 1, 0, 0, 0], [1, 0, 0, 2, 0], [0, 0, 0, 0, 0]]  # a superset of cells is not the object
    assert object_counts([grown], [target])["found"] == 1
    merged = [[1, 1, 0, 0, 0], [0, 0, 2, 2, 0], [0, 0, 0, 0, 0]]  # touching objects form one component
    assert object_counts([merged], [target]) == {"found": 0, "missed": 2, "extra": 1, "reconstruction_accuracy": 0.0}


# ---------------------------------------------------------------- stubbornness
SCENE = Scene(((2, 1, np.array([[1, 2]], np.int8)),), 5, 5)
SEQUENCES = [("translate_up",), ("rot90",), ("translate_up", "translate_up", "translate_up")]


def _grid(cells: dict) -> np.ndarray:
    grid = np.zeros((5, 5), np.int8)
    for (r, c), value in cells.items():
        grid[r, c] = value
    return grid


def test_sequence_outputs_follow_the_engine_and_fail_off_grid():
    up, rot, off_grid = sequence_outputs(SCENE, SEQUENCES)
    assert up.tolist() == _grid({(1, 1): 1, (1, 2): 2}).tolist()
    assert sorted(zip(*np.nonzero(rot), strict=True)) != sorted(zip(*np.nonzero(up), strict=True))
    assert off_grid is None  # row 2 moved up three times leaves the grid


def test_stubbornness_flags_predictions_equal_to_an_in_domain_output():
    up = _grid({(1, 1): 1, (1, 2): 2})
    other = _grid({(4, 4): 1})
    predictions = [up, other, None, np.zeros((3, 3), np.int8), up]
    scenes = [SCENE, SCENE, SCENE, SCENE, None]
    result = stubbornness(predictions, scenes, SEQUENCES, targets=[other, up, up, up, up])
    assert result.stubborn.tolist() == [True, False, False, False, False]
    assert result.matched.tolist() == [0, -1, -1, -1, -1]
    assert result.target_reachable.tolist() == [False, True, True, True, False]
    assert result.unverifiable.tolist() == [False, False, False, False, True]
    assert result.value == pytest.approx(1 / 5)


def test_scenes_that_do_not_draw_their_input_or_leave_the_grid_are_unverifiable():
    up = _grid({(1, 1): 1, (1, 2): 2})
    drawn = _grid({(2, 1): 1, (2, 2): 2})
    outside = Scene(((4, 4, np.array([[1, 2]], np.int8)),), 5, 5)
    result = stubbornness([up, up, up], [SCENE, SCENE, outside], SEQUENCES, inputs=[drawn, up, drawn])
    assert result.unverifiable.tolist() == [False, True, True]
    assert result.stubborn.tolist() == [True, False, False]


def test_stubbornness_works_across_chunks(monkeypatch):
    import cogen.metrics.stubborn as module

    monkeypatch.setattr(module, "CHUNK", 2)
    up = _grid({(1, 1): 1, (1, 2): 2})
    result = stubbornness([up, None, up, up, None], [SCENE, SCENE, None, SCENE, SCENE], SEQUENCES)
    assert result.stubborn.tolist() == [True, False, False, True, False]
    assert result.unverifiable.tolist() == [False, False, True, False, False]
