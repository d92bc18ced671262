"""COGITAO's grid metrics (paper App. G) and the reference's object counts, per sample.

Every function takes predictions and targets as sequences of 2-D grids (``None`` for a missing or
malformed prediction) or as :class:`~cogen.metrics.grids.GridStack` objects. What each number is,
for sample ``k`` with prediction ``P`` (``h x w``) and target ``T`` (``H x W``), both anchored at
the top-left:

* ``exact``: 1 when ``P`` and ``T`` have the same size and every cell is equal (paper's GA).
* ``pixel``: cells equal in both grids, divided by ``max(H, h) * max(W, w)`` — the per-pixel
  accuracy over the true ``H x W`` grid; a prediction of another size loses every cell it does
  not share with the target.
* ``pixel_padded``: the paper's PPA. Both grids are padded (with a pad value that is not a
  colour) to a fixed ``m x n`` box; a cell counts when the two padded grids agree there, padding
  included, divided by ``m * n``. Prediction cells beyond the box are cropped (a model with a
  fixed ``m x n`` output cannot produce them; they are counted in ``oversized``).
* ``object_pixel``: Obj-PPA written as an accuracy — among the cells where ``P`` or ``T`` holds a
  colour (1..9), the share where they are equal; 1 when neither holds a colour.
* ``object_error_paper``: the paper's formula G.3 literally — cells of the padded ``m x n`` box
  where either grid is non-zero (padding counts as non-zero) and the two differ, divided by
  ``m * n``. It is an error rate (0 is perfect), although the paper calls it an accuracy.
* ``found`` / ``missed`` / ``extra``: the reference's object reconstruction counts —
  8-connected components of coloured cells, colours ignored for connectivity; a target object
  is found when the prediction has a component with exactly the same cells and colours.

A missing or malformed prediction scores 0 on every accuracy, 1 on ``object_error_paper``, and
finds no object.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from cogen.errors import EvalError
from cogen.metrics.grids import PAD, GridStack, align, as_stack
from cogen.metrics.objects import label_stack

__all__ = ["GridScores", "equal_grids", "grid_accuracy", "object_counts", "object_pixel_accuracy",
           "object_pixel_error", "per_pixel_accuracy", "score_grids"]


@dataclass(frozen=True)
class GridScores:
    """Per-sample scores (arrays of length n); see the module docstring for each definition."""

    valid: np.ndarray
    exact: np.ndarray
    pixel: np.ndarray
    pixel_padded: np.ndarray
    object_pixel: np.ndarray
    object_error_paper: np.ndarray
    found: np.ndarray
    missed: np.ndarray
    extra: np.ndarray
    oversized: np.ndarray
    pad: tuple[int, int]

    def __len__(self) -> int:
        return len(self.valid)

    def means(self, mask: np.ndarray | None = None) -> dict[str, float]:
        """Mean of each score over the samples in ``mask`` (all by default); NaN when none."""
        mask = np.ones(len(self), bool) if mask is None else np.asarray(mask, bool)
        names = ("exact", "pixel", "pixel_padded", "object_pixel", "object_error_paper")
        return {name: float(getattr(self, name)[mask].mean()) if mask.any() else float("nan") for name in names}


def equal_grids(a, b) -> np.ndarray:
    """Per sample, True when both grids exist, have the same size and equal cells."""
    a, b = as_stack(a), as_stack(b)
    cells_a, cells_b = align(a, b)
    same = (a.heights == b.heights) & (a.widths == b.widths) & a.present & b.present
    return same & (cells_a == cells_b).all(axis=(1, 2))


def _pad_size(targets: GridStack, pad: tuple[int, int] | None) -> tuple[int, int]:
    if pad is None:
        return int(targets.heights.max(initial=1)), int(targets.widths.max(initial=1))
    m, n = int(pad[0]), int(pad[1])
    if (targets.heights > m).any() or (targets.widths > n).any():
        raise EvalError(f"pad size {m}x{n} is smaller than a target grid "
                        f"({targets.heights.max()}x{targets.widths.max()} at most)")
    return m, n


#: Samples scored at a time: the boolean and integer canvases of a block stay a few MB, whatever the split's size.
SCORE_BLOCK = 8_192


def score_grids(predictions, targets, pad: tuple[int, int] | None = None) -> GridScores:
    """Every per-sample score of the module docstring. ``pad``: the paper's fixed ``m x n``
    (default: the largest target height and width). Scored :data:`SCORE_BLOCK` samples at a time
    (each sample's scores depend on it alone and the pad size)."""
    predictions, targets = as_stack(predictions), as_stack(targets)
    if len(predictions) != len(targets):
        raise EvalError(f"{len(predictions)} predictions for {len(targets)} targets")
    if len(targets) <= SCORE_BLOCK:
        return _score_block(predictions, targets, pad)
    pad = _pad_size(targets, pad)
    blocks = [_score_block(predictions.take(rows), targets.take(rows), pad)
              for rows in np.array_split(np.arange(len(targets)), -(-len(targets) // SCORE_BLOCK))]
    return GridScores(*(np.concatenate([getattr(b, f.name) for b in blocks]) if f.name != "pad" else pad
                        for f in fields(GridScores)))


def _score_block(predictions: GridStack, targets: GridStack, pad: tuple[int, int] | None) -> GridScores:
    valid = predictions.present
    p, t = align(predictions, targets)
    equal = p == t
    same_size = (predictions.heights == targets.heights) & (predictions.widths == targets.widths)
    exact = valid & same_size & equal.all(axis=(1, 2))
    box = np.maximum(predictions.heights, targets.heights) * np.maximum(predictions.widths, targets.widths)
    shared = (equal & (t != PAD)).sum(axis=(1, 2))
    pixel = np.where(valid, shared / np.maximum(box, 1), 0.0)
    colored = (p > 0) | (t > 0)
    n_colored = colored.sum(axis=(1, 2))
    object_pixel = np.where(n_colored > 0, (colored & equal).sum(axis=(1, 2)) / np.maximum(n_colored, 1), 1.0)
    m, n = _pad_size(targets, pad)
    pp, tp = predictions.canvas(m, n), targets.canvas(m, n)
    equal_padded = pp == tp
    pixel_padded = np.where(valid, equal_padded.mean(axis=(1, 2)), 0.0)
    wrong = (((pp != 0) | (tp != 0)) & ~equal_padded).sum(axis=(1, 2)) / (m * n)
    found, missed, extra = _object_counts(p, t)
    oversized = valid & ((predictions.heights > m) | (predictions.widths > n))
    return GridScores(valid, exact, pixel, pixel_padded, np.where(valid, object_pixel, 0.0),
                      np.where(valid, wrong, 1.0), found, missed, extra, oversized, (m, n))


def _object_counts(p: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from cogen.metrics._kernels import count_found

    p_labels, p_counts = label_stack(p)
    t_labels, t_counts = label_stack(t)
    found = np.zeros(len(p), np.int32)
    count_found(t, p, t_labels, p_labels, t_counts, p_counts, found)
    return found, t_counts - found, p_counts - found


def object_counts(predictions, targets) -> dict[str, int]:
    """Totals over all samples: ``found``, ``missed``, ``extra`` objects and
    ``reconstruction_accuracy`` = found / (found + missed) (the reference's image-level figure)."""
    p, t = align(as_stack(predictions), as_stack(targets))
    found, missed, extra = _object_counts(p, t)
    total = int(found.sum() + missed.sum())
    return {"found": int(found.sum()), "missed": int(missed.sum()), "extra": int(extra.sum()),
            "reconstruction_accuracy": float(found.sum() / total) if total else float("nan")}


def grid_accuracy(predictions, targets) -> float:
    """Share of predictions equal to their target (the paper's GA, as a fraction)."""
    return float(equal_grids(predictions, targets).mean()) if len(as_stack(targets)) else float("nan")


def per_pixel_accuracy(predictions, targets, pad: tuple[int, int] | None = None) -> float:
    """Mean per-pixel accuracy: over the true grids when ``pad`` is None, else over the padded
    ``m x n`` box as the paper does (see the module docstring)."""
    scores = score_grids(predictions, targets, pad)
    return float((scores.pixel if pad is None else scores.pixel_padded).mean())


def object_pixel_accuracy(predictions, targets) -> float:
    """Mean Obj-PPA as an accuracy over the cells where either grid holds a colour."""
    return float(score_grids(predictions, targets).object_pixel.mean())


def object_pixel_error(predictions, targets, pad: tuple[int, int] | None = None) -> float:
    """Mean of the paper's G.3 formula (an error rate over the padded ``m x n`` box)."""
    return float(score_grids(predictions, targets, pad).object_error_paper.mean())
