"""The toy in ``cogen view``: input -> output, and a prediction beside the output."""

import numpy as np

from cogen.eval.predictions import align_predictions
from cogen.view.drawing import Scored, arrow_item, grid_item, prediction_item, row_drawing
from toy_family.evaluate import expected_ids, read

COLUMNS = ("id", "input", "output")
FACET_COLUMNS = ("input",)
FACETS = {"grid": "grid size"}
SUMMARY_FACET = "grid"


def facets(table):
    rows = [len(grid) for grid in table.column("input").to_pylist()]
    return {"grid": [f"{n}x{n}" for n in rows]}


def draw(row, manifest, detail=None):
    items = [grid_item("input", row["input"]), arrow_item("mirror"), grid_item("output", row["output"])]
    if detail is not None:
        items.append(prediction_item("prediction", *detail))
    return row_drawing(row["id"], "mirror", [], [("input -> output", items)])


def score(split, predictions):
    grids, problems, _ = align_predictions(read(predictions), expected_ids(split))
    outputs = split.table.column("output").to_pylist()
    right = np.array([p is None and grids.grid(k).tolist() == outputs[k] for k, p in enumerate(problems)], np.int64)
    return Scored(expected=np.ones(len(right), np.int64), correct=right, errors=[() if r else ("wrong",) for r in right],
                  detail=lambda k: (None if problems[k] else grids.grid(k), outputs[k], problems[k]), summary=[])
