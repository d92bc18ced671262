"""Compositional-ARC metrics (public code ``vmlc/model/metrics.py``, paper App. D.1) and the
error taxonomy of the paper's Sec. 5.2, decided in a fixed order.

Scores, per query, for a prediction ``P`` and target ``T`` (10 x 10 grids; a prediction that is
not a 10 x 10 grid of 0..9 is a *format* error and scores 0 everywhere, as a prediction with an
undecodable cell scores 0 in the reference):

* ``exact``: ``P == T``.
* ``color`` (set-based: the metric behind the paper's tables, the reference's ``compute_accuracy``):
  the sets of non-zero values of ``P`` and ``T`` are equal.
* ``shape`` (set-based, the reference's ``compute_accuracy``): the *sets* of normalised shapes
  (cells moved to the top-left) are equal, objects being 8-connected components with colours
  ignored (touching objects of two colours merge).
* ``color_counts`` (count-based, the paper's App. D.1 wording): for every colour 1..9, ``P`` and
  ``T`` hold the same number of objects of that colour, objects being same-colour 8-connected
  components.
* ``shape_counts`` (count-based, App. D.1): for every normalised shape, ``P`` and ``T`` hold the
  same number of same-colour objects of that shape.

The two forms differ whenever ``P`` holds another number of objects of a colour or shape that
``T`` has: a stray cell of a colour the target uses, a duplicated object, two objects that touch.
That is ordinary model noise, not a corner case: with one stray cell added to each of 5,000 cogen
query targets (a uniform empty cell, a uniform colour 1..9), colour accuracy is 20.9 % set-based
and 2.3 % count-based, shape accuracy 11.7 % and 0 %. Report the set-based forms to compare with
the paper.

Error categories (:data:`ERROR_CATEGORIES`), for a wrong prediction, the first that applies:

1. ``format``: missing, malformed or not 10 x 10;
2. (``correct``: equal to the target — not an error);
3. ``no_transformation``: equal to the query input;
4. ``primitive/<role>``: equal to ``N + T(o)`` for the role's primitive ``T`` (roles in the order
   shape, color, neighbor), ``o`` the query's object and ``N`` the indicator object;
5. ``level1/<pair>``: equal to ``N + T2(T1(o))`` for the pairs (shape, color), (shape, neighbor),
   (color, neighbor), applied in that order; a step that is invalid gives no candidate;
6. ``invalid_position``: ``color_counts`` and ``shape_counts`` are both 1 (the right objects,
   counted, in the wrong place);
7. ``invalid_shape``: ``color_counts`` is 1;
8. ``other``.

The taxonomy needs each query's grammar: a :class:`CarcQuery` (see :func:`queries_from_row` for
the adapter from ``cogen build`` rows). Primitives are re-applied with the Compositional-ARC
primitive kernels of :mod:`cogen.carc`, loaded on first use.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cogen.metrics.grids import GridStack, as_stack, check_grid
from cogen.metrics.objects import label_stack

__all__ = ["ERROR_CATEGORIES", "ROLE_PAIRS", "ROLES", "SIDE", "CarcQuery", "CarcScores", "classify_error",
           "error_taxonomy", "queries_from_row", "score_queries", "taxonomy_counts"]

#: Compositional-ARC grids are 10 x 10.
SIDE = 10
#: The indicator roles in composition order (shape, then colour, then neighbour).
ROLES = ("shape", "color", "neighbor")
#: The level-1 pairs in the paper's order; the first role is applied first.
ROLE_PAIRS = (("shape", "color"), ("shape", "neighbor"), ("color", "neighbor"))
#: Every error category, in the order they are decided.
ERROR_CATEGORIES = ("format", "no_transformation", *(f"primitive/{r}" for r in ROLES),
                    *(f"level1/{a}+{b}" for a, b in ROLE_PAIRS), "invalid_position", "invalid_shape", "other")


@dataclass(frozen=True)
class CarcQuery:
    """What the taxonomy needs to know about one level-2 query.

    ``roles``: the shape, colour and neighbour roles' transformations as ``(name, kwargs)``, with
    names and kwargs as Compositional-ARC's metadata writes them (``("translation", (("direction",
    "x"), ("step_size", 1)))``). ``neighbor_cells``: the indicator object's (row, col) cells and
    ``neighbor_color`` its colour. ``rotation``: ``"paper"`` (``rotation_type`` 8 is
    counter-clockwise) or ``"reference"`` (8 is clockwise, as the public code).
    """

    input: np.ndarray
    target: np.ndarray
    roles: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]
    neighbor_cells: tuple[tuple[int, int], ...]
    neighbor_color: int
    rotation: str = "paper"


def queries_from_row(row: Mapping, rotation: str | None = None) -> list[CarcQuery]:
    """The queries of one row of a ``cogen build`` Compositional-ARC config (columns
    ``query_inputs``, ``query_outputs``, ``transformations``, ``transformation_kwargs`` (JSON),
    ``neighbor_indicator``, ``neighbor_color``). ``rotation`` ``None`` reads the row's
    ``rotation_type_8`` (rows of cogen before generator 2 lack it: ``paper``)."""
    if rotation is None:
        from cogen.carc.grammar import rotation_mode

        rotation = rotation_mode(row["rotation_type_8"]) if "rotation_type_8" in row else "paper"
    roles = tuple((name, tuple(json.loads(kwargs).items()))
                  for name, kwargs in zip(row["transformations"], row["transformation_kwargs"], strict=True))
    cells = tuple((int(r), int(c)) for r, c in row["neighbor_indicator"])
    return [CarcQuery(np.asarray(q_in, np.int8), np.asarray(q_out, np.int8), roles, cells, int(row["neighbor_color"]),
                      rotation)
            for q_in, q_out in zip(row["query_inputs"], row["query_outputs"], strict=True)]


@dataclass(frozen=True)
class CarcScores:
    """Per-query scores (arrays of length n); see the module docstring. ``color`` and ``shape`` are
    the reference's set-based forms, ``color_counts`` and ``shape_counts`` the count-based ones."""

    valid: np.ndarray
    exact: np.ndarray
    color: np.ndarray
    shape: np.ndarray
    color_counts: np.ndarray
    shape_counts: np.ndarray

    def __len__(self) -> int:
        return len(self.valid)


