"""COGITAO rows in ``cogen view``: input -> output under the named sequence, the frames strip with
each action (sequential builds), and a prediction beside the truth, scored as ``cogen eval`` does.

The :class:`~cogen.view.drawing.Viewer` of the ``cogitao`` family record.
"""

from __future__ import annotations

import numpy as np

from cogen.families.cogitao import evaluate
from cogen.kit.evaluate import align_predictions, as_written, summary_rows
from cogen.kit.view import Scored, arrow_item, grid_item, prediction_item, row_drawing

__all__ = ["COLUMNS", "FACETS", "FACET_COLUMNS", "SUMMARY_FACET", "draw", "facets", "score"]

COLUMNS = ("id", "input", "output", "transformations", "n_objects", "frames", "actions")
FACET_COLUMNS = ("transformations", "n_objects", "input")
FACETS = {"sequence": "sequence", "transformation": "transformation", "objects": "objects", "grid": "grid size"}
SUMMARY_FACET = "sequence"


def sequence_name(transformations) -> str:
    """A sequence as ``cogen eval`` names it in ``by_sequence``."""
    return " -> ".join(transformations) or "(identity)"


def facets(table) -> dict[str, object]:
    """Each row's sequence, transformations, object count and input grid size (``HxW``), as Arrow arrays."""
    import pyarrow as pa
    import pyarrow.compute as pc

    grids, sequences = table.column("input"), table.column("transformations")
    joined = pc.binary_join(sequences, " -> ")
    size = [pc.cast(pc.list_value_length(column), pa.string())
            for column in (grids, pc.list_element(grids, 0))]
    return {"sequence": pc.if_else(pc.equal(joined, ""), "(identity)", joined),
            "transformation": sequences,
            "objects": pc.cast(table.column("n_objects"), pa.string()),
            "grid": pc.binary_join_element_wise(size[0], size[1], "x")}


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
        pair.append(prediction_item("prediction", detail["prediction"], output, detail["problem"], detail.get("written")))
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
    expected = evaluate.expected_ids(split)
    aligned, problems, report = align_predictions(raw, expected)
    written = as_written(raw, expected)
    samples = evaluate.score_samples(split, aligned)
    metrics = evaluate.evaluate_cogitao(split, aligned, report, samples=samples)
    errors = samples.errors()
    s = samples.scores

    def detail(k: int) -> dict:
        lines = [("pixel accuracy", _percent(float(s.pixel[k]))), ("object pixels", _percent(float(s.object_pixel[k])))]
        if errors[k]:
            lines.append(("error", errors[k]))
        return {"prediction": None if problems[k] else samples.predictions.grid(k), "problem": problems[k],
                "written": written.get(k), "metrics": lines}

    return Scored(expected=np.ones(len(errors), np.int64), correct=s.exact.astype(np.int64),
                  errors=[(e,) if e else () for e in errors], detail=detail,
                  summary=summary_rows({"family": split.family, **metrics}), categories=evaluate.ERROR_CATEGORIES)
