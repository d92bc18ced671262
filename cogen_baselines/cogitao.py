"""COGITAO experiments as a training workload: batches from device tensors, validation, predictions.

The training loop (:mod:`cogen_baselines.train`) asks a workload for a batch of training rows, for
the per-epoch validation numbers and for the predictions of each test split; this module answers
for the grid models of the COGITAO paper.
"""

from __future__ import annotations

from pathlib import Path

import torch

from cogen_baselines.data import Experiment, load_experiment
from cogen_baselines.evaluate import grids_from_canvases, scan, write_records
from cogen_baselines.models.base import GridBatch, GridShape

__all__ = ["VALIDATION_KEYS", "GridWorkload"]

#: Prefix of each validation split's numbers in the per-epoch records.
VALIDATION_KEYS = {"validation": "val", "validation_ood": "val_ood"}


class GridWorkload:
    """Train and evaluate a grid model on one COGITAO experiment held on the device."""

    family = "cogitao"
    test_splits = ("test", "test_ood")

    def __init__(self, experiment: Experiment, eval_batch_size: int, seed: int):
        self.experiment, self.eval_batch_size, self.seed = experiment, eval_batch_size, seed
        self.train = experiment.splits["train"]

    @classmethod
    def load(cls, data, config: str, card, *, device, task_codes: str, train_limit: int | None,
             eval_batch_size: int, seed: int) -> GridWorkload:
        """Load ``config`` as the model ``card`` needs it (visual tokens, object indices)."""
        experiment = load_experiment(data, config, visual_tokens=card.visual_tokens, objects=card.objects,
                                     task_codes=task_codes, device=device, train_limit=train_limit)
        return cls(experiment, eval_batch_size, seed)

    @property
    def model_input(self) -> GridShape:
        """What the model is built for."""
        from cogen_baselines.data import task_vocabulary

        e = self.experiment
        return GridShape(e.height, e.width, e.classes, task_vocabulary() if e.task_codes else None)

    @property
    def train_size(self) -> int:
        return len(self.train)

    def train_batch(self, rows: torch.Tensor) -> GridBatch:
        """Training rows ``rows`` (a device index tensor) as a batch."""
        return self.train.batch(rows)

    def validate(self, model) -> dict[str, float]:
        """Loss and padded grid accuracy on each validation split (``val_*``, ``val_ood_*``)."""
        record = {}
        for split, key in VALIDATION_KEYS.items():
            if split in self.experiment.splits:
                result = scan(model, self.experiment.splits[split], self.eval_batch_size, self.seed)
                record[f"{key}_loss"], record[f"{key}_accuracy"] = result.loss, result.accuracy
        return record

    def predict(self, model, split: str, path: Path) -> dict[str, float]:
        """Write the predictions of ``split`` to ``path``; returns the in-loop loss and padded grid accuracy."""
        data = self.experiment.splits[split]
        result = scan(model, data, self.eval_batch_size, self.seed, keep=True)
        write_records(path, zip(data.ids, grids_from_canvases(result.predictions), strict=True))
        return {"loss": result.loss, "padded_grid_accuracy": result.accuracy}

    def describe(self) -> dict:
        return self.experiment.describe()
