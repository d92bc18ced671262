"""Score predictions against a Compositional-ARC split: one prediction per query.

A row of a Compositional-ARC config is an episode with several queries; query ``j`` of row
``<id>`` is predicted under the id ``<id>-q<j>`` (:func:`query_id`). ``queries="first"`` expects
only query 0 of each episode, as the paper does for general-purpose LLMs.

``color_accuracy`` and ``shape_accuracy`` are the reference's set-based forms, the numbers of the
paper's tables; ``color_accuracy_counts`` and ``shape_accuracy_counts`` are the count-based forms
of the paper's App. D.1 wording (see :mod:`cogen.metrics.carc`). Both appear overall and in every
breakdown.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from cogen.errors import EvalError
from cogen.folder import SplitData
from cogen.kit.evaluate import (
    GRID_BASELINES,
    FormatReport,
    RawPredictions,
    align_predictions,
    grid_baseline,
    read_predictions,
    write_predictions,
)
from cogen.metrics.carc import ERROR_CATEGORIES, CarcQuery, CarcScores, error_taxonomy, score_queries
from cogen.metrics.grids import GridStack

__all__ = ["BASELINES", "baseline", "read", "write", "HEADLINES", "OPTIONS", "QUERY_MODES", "QueryIndex", "evaluate_carc", "expected_ids", "expected_queries",
           "query_grids", "query_id", "reference_grids", "Samples", "sample_scores", "score", "score_samples", "summary_rows"]

#: Which queries of each episode are expected: all of them, or the first (the paper's LLM protocol).
QUERY_MODES = ("all", "first")
#: Options of ``cogen eval`` for Compositional-ARC configs, with their defaults (see :func:`score`).
OPTIONS = {"queries": "all"}
#: Reads and writes a predictions file (``id``, ``prediction`` grid) for :func:`score`.
read, write = read_predictions, write_predictions
#: The trivial predictions :func:`baseline` makes.
BASELINES = GRID_BASELINES
#: The metrics ``cogen eval`` prints first.
HEADLINES = ("exact_match", "exact_match_valid", "color_accuracy", "shape_accuracy", "color_accuracy_counts",
             "shape_accuracy_counts", "valid_rate")


def query_id(row_id: str, query: int) -> str:
    """The prediction id of query ``query`` of row ``row_id``."""
    return f"{row_id}-q{query}"


@dataclass(frozen=True)
class QueryIndex:
    """The expected queries of a split: prediction ``ids``, their episode ``rows``, their ``numbers``
    within the episode and their ``positions`` among all the split's queries (row-major)."""

    ids: list[str]
    rows: np.ndarray
    numbers: np.ndarray
    positions: np.ndarray


def expected_queries(split: SplitData, queries: str = "all") -> QueryIndex:
    """The queries of ``split`` that predictions are expected for (``all``, or the ``first`` of each episode)."""
    import pyarrow.compute as pc

    if queries not in QUERY_MODES:
        raise EvalError(f"queries must be one of {', '.join(QUERY_MODES)}, not {queries!r}")
    counts = np.asarray(pc.list_value_length(split.table.column("query_inputs")).fill_null(0), np.int64)
    rows = np.repeat(np.arange(len(counts)), counts)
    numbers = np.arange(len(rows)) - np.repeat(np.cumsum(counts) - counts, counts)
    keep = np.ones(len(rows), bool) if queries == "all" else numbers == 0
    row_ids = split.table.column("id").to_pylist()
    ids = [query_id(row_ids[r], int(q)) for r, q in zip(rows[keep], numbers[keep], strict=True)]
    return QueryIndex(ids, rows[keep], numbers[keep], np.flatnonzero(keep))


def expected_ids(split: SplitData, queries: str = "all") -> list[str]:
    """The prediction ids a split expects: ``<row id>-q<j>`` for every expected query."""
    return expected_queries(split, queries).ids


def reference_grids(split: SplitData, column: str, queries: str = "all") -> GridStack:
    """The query ``input`` or ``output`` grid of every expected id."""
    return query_grids(split, f"query_{column}s", expected_queries(split, queries).positions)


def baseline(split: SplitData, kind: str, queries: str = "all") -> Iterator[tuple[str, object]]:
    """``(id, grid)`` of a trivial baseline of :data:`BASELINES` for every expected query."""
    return grid_baseline(expected_ids(split, queries), reference_grids(split, "input", queries),
                         reference_grids(split, "output", queries), kind)


def score(split: SplitData, raw: RawPredictions, queries: str = "all") -> dict:
    """Align ``raw`` predictions with the expected queries and compute every metric (:func:`evaluate_carc`)."""
    index = expected_queries(split, queries)
    aligned, _, report = align_predictions(raw, index.ids)
    return {"queries": queries, **evaluate_carc(split, aligned, report, index)}


def sample_scores(split: SplitData, raw: RawPredictions, queries: str = "all") -> list[dict]:
    """Each expected query's own scores, as :func:`score` counts them: ``correct`` (exact match),
    ``valid``, ``error`` (the taxonomy's category), ``problem`` (why no grid was read), ``color``,
    ``shape``, ``color_counts``, ``shape_counts``: their means are the metrics."""
    index = expected_queries(split, queries)
    aligned, problems, _ = align_predictions(raw, index.ids)
    samples = score_samples(split, aligned, index)
    s = samples.scores
    return [{"id": name, "correct": bool(s.exact[k]), "valid": bool(s.valid[k]),
             "error": None if samples.categories[k] == "correct" else samples.categories[k], "problem": problems[k],
             "color": float(s.color[k]), "shape": float(s.shape[k]), "color_counts": float(s.color_counts[k]),
             "shape_counts": float(s.shape_counts[k])} for k, name in enumerate(index.ids)]