def _well_formed(predictions: GridStack) -> np.ndarray:
    return predictions.present & (predictions.heights == SIDE) & (predictions.widths == SIDE)


def _objects(cells: np.ndarray, same_color: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(counts, masks, colors)``: each grid's objects' normalised shapes and colours."""
    from cogen.metrics._kernels import component_shapes

    labels, counts = label_stack(cells, same_color)
    masks = np.zeros((len(cells), SIDE * SIDE, 2), np.uint64)
    colors = np.zeros((len(cells), SIDE * SIDE), np.int8)
    component_shapes(cells, labels, counts, masks, colors)
    return counts, masks, colors


def _sorted_shapes(counts: np.ndarray, masks: np.ndarray, unique: bool) -> np.ndarray:
    """Each grid's shape masks sorted (unused slots all ones), duplicates dropped when ``unique``."""
    keys = masks.copy()  # the caller passes only the first ``max(counts)`` slots
    keys[np.arange(keys.shape[1])[None, :] >= counts[:, None]] = np.iinfo(np.uint64).max
    for word in (1, 0):  # least significant word first: a stable sort by each gives lexicographic order
        order = np.argsort(keys[:, :, word], axis=1, kind="stable")
        keys = np.take_along_axis(keys, order[:, :, None], axis=1)
    if unique:
        repeat = np.zeros(keys.shape[:2], bool)
        repeat[:, 1:] = (keys[:, 1:] == keys[:, :-1]).all(axis=2)
        keys[repeat] = np.iinfo(np.uint64).max
        return _sorted_shapes(np.full(len(keys), keys.shape[1]), keys, unique=False)
    return keys


def _same_shapes(p_count, p_masks, t_count, t_masks, unique: bool) -> np.ndarray:
    """Per grid, whether prediction and target hold the same shapes (as multisets, or as sets)."""
    slots = max(1, int(p_count.max(initial=0)), int(t_count.max(initial=0)))
    p_keys = _sorted_shapes(p_count, p_masks[:, :slots], unique)
    t_keys = _sorted_shapes(t_count, t_masks[:, :slots], unique)
    return (p_keys == t_keys).all(axis=(1, 2))


def _color_counts(counts: np.ndarray, colors: np.ndarray) -> np.ndarray:
    used = np.arange(colors.shape[1])[None, :] < counts[:, None]
    histogram = np.zeros((len(colors), 10), np.int64)
    rows, slots = np.nonzero(used)
    np.add.at(histogram, (rows, colors[rows, slots]), 1)
    return histogram


def _color_sets(cells: np.ndarray) -> np.ndarray:
    return (cells[:, :, :, None] == np.arange(1, 10, dtype=np.int8)).any(axis=(1, 2))


def score_queries(predictions, targets) -> CarcScores:
    """Exact match, colour and shape accuracy in both forms, per query (see the module docstring)."""
    predictions, targets = as_stack(predictions), as_stack(targets)
    valid = _well_formed(predictions)
    p = np.where(valid[:, None, None], predictions.canvas(SIDE, SIDE), 0).astype(np.int8)
    t = targets.canvas(SIDE, SIDE)
    exact = valid & (p == t).all(axis=(1, 2))
    color = (_color_sets(p) == _color_sets(t)).all(axis=1)
    p_count, p_masks, _ = _objects(p, same_color=False)
    t_count, t_masks, _ = _objects(t, same_color=False)
    shape = _same_shapes(p_count, p_masks, t_count, t_masks, unique=True)
    p_count, p_masks, p_colors = _objects(p, same_color=True)
    t_count, t_masks, t_colors = _objects(t, same_color=True)
    color_counts = (_color_counts(p_count, p_colors) == _color_counts(t_count, t_colors)).all(axis=1)
    shape_counts = _same_shapes(p_count, p_masks, t_count, t_masks, unique=False)
    return CarcScores(valid, exact, valid & color, valid & shape, valid & color_counts, valid & shape_counts)


# ---------------------------------------------------------------- error taxonomy
@functools.lru_cache(maxsize=4096)
def _params(role: tuple[str, tuple], rotation: str) -> tuple[int, int, int]:
    """The primitive kernel's ``(kind, a, b)`` of a role's transformation."""
    from cogen.carc.grammar import Variant

    return Variant(role[0], tuple(role[1])).params(rotation)


def _apply(params: tuple[int, int, int], obj: tuple[np.ndarray, np.ndarray, int]):
    """One primitive applied to an object ``(rows, cols, colour)``; None when the reference deems it invalid."""
    from cogen.carc._kernels import transform

    rows, cols, color = obj
    size = max(64, 4 * len(rows))
    cells = np.zeros((4, size), np.int64)
    cells[0, : len(rows)], cells[1, : len(cols)] = rows, cols
    count, new_color = transform(*params, cells[0], cells[1], len(rows), color, cells[2], cells[3])
    return None if count < 0 else (cells[2, :count], cells[3, :count], int(new_color))


def _candidates(query: CarcQuery):
    """Yield ``(category, grid)``: ``N + T(o)`` per role, then ``N + T2(T1(o))`` per pair."""
    neighbor = np.zeros((SIDE, SIDE), bool)
    for r, c in query.neighbor_cells:
        neighbor[r, c] = True
    rows, cols = np.nonzero((query.input > 0) & ~neighbor)
    if len(rows) == 0:
        return
    obj = (rows.astype(np.int64), cols.astype(np.int64), int(query.input[rows[0], cols[0]]))
    base = np.where(neighbor, query.neighbor_color, 0).astype(np.int8)
    params = {name: _params(role, query.rotation) for name, role in zip(ROLES, query.roles, strict=True)}
    once = {name: _apply(params[name], obj) for name in ROLES}
    for name in ROLES:
        if once[name] is not None:
            yield f"primitive/{name}", _render(base, once[name])
    for first, second in ROLE_PAIRS:
        out = None if once[first] is None else _apply(params[second], once[first])
        if out is not None:
            yield f"level1/{first}+{second}", _render(base, out)


def _render(base: np.ndarray, obj: tuple[np.ndarray, np.ndarray, int]) -> np.ndarray:
    """``base`` (the indicator alone) with the object drawn over it (the kernels keep cells on the grid)."""
    grid = base.copy()
    grid[obj[0], obj[1]] = obj[2]
    return grid


def _classify(grid: np.ndarray, query: CarcQuery, color: bool, shape: bool) -> str:
    """Steps 3 to 8 for a well-formed, wrong prediction (``color``, ``shape``: its count-based scores)."""
    if np.array_equal(grid, query.input):
        return "no_transformation"
    for category, candidate in _candidates(query):
        if np.array_equal(grid, candidate):
            return category
    if color and shape:
        return "invalid_position"
    return "invalid_shape" if color else "other"


def classify_error(prediction, query: CarcQuery) -> str:
    """The category of one prediction (``"correct"`` when it equals the target); see the module docstring."""
    grid, reason = check_grid(prediction)
    scores = None if reason else score_queries([grid], [query.target])
    if scores is None or not scores.valid[0]:
        return "format"
    if scores.exact[0]:
        return "correct"
    return _classify(grid, query, bool(scores.color_counts[0]), bool(scores.shape_counts[0]))


def error_taxonomy(predictions, queries: Sequence[CarcQuery], scores: CarcScores | None = None) -> list[str]:
    """The category of every prediction (``"correct"`` for right ones); count with :func:`taxonomy_counts`."""
    predictions = as_stack(predictions)
    scores = scores or score_queries(predictions, [q.target for q in queries])
    out = np.where(scores.exact, "correct", "format").astype(object)
    for k in np.flatnonzero(scores.valid & ~scores.exact):
        out[k] = _classify(predictions.grid(k), queries[k], bool(scores.color_counts[k]), bool(scores.shape_counts[k]))
    return out.tolist()


def taxonomy_counts(categories: Sequence[str]) -> dict[str, int]:
    """Counts of every error category (in :data:`ERROR_CATEGORIES` order, zeros included)."""
    counts = Counter(categories)
    return {name: counts.get(name, 0) for name in ERROR_CATEGORIES}
