"""COGITAO rows in ``cogen view``: input -> output under the named sequence, the frames strip with
each action (sequential builds), and a prediction beside the truth, scored as ``cogen eval`` does.

The :class:`~cogen.view.drawing.Viewer` of the ``cogitao`` family record.
"""

from __future__ import annotations

import numpy as np

from cogen.eval import summary_rows
from cogen.eval.predictions import align_predictions
from cogen.families.cogitao import evaluate
from cogen.view.drawing import Scored, arrow_item, grid_item, prediction_item, row_drawing

__all__ = ["COLUMNS", "FACETS", "FACET_COLUMNS", "SUMMARY_FACET", "draw", "facets", "score"]

COLUMNS = ("id", "input", "output", "transformations", "n_objects", "frames", "actions")
FACET_COLUMNS = ("transformations", "n_objects", "input")
FACETS = {"sequence": "sequence", "transformation": "transformation", "objects": "objects", "grid": "grid size"}
SUMMARY_FACET = "sequence"


def sequence_name(transformations) -> str:
    """A sequence as ``cogen eval`` names it in ``by_sequence``."""
    return " -> ".join(transformations) or "(identity)"


def facets(table) -> dict[str, list]:
    """Each row's sequence, transformations, object count and input grid size (``HxW``)."""
    import pyarrow.compute as pc

    grids = table.column("input")
    heights = pc.list_value_length(grids).to_numpy(zero_copy_only=False)
    widths = pc.list_value_length(pc.list_element(grids, 0)).to_numpy(zero_copy_only=False)
    sequences = table.column("transformations").to_pylist()
    return {"sequence": [sequence_name(s) for s in sequences],
            "transformation": sequences,
            "objects": [str(n) for n in table.column("n_objects").to_pylist()],
            "grid": [f"{h}x{w}" for h, w in zip(heights.tolist(), widths.tolist(), strict=True)]}


def _frames(row: dict) -> list[dict]:
    frames, actions = row.get("frames"), row.get("actions") or []
    items = [grid_item("input", frames[0])]
    for step, (frame, action) in enumerate(zip(frames[1:], actions, strict=False), start=1):
        items += [arrow_item(action), grid_item(f"step {step}", frame)]
    return items


def draw(row: dict, manifest: dict, detail: dict | None = None) -> dict:
    """Input -> output (and the prediction), the frames strip when the row has frames."""
    sequence = sequence_name(row["transformations"])
    output = row["output"]
    pair = [grid_item("input", row["input"]), arrow_item(sequence), grid_item("output", output)]
    facts = [("objects", row.get("n_objects")), ("grid", f"{len(row['input'])}x{len(row['input'][0])}"),
             ("output", f"{len(output)}x{len(output[0])}")]
    if detail is not None:
        pair.append(prediction_item("prediction", detail["prediction"], output, detail["problem"]))
        facts += detail["metrics"]
    panels = [("input -> output", pair)]
    if row.get("frames"):
        panels.append(("frames", _frames(row)))
    return row_drawing(row["id"], sequence, facts, panels)


def _percent(value: float) -> str:
    return "–" if np.isnan(value) else f"{100 * value:.1f} %"


def score(split, predictions) -> Scored:
    """Score a predictions file against ``split`` row by row, with ``cogen eval``'s own functions."""
    raw = evaluate.read(predictions)
    aligned, problems, report = align_predictions(raw, evaluate.expected_ids(split))
    samples = evaluate.score_samples(split, aligned)
    metrics = evaluate.evaluate_cogitao(split, aligned, report, samples=samples)
    errors = samples.errors()
    s = samples.scores

    def detail(k: int) -> dict:
        lines = [("pixel accuracy", _percent(float(s.pixel[k]))), ("object pixels", _percent(float(s.object_pixel[k])))]
        if errors[k]:
            lines.append(("error", errors[k]))
        return {"prediction": None if problems[k] else samples.predictions.grid(k), "problem": problems[k],
                "metrics": lines}

    return Scored(expected=np.ones(len(errors), np.int64), correct=s.exact.astype(np.int64),
                  errors=[(e,) if e else () for e in errors], detail=detail,
                  summary=summary_rows({"family": split.family, **metrics}), categories=evaluate.ERROR_CATEGORIES)