def summary_rows(metrics: dict) -> list[tuple[str, str]]:
    """Compositional-ARC adds no lines to ``cogen eval``'s summary beyond its headline metrics."""
    return []


def query_grids(split: SplitData, column: str, positions: np.ndarray) -> GridStack:
    """The grids of a per-query column (``query_inputs``, ``query_outputs``) at ``positions``."""
    from cogen.kit.evaluate import stack_column

    grids, _ = stack_column(split.table.column(column).combine_chunks().flatten())
    return grids.take(positions)


def _queries(split: SplitData, rows: np.ndarray, inputs: GridStack, targets: GridStack) -> list[CarcQuery]:
    """The taxonomy's view of each expected query (each episode's grammar read once)."""
    columns = {name: split.table.column(name).to_pylist()
               for name in ("transformations", "transformation_kwargs", "neighbor_indicator", "neighbor_color")}
    rotation = _rotation(split)
    grammars = {}
    for r in dict.fromkeys(rows.tolist()):
        roles = tuple((name, tuple(json.loads(kwargs).items()))
                      for name, kwargs in zip(columns["transformations"][r], columns["transformation_kwargs"][r], strict=True))
        cells = tuple((int(a), int(b)) for a, b in columns["neighbor_indicator"][r])
        grammars[r] = (roles, cells, int(columns["neighbor_color"][r]))
    return [CarcQuery(inputs.grid(k), targets.grid(k), *grammars[r], rotation) for k, r in enumerate(rows.tolist())]


def _rotation(split: SplitData) -> str:
    """The split's rotation mode: from its rows' ``rotation_type_8``, else (older data) its manifest."""
    from cogen.carc.grammar import rotation_mode

    if "rotation_type_8" in split.table.column_names and split.table.num_rows:
        turns = set(split.table.column("rotation_type_8").unique().to_pylist())
        if len(turns) != 1:
            raise EvalError(f"{split.config}/{split.split}: rows disagree on what rotation_type 8 does: "
                            f"{sorted(turns)}")
        try:
            return rotation_mode(turns.pop())
        except ValueError as error:
            raise EvalError(f"{split.config}/{split.split}: {error}") from None
    return split.manifest.get("spec", {}).get("rotation", "paper")


def _summary(scores: CarcScores, mask: np.ndarray) -> dict:
    n = int(mask.sum())

    def mean(values):
        return float(values[mask].mean()) if n else float("nan")

    return {"n": n, "exact_match": mean(scores.exact), "color_accuracy": mean(scores.color),
            "shape_accuracy": mean(scores.shape), "color_accuracy_counts": mean(scores.color_counts),
            "shape_accuracy_counts": mean(scores.shape_counts), "format_errors": int((~scores.valid[mask]).sum())}


def _breakdowns(split: SplitData, rows: np.ndarray, scores: CarcScores) -> dict:
    triplets = np.array(split.table.column("triplet").to_pylist(), object)[rows]
    all_types = split.table.column("transformations").to_pylist()
    types = [all_types[r] for r in rows]
    by_triplet = {name: _summary(scores, triplets == name) for name in sorted(set(triplets))}
    names = sorted({name for row in types for name in row})
    by_transformation = {name: _summary(scores, np.array([name in row for row in types], bool)) for name in names}
    return {"by_transformation": by_transformation, "by_triplet": by_triplet}


@dataclass(frozen=True)
class Samples:
    """Every expected query's scores and error category (``correct`` when right), before averaging."""

    predictions: GridStack
    inputs: GridStack
    targets: GridStack
    scores: CarcScores
    categories: list[str]


def score_samples(split: SplitData, predictions: GridStack, index: QueryIndex) -> Samples:
    """Score every expected query of ``index`` against ``predictions`` (aligned with ``index.ids``)."""
    inputs = query_grids(split, "query_inputs", index.positions)
    targets = query_grids(split, "query_outputs", index.positions)
    scores = score_queries(predictions, targets)
    categories = error_taxonomy(predictions, _queries(split, index.rows, inputs, targets), scores)
    return Samples(predictions, inputs, targets, scores, categories)


def evaluate_carc(split: SplitData, predictions: GridStack, report: FormatReport, index: QueryIndex,
                  samples: Samples | None = None) -> dict:
    """The metrics of a Compositional-ARC split as a JSON-ready dict (see ``docs/evaluation.md``);
    ``samples``: the :func:`score_samples` of the same arguments, when the caller already has them."""
    rows = index.rows
    samples = samples or score_samples(split, predictions, index)
    scores, categories = samples.scores, samples.categories
    counts = Counter(categories)
    errors = {name: counts.get(name, 0) for name in ERROR_CATEGORIES}
    n, valid, wrong = len(scores), scores.valid, sum(errors.values())

    def mean(values, mask=None):
        values = values if mask is None else values[mask]
        return float(values.mean()) if len(values) else float("nan")

    metrics = {
        "n": n, "n_valid": int(valid.sum()), "valid_rate": mean(valid.astype(float)),
        "format_errors": report.as_dict(),
        "grid_accuracy": mean(scores.exact), "exact_match": mean(scores.exact),
        "exact_match_valid": mean(scores.exact, valid),
        "color_accuracy": mean(scores.color), "shape_accuracy": mean(scores.shape),
        "color_accuracy_counts": mean(scores.color_counts), "shape_accuracy_counts": mean(scores.shape_counts),
        "errors": errors,
        "error_shares": {name: count / wrong if wrong else 0.0 for name, count in errors.items()},
    }
    metrics.update(_breakdowns(split, rows, scores))
    return metrics
