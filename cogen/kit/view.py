"""What a family's ``view.py`` (its ``viewer`` role, the :class:`Viewer` protocol) needs: the items a row is
drawn with, :class:`Scored`, and :class:`GridViewer`, the whole viewer of a family whose rows are one input grid
and one answer grid (with :class:`cogen.kit.evaluate.GridEvaluator`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from cogen.kit.evaluate import GridEvaluator, as_written, row_ids
from cogen.view.drawing import Scored, Viewer, arrow_item, grid_item, prediction_item, row_drawing, text_item

__all__ = ["GridViewer", "Scored", "Viewer", "arrow_item", "grid_item", "prediction_item", "row_drawing", "text_item"]


@dataclass(frozen=True)
class GridViewer:
    """A :class:`Viewer` of rows ``input -> output``: titled ``title``, filtered by input grid size, a prediction
    drawn beside the output and scored by ``evaluator``'s exact match.

    A family names an instance as its ``viewer`` role, or subclasses it for more facets or facts.
    """

    title: str
    evaluator: GridEvaluator = field(default_factory=GridEvaluator)
    FACETS: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({"grid": "grid size"}))
    SUMMARY_FACET: str | None = "grid"

    @property
    def COLUMNS(self) -> tuple[str, ...]:  # noqa: N802  (the Viewer protocol's name)
        """The columns :meth:`draw` reads."""
        return ("id", self.evaluator.input, self.evaluator.output)

    @property
    def FACET_COLUMNS(self) -> tuple[str, ...]:  # noqa: N802
        """The columns :meth:`facets` reads."""
        return (self.evaluator.input,)

    def facets(self, table: Any) -> dict[str, Any]:
        """Each row's input grid size, ``HxW``."""
        grids = table.column(self.evaluator.input).to_pylist()
        return {"grid": [f"{len(grid)}x{len(grid[0]) if grid else 0}" for grid in grids]}

    def draw(self, row: dict, manifest: dict, detail: Any = None) -> dict:
        """Input -> output, and the prediction beside it."""
        output = row[self.evaluator.output]
        items = [grid_item("input", row[self.evaluator.input]), arrow_item(self.title), grid_item("output", output)]
        if detail is not None:
            items.append(prediction_item("prediction", detail[0], output, detail[1], detail[2]))
        return row_drawing(row["id"], self.title, [], [("input -> output", items)])

    def score(self, split: Any, predictions: Any) -> Scored:
        """Every row scored by exact match, as ``cogen eval`` scores it."""
        raw = self.evaluator.read(predictions)
        found = self.evaluator.matches(split, raw)
        right = found.right.astype(np.int64)
        written = as_written(raw, row_ids(split))  # malformed predictions as written, drawn as they are

        def detail(k: int) -> tuple:
            return (None if found.problems[k] else found.predictions.grid(k), found.problems[k], written.get(k))

        return Scored(expected=np.ones(len(right), np.int64), correct=right,
                      errors=[() if r else ("format",) if found.problems[k] else ("wrong",) for k, r in enumerate(right)],
                      detail=detail, summary=[])
