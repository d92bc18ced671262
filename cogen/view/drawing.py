"""What the page draws, and what a family's viewer gives it: JSON-ready pieces and two records.

A row is drawn as a dict (:func:`row_drawing`): its ``id``, a ``title`` (what the row is
about, such as its transformation sequence), ``facts`` (name, value pairs) and ``panels``, each a titled strip of
*items*: a grid (:func:`grid_item`), an arrow with a label between grids (:func:`arrow_item`),
or a line of text (:func:`text_item`). A prediction is a grid item with the truth's size and the
cells where it differs from the truth marked (:func:`prediction_item`); a malformed one is drawn as the
model wrote it (rows of cells, a cell that is no colour hatched; or its JSON text). The page puts every
string it receives into the document as text, never as markup.

A family's ``viewer`` (:attr:`cogen.families.Family.viewer`) is a module that satisfies
:class:`Viewer`; its ``score`` returns a :class:`Scored` with one entry per row.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

__all__ = ["Scored", "Viewer", "arrow_item", "grid_item", "prediction_item", "row_drawing", "text_item"]


def _cells(grid) -> list[list[int]]:
    return np.asarray(grid, dtype=np.int64).tolist() if grid is not None else []


def grid_item(label: str, grid) -> dict:
    """A grid of colours 0-9 (a 2-D array or nested lists) under ``label``."""
    return {"kind": "grid", "label": str(label), "cells": _cells(grid)}


def arrow_item(label: str = "") -> dict:
    """An arrow between two grids, with an optional label (a transformation's name)."""
    return {"kind": "arrow", "label": str(label)}


def text_item(label: str, text: str) -> dict:
    """A short labelled text (a string input, a program's failure)."""
    return {"kind": "text", "label": str(label), "text": str(text)}


#: The most rows and cells a side of a malformed prediction the page draws as cells.
MAX_DRAWN_SIDE = 64


def _written_item(label: str, problem: str, written) -> dict:
    """A malformed prediction as the model wrote it: rows of cells (a cell that is no colour 0-9 marked
    ``bad``, drawn hatched, its value kept), or, when it is no list of rows, its JSON text."""
    rows = written if isinstance(written, list) and written and all(isinstance(r, list) for r in written) else None
    if rows is not None and len(rows) <= MAX_DRAWN_SIDE and all(len(r) <= MAX_DRAWN_SIDE for r in rows) and \
            all(not isinstance(v, (list, dict)) for r in rows for v in r):
        cells = [[v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 9 else None for v in r] for r in rows]
        bad = [[i, j, json.dumps(v)[:24]] for i, r in enumerate(rows) for j, v in enumerate(r) if cells[i][j] is None]
        return {"kind": "written", "label": str(label), "text": problem, "rows": cells, "bad": bad}
    text = written if isinstance(written, str) else json.dumps(written)
    return {"kind": "written", "label": str(label), "text": problem, "json": text[:2000]}


def prediction_item(label: str, prediction, truth, problem: str | None = None, written=None) -> dict:
    """A predicted grid beside ``truth``: ``marks`` lists the ``[row, col]`` cells that differ
    (a cell the other grid lacks counts as different); ``problem`` says why there is no grid, and
    ``written`` (a malformed prediction as written) is drawn as it is."""
    if prediction is None:
        if written is not None and problem not in (None, "missing", "null", "duplicate id"):
            return _written_item(label, problem, written)
        return {"kind": "missing", "label": str(label), "text": problem or "no prediction"}
    cells, target = np.asarray(prediction, np.int64), np.asarray(truth, np.int64)
    marks = [[r, c] for r in range(cells.shape[0]) for c in range(cells.shape[1])
             if r >= target.shape[0] or c >= target.shape[1] or cells[r, c] != target[r, c]]
    item = {"kind": "grid", "label": str(label), "cells": cells.tolist(), "marks": marks, "right": not marks}
    if cells.shape != target.shape:
        item["right"] = False
        item["note"] = f"{cells.shape[0]}x{cells.shape[1]}, the truth is {target.shape[0]}x{target.shape[1]}"
    return item


def row_drawing(row_id: str, title: str, facts: list[tuple[str, Any]], panels: list[tuple[str, list[dict]]]) -> dict:
    """One row as the page draws it (see the module docstring)."""
    return {"id": str(row_id), "title": str(title), "facts": [[str(k), str(v)] for k, v in facts],
            "panels": [{"title": str(t), "items": items} for t, items in panels]}


@dataclass(frozen=True)
class Scored:
    """A predictions file scored against one split, row by row, as ``cogen eval`` scores it.

    ``expected`` and ``correct`` count each row's expected predictions and the right ones (a row
    of one sample expects one, an episode one per query); ``errors`` lists each
    row's error categories (empty for a right row); ``detail(row)`` is what the family's
    ``draw`` needs for that row; ``summary`` the headline lines of ``cogen eval``.
    """

    expected: np.ndarray
    correct: np.ndarray
    errors: list[tuple[str, ...]]
    detail: Callable[[int], Any]
    summary: list[tuple[str, str]]
    categories: tuple[str, ...] = ()

    @property
    def wrong(self) -> np.ndarray:
        """Rows with at least one wrong (or missing, or malformed) prediction."""
        return self.correct < self.expected


class Viewer(Protocol):
    """A family's part of ``cogen view``, implemented by a module ``cogen/families/<name>/view.py``.

    ``COLUMNS`` are the columns :func:`draw` reads; ``FACETS`` maps each filter's name to its
    label, and :func:`facets` gives every row's values of each as an Arrow array of strings or of
    lists of strings (from a table of the ``FACET_COLUMNS``, one batch of the split at a time);
    ``SUMMARY_FACET`` names the facet the accuracy bar groups by.
    """

    COLUMNS: tuple[str, ...]
    FACET_COLUMNS: tuple[str, ...]
    FACETS: Mapping[str, str]
    SUMMARY_FACET: str | None

    def facets(self, table: Any) -> dict[str, Any]: ...

    def draw(self, row: dict, manifest: dict, detail: Any = None) -> dict: ...

    def score(self, split: Any, predictions: Any) -> Scored: ...
