"""The evaluation path: batched inference on the device, predictions files, and ``cogen eval``.

:func:`scan` runs a model over a whole split in large batches (no gradients, mixed precision on
GPU) and returns the mean loss, the paper's grid accuracy on the padded grids, and optionally the
predicted grids, copied to the host once. :func:`grids_from_canvases` cuts each predicted canvas
back to a grid, :func:`write_records` writes them in the format ``cogen eval`` reads, and
:func:`score` runs ``cogen eval`` and writes its JSON.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from cogen_baselines.amp import autocast

__all__ = ["ScanResult", "grids_from_canvases", "scan", "score", "write_json", "write_records"]


@dataclass(frozen=True)
class ScanResult:
    """A model's pass over one split."""

    loss: float
    accuracy: float                 # exact match of the whole padded grid (the paper's grid accuracy)
    predictions: np.ndarray | None  # (N, H, W) uint8 predicted grids or canvases, when asked for
    cell_accuracy: float = float("nan")  # share of right cells of the padded grids (the LLaDA branch's accuracy)


def scan(model, split, batch_size: int, seed: int, keep: bool = False, precision: str = "auto") -> ScanResult:
    """Evaluate ``model`` on every row of ``split`` (a :class:`~cogen_baselines.data.GridSplit`).

    Sampling inside the model (PonderNet halting draws, diffusion masks of the loss) uses a
    generator seeded with ``seed``, so the same weights give the same numbers every time. Nothing
    goes to the host until the split is done. ``precision``: see :mod:`cogen_baselines.amp`.
    """
    device = split.inputs.device
    generator = torch.Generator(device=device).manual_seed(seed)
    loss_sum = torch.zeros((), device=device, dtype=torch.float64)
    correct = torch.zeros((), device=device, dtype=torch.int64)
    cells = torch.zeros((), device=device, dtype=torch.int64)
    kept = []
    was_training = model.training
    model.eval()
    with torch.inference_mode(), autocast(device, precision):
        for start in range(0, len(split), batch_size):
            batch = split.batch(slice(start, start + batch_size))
            losses, predictions = model.evaluate(batch, generator)
            loss_sum += losses.double().sum()
            right = (predictions == batch.targets).flatten(1)
            correct += right.all(dim=1).sum()
            cells += right.sum()
            if keep:
                kept.append(predictions.to(torch.uint8))
    model.train(was_training)
    count = max(1, len(split))
    predictions = torch.cat(kept).cpu().numpy() if keep and kept else None
    per_grid = max(1, split.targets[0].numel()) if len(split) else 1
    return ScanResult(float(loss_sum) / count, float(correct) / count, predictions, float(cells) / (count * per_grid))


def grids_from_canvases(canvases: np.ndarray) -> list[np.ndarray]:
    """Cut predicted grids out of padded predictions ``(N, H, W)``.

    A grid's height is the run of colours (0-9) down the first column, its width the run along the
    first row: the pad (10) or the border tokens (11-13) end them, exactly where they end a target.
    Cells inside that are not colours are kept, so ``cogen eval`` counts such a grid as malformed.
    """
    colours = canvases <= 9
    heights = np.where(colours[:, :, 0].all(axis=1), canvases.shape[1], np.argmin(colours[:, :, 0], axis=1))
    widths = np.where(colours[:, 0, :].all(axis=1), canvases.shape[2], np.argmin(colours[:, 0, :], axis=1))
    return [canvas[:height, :width] for canvas, height, width in zip(canvases, heights, widths, strict=True)]


def write_records(path: Path, records: Iterable[tuple[str, object]]) -> int:
    """Write ``(id, grid)`` predictions (None: malformed) where ``cogen eval`` reads them."""
    from cogen.eval import write_predictions

    return write_predictions(path, records)


def _clean(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {key: _clean(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(item) for item in value]
    return value


def write_json(path: Path, payload) -> None:
    """Write JSON (NaN as null) whole or not at all, creating the folder."""
    from cogen.folder.atomic import atomic_write

    text = json.dumps(_clean(payload), indent=2) + "\n"
    atomic_write(path, lambda temporary: temporary.write_text(text, encoding="utf-8"))


def score(data, config: str, split: str, predictions: Path, out: Path) -> dict:
    """``cogen eval`` of a predictions file; the metrics are also written to ``out`` as JSON."""
    from cogen.eval import evaluate

    metrics = evaluate(data, config, split, predictions)
    write_json(out, metrics)
    return metrics
