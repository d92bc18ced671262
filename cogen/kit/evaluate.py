"""What a family's ``evaluate.py`` (its ``evaluator`` role, the :class:`cogen.family.Evaluator` protocol) needs,
and :class:`GridEvaluator`, the whole evaluator of a family whose rows each have one answer grid.

Predictions files hold ``{"id", "prediction"}`` records (:func:`read_predictions`, :func:`write_predictions`);
:func:`align_predictions` puts them in the order of the split's ids, counting every format problem (missing,
duplicate, malformed) in a :class:`FormatReport` and scoring such a row as wrong.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from cogen.errors import EvalError
from cogen.eval import summary_rows
from cogen.eval._arrow import stack_column
from cogen.eval._text import percent
from cogen.eval.predictions import (
    GRID_BASELINES,
    FormatReport,
    RawPredictions,
    align_predictions,
    as_written,
    grid_baseline,
    read_predictions,
    read_records,
    write_predictions,
)
from cogen.folder import SplitData, read_split
from cogen.metrics.grids import GridStack

__all__ = ["GRID_BASELINES", "EvalError", "FormatReport", "GridEvaluator", "GridMatches", "GridStack", "RawPredictions",
           "SplitData", "align_predictions", "as_written", "grid_baseline", "percent", "read_predictions", "read_records",
           "read_split", "row_ids", "stack_column", "summary_rows", "write_predictions"]


def row_ids(split: SplitData) -> list[str]:
    """Every row's id, in order: the ids a family with one prediction per row expects."""
    return [str(name) for name in split.table.column("id").to_pylist()]


@dataclass(frozen=True)
class GridMatches:
    """Predicted grids against one grid column of a split, row by row: ``right`` (exact match), ``problems``
    (why a row has no usable prediction, or None), the predictions and targets as :class:`GridStack` s."""

    right: np.ndarray
    problems: list[str | None]
    report: FormatReport
    predictions: GridStack
    targets: GridStack

    @classmethod
    def of(cls, split: SplitData, raw: Any, column: str = "output") -> GridMatches:
        """The predictions ``raw`` (:func:`read_predictions`) matched against ``column`` of ``split``."""
        predictions, problems, report = align_predictions(raw, row_ids(split))
        targets = stack_column(split.table.column(column))[0]
        right = np.array([p is None and np.array_equal(predictions.grid(k), targets.grid(k))
                          for k, p in enumerate(problems)], bool)
        return cls(right, problems, report, predictions, targets)

    @property
    def valid(self) -> int:
        """Rows with a well-formed prediction."""
        return sum(p is None for p in self.problems)


@dataclass(frozen=True)
class GridEvaluator:
    """The :class:`cogen.family.Evaluator` of a family whose rows each have one answer grid (``output``) for one
    input grid (``input``): exact match (``grid_accuracy``), the ``identity``/``target``/``zeros`` baselines.

    A family names an instance as its ``evaluator`` role (``"cogen.families.<name>.evaluate:EVALUATOR"``), or
    subclasses it to add metrics (override :meth:`score` and :meth:`summary_rows`).
    """

    input: str = "input"
    output: str = "output"
    OPTIONS: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    HEADLINES: tuple[str, ...] = ("grid_accuracy",)
    BASELINES: tuple[str, ...] = GRID_BASELINES

    @staticmethod
    def read(path: Any) -> Any:
        """A predictions file (``.jsonl`` or ``.parquet``)."""
        return read_predictions(path)

    @staticmethod
    def write(path: Any, records: Any) -> int:
        """Write ``(id, grid)`` records; returns how many."""
        return write_predictions(path, records)

    def expected_ids(self, split: SplitData, **options: Any) -> list[str]:
        """One prediction per row."""
        return row_ids(split)

    def baseline(self, split: SplitData, kind: str, **options: Any) -> Iterator[tuple[str, Any]]:
        """The trivial predictions ``kind``: the input grid, the answer, or zeros of the input's size."""
        grids = {c: stack_column(split.table.column(c))[0] for c in (self.input, self.output)}
        return grid_baseline(row_ids(split), grids[self.input], grids[self.output], kind)

    def matches(self, split: SplitData, raw: Any) -> GridMatches:
        """The predictions matched row by row (what :meth:`score` counts, and the viewer draws)."""
        return GridMatches.of(split, raw, self.output)

    def score(self, split: SplitData, raw: Any, **options: Any) -> dict:
        """Exact match over every row; a missing or malformed prediction is wrong (and a format error)."""
        found = self.matches(split, raw)
        n, valid, right = len(found.right), found.valid, int(found.right.sum())
        return {"n": n, "n_valid": valid, "format_errors": found.report.as_dict(),
                "grid_accuracy": right / n if n else 0.0, "errors": {"format": n - valid, "other": valid - right}}

    def sample_scores(self, split: SplitData, raw: Any, **options: Any) -> list[dict]:
        """Each row's own scores: ``correct`` (exact match), ``valid`` (a well-formed prediction) and ``error``
        (why it is wrong: the prediction's problem, or ``wrong``); the mean of ``correct`` is ``grid_accuracy``."""
        found = self.matches(split, raw)
        return [{"id": name, "correct": bool(found.right[k]), "valid": found.problems[k] is None,
                 "error": None if found.right[k] else found.problems[k] or "wrong"}
                for k, name in enumerate(row_ids(split))]

    def summary_rows(self, metrics: dict) -> list[tuple[str, str]]:
        """Lines only this family adds to ``cogen eval``'s summary (none)."""
        return []
