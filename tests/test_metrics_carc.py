"""Compositional-ARC metrics and error taxonomy on hand-built 10x10 grids.

The expected grids of the taxonomy are written out cell by cell from the reference semantics
(carc_reference §2), independently of the kernels that the taxonomy calls.
"""

from __future__ import annotations

import numpy as np
import pytest

from cogen.metrics.carc import (
    ERROR_CATEGORIES,
    CarcQuery,
    classify_error,
    error_taxonomy,
    score_queries,
    taxonomy_counts,
)

pytest.importorskip("cogen.carc.grammar")

NEIGHBOR = {(7, 7): 5}
OBJECT = [(2, 2), (3, 2), (3, 3)]  # an L tromino, colour 3
TRANSLATE_RIGHT = ("translation", (("direction", "x"), ("step_size", 1)))
RED = ("set_color", (("new_color", 1),))
GROW_UP = ("grow", (("direction", "-x"),))


def grid(cells, color, neighbor=True) -> np.ndarray:
    out = np.zeros((10, 10), np.int8)
    for (r, c), value in (NEIGHBOR.items() if neighbor else ()):
        out[r, c] = value
    for r, c in cells:
        out[r, c] = color
    return out


def right(cells):
    return [(r, c + 1) for r, c in cells]


def grow_up(cells):
    return sorted(set(cells) | {(r - 1, c) for r, c in cells})


def query(roles=(TRANSLATE_RIGHT, RED, GROW_UP), rotation="paper") -> CarcQuery:
    target = grid(grow_up(right(OBJECT)), 1)  # level 2: shape, then colour, then neighbour
    return CarcQuery(grid(OBJECT, 3), target, roles, tuple(NEIGHBOR), 5, rotation)


def test_categories_are_decided_in_the_papers_order():
    q = query()
    cases = {
        "correct": q.target,
        "no_transformation": q.input,
        "primitive/shape": grid(right(OBJECT), 3),
        "primitive/color": grid(OBJECT, 1),
        "primitive/neighbor": grid(grow_up(OBJECT), 3),
        "level1/shape+color": grid(right(OBJECT), 1),
        "level1/shape+neighbor": grid(grow_up(right(OBJECT)), 3),
        "level1/color+neighbor": grid(grow_up(OBJECT), 1),
        "invalid_position": grid([(r + 4, c) for r, c in grow_up(right(OBJECT))], 1),
        "invalid_shape": grid([(r + 4, c) for r, c in OBJECT], 1),
        "other": grid([(r + 4, c) for r, c in OBJECT], 2),
        "format": np.zeros((9, 10), np.int8),
    }
    for expected, prediction in cases.items():
        assert classify_error(prediction, q) == expected, expected
    assert classify_error(None, q) == "format"
    assert classify_error(np.full((10, 10), 11), q) == "format"


def test_the_target_wins_over_an_equal_primitive_output():
    q = query(roles=(TRANSLATE_RIGHT, ("set_color", (("new_color", 3),)), GROW_UP))  # colour change to itself
    q = CarcQuery(q.input, grid(grow_up(right(OBJECT)), 3), q.roles, q.neighbor_cells, q.neighbor_color)
    assert classify_error(q.target, q) == "correct"
    assert classify_error(grid(grow_up(right(OBJECT)), 3), q) == "correct"


@pytest.mark.parametrize(("rotation", "cells"), [
    ("paper", [(2, 2), (2, 3), (1, 3)]),      # rotation_type 8 = counter-clockwise about the top-left cell
    ("reference", [(2, 2), (2, 1), (3, 1)]),  # rotation_type 8 = clockwise (the public code)
])
def test_rotation_mode_decides_the_primitive_candidate(rotation, cells):
    rotate = ("rotation", (("rotation_type", 8),))
    q = query(roles=(rotate, RED, GROW_UP), rotation=rotation)
    assert classify_error(grid(cells, 3), q) == "primitive/shape"


