"""Compositional-ARC rows in ``cogen view``: an episode, its study examples then its queries, and
each query's prediction beside the truth, classified by the error taxonomy as ``cogen eval`` does.

The :class:`~cogen.view.drawing.Viewer` of the ``carc`` family record. A predictions file whose
every id is a first query (``-q0``) is scored as ``cogen eval --queries first`` scores it.
"""

from __future__ import annotations

import numpy as np

from cogen.families.carc import evaluate
from cogen.kit.evaluate import align_predictions, as_written, summary_rows
from cogen.kit.view import Scored, arrow_item, grid_item, prediction_item, row_drawing
from cogen.metrics.carc import ERROR_CATEGORIES

__all__ = ["COLUMNS", "FACETS", "FACET_COLUMNS", "SUMMARY_FACET", "draw", "facets", "score"]

COLUMNS = ("id", "episode", "study_inputs", "study_outputs", "study_roles", "query_inputs", "query_outputs",
           "query_roles", "triplet", "transformations")
FACET_COLUMNS = ("triplet", "transformations")
FACETS = {"triplet": "triplet", "transformation": "transformation"}
SUMMARY_FACET = "triplet"


def facets(table) -> dict[str, object]:
    """Each episode's triplet and its transformation types, as Arrow arrays."""
    return {"triplet": table.column("triplet"), "transformation": table.column("transformations")}


def _pairs(kind: str, inputs, outputs, roles) -> list[tuple[str, list[dict]]]:
    return [(f"{kind} {j + 1}: {role}", [grid_item("input", i), arrow_item(), grid_item("output", o)])
            for j, (i, o, role) in enumerate(zip(inputs, outputs, roles, strict=True))]


def draw(row: dict, manifest: dict, detail: dict | None = None) -> dict:
    """The study examples, then each query (with its prediction when scored)."""
    panels = _pairs("study", row["study_inputs"], row["study_outputs"], row["study_roles"])
    queries = _pairs("query", row["query_inputs"], row["query_outputs"], row["query_roles"])
    facts = [("episode", row.get("episode")), ("transformations", ", ".join(row.get("transformations") or []))]
    for j, (title, items) in enumerate(queries):
        if detail is not None and j in detail:
            found = detail[j]
            items.append(prediction_item("prediction", found["prediction"], row["query_outputs"][j], found["problem"],
                                         found.get("written")))
            title += f" ({found['category']})"
        panels.append((title, items))
    return row_drawing(row["id"], row.get("triplet") or "", facts, panels)


def _queries_mode(raw) -> str:
    ids = [name for name in raw.ids if name]
    return "first" if ids and all(name.endswith("-q0") for name in ids) else "all"


def score(split, predictions) -> Scored:
    """Score a predictions file against ``split``, query by query, with ``cogen eval``'s own functions."""
    raw = evaluate.read(predictions)
    queries = _queries_mode(raw)
    index = evaluate.expected_queries(split, queries)
    aligned, problems, report = align_predictions(raw, index.ids)
    written = as_written(raw, index.ids)
    samples = evaluate.score_samples(split, aligned, index)
    metrics = {"queries": queries, **evaluate.evaluate_carc(split, aligned, report, index, samples=samples)}
    rows = split.table.num_rows
    expected = np.bincount(index.rows, minlength=rows).astype(np.int64)
    correct = np.bincount(index.rows, weights=samples.scores.exact, minlength=rows).astype(np.int64)
    by_row: list[dict] = [{} for _ in range(rows)]
    for k, (r, j) in enumerate(zip(index.rows.tolist(), index.numbers.tolist(), strict=True)):
        by_row[r][j] = {"prediction": None if problems[k] else aligned.grid(k), "problem": problems[k],
                        "written": written.get(k), "category": samples.categories[k]}
    errors = [tuple(dict.fromkeys(q["category"] for q in found.values() if q["category"] != "correct"))
              for found in by_row]
    return Scored(expected=expected, correct=correct, errors=errors, detail=lambda r: by_row[r],
                  summary=summary_rows({"family": split.family, **metrics}), categories=ERROR_CATEGORIES)