def test_rows_say_their_rotation_convention():
    from cogen.metrics.carc import queries_from_row

    row = {"query_inputs": [grid(OBJECT, 3)], "query_outputs": [grid(OBJECT, 1)],
           "transformations": ["rotation", "set_color", "grow"],
           "transformation_kwargs": ['{"rotation_type": 8}', '{"new_color": 1}', '{"direction": "-x"}'],
           "neighbor_indicator": [[7, 7]], "neighbor_color": 5}
    assert queries_from_row(row)[0].rotation == "paper"  # rows of cogen 1 have no column: the paper's convention
    assert queries_from_row({**row, "rotation_type_8": "clockwise"})[0].rotation == "reference"
    assert queries_from_row({**row, "rotation_type_8": "counter-clockwise"})[0].rotation == "paper"
    with pytest.raises(ValueError, match="not one of counter-clockwise, clockwise"):
        queries_from_row({**row, "rotation_type_8": "sideways"})


def test_invalid_primitives_give_no_candidate():
    edge = [(0, 5), (1, 5)]  # growing up leaves the grid
    q = CarcQuery(grid(edge, 3), grid(right(edge), 1), (TRANSLATE_RIGHT, RED, GROW_UP), tuple(NEIGHBOR), 5)
    categories = error_taxonomy([grid(edge, 1), grid(right(edge), 3)], [q, q])
    assert categories == ["primitive/color", "primitive/shape"]
    counts = taxonomy_counts(categories + ["correct"])
    assert list(counts) == list(ERROR_CATEGORIES) and counts["primitive/color"] == 1 and sum(counts.values()) == 2


def test_scores_on_well_formed_predictions():
    target = grid(OBJECT, 3)
    scores = score_queries([target, grid(right(OBJECT), 3), grid(OBJECT, 4), grid([(5, 5)], 3), None],
                           [target] * 5)
    assert scores.exact.tolist() == [True, False, False, False, False]
    assert scores.color.tolist() == [True, True, False, True, False]
    assert scores.shape.tolist() == [True, True, True, False, False]
    assert scores.color.tolist() == scores.color_counts.tolist()  # one object each: both forms agree
    assert scores.shape.tolist() == scores.shape_counts.tolist()
    assert scores.valid.tolist() == [True, True, True, True, False]


def forms(scores) -> tuple:
    """(set colour, count colour, set shape, count shape) of the first query."""
    return bool(scores.color[0]), bool(scores.color_counts[0]), bool(scores.shape[0]), bool(scores.shape_counts[0])


def test_set_and_count_forms_differ_on_ordinary_noise():
    target = grid(OBJECT, 3)
    stray = grid(OBJECT, 3)
    stray[0, 9] = 3  # one stray cell of a colour the target uses: same colour set, one object more;
    # the indicator N is one cell too, so even the set of shapes is the same
    assert forms(score_queries([stray], [target])) == (True, False, True, False)
    stray[0, 9] = 4  # a new colour: both colour forms fail
    assert forms(score_queries([stray], [target])) == (False, False, True, False)
    target, stray = grid(OBJECT, 3, neighbor=False), grid(OBJECT, 3, neighbor=False)
    stray[0, 9] = 3  # without a one-cell object in the target, the stray cell is a new shape
    assert forms(score_queries([stray], [target])) == (True, False, False, False)
    target = grid([(0, 0)], 1, neighbor=False)
    twice = grid([(0, 0), (5, 5)], 1, neighbor=False)  # a duplicated object: counts differ, sets agree
    assert forms(score_queries([twice], [target])) == (True, False, True, False)
    target[5, 5] = 5
    touching = grid([(0, 0)], 1, neighbor=False)
    touching[0, 1] = 5  # the two objects touch: one colour-agnostic component, two same-colour ones
    assert forms(score_queries([touching], [target])) == (True, True, False, True)


def test_normalised_shapes_ignore_position_but_not_orientation():
    target = grid([(0, 0), (0, 1)], 2, neighbor=False)
    assert score_queries([grid([(8, 3), (8, 4)], 2, neighbor=False)], [target]).shape[0]
    assert not score_queries([grid([(0, 0), (1, 0)], 2, neighbor=False)], [target]).shape[0]
