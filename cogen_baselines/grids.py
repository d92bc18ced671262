"""Grid experiments (rows of ``input`` and ``output`` grids) as a training workload.

The training loop (:mod:`cogen_baselines.train`) asks a workload for a batch of training rows, for
the per-epoch validation numbers and for the predictions of each test split; this module answers
for the models of the grid paper (see :class:`cogen_baselines.workload.Workload`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import torch

from cogen_baselines.data import (
    COLUMNS,
    Experiment,
    experiment_manifest,
    grid_split,
    load_experiment,
    open_stream,
    wants_task_codes,
)
from cogen_baselines.evaluate import grids_from_canvases, scan, write_records
from cogen_baselines.models.base import GridBatch, GridShape
from cogen_baselines.workload import check_fits

__all__ = ["VALIDATION_KEYS", "GridWorkload"]

#: Prefix of each validation split's numbers in the per-epoch records.
VALIDATION_KEYS = {"validation": "val", "validation_ood": "val_ood"}


class GridWorkload:
    """Train and evaluate a grid model on one grid experiment held on the device."""

    COLUMNS = COLUMNS
    STREAMS = True
    test_splits = ("test", "test_ood")
    validation_splits = tuple(VALIDATION_KEYS)

    def __init__(self, experiment: Experiment, eval_batch_size: int, seed: int, stream=None, card=None, device=None,
                 precision: str = "fp32"):
        self.experiment, self.eval_batch_size, self.seed = experiment, eval_batch_size, seed
        self.train = experiment.splits["train"]
        self.stream, self.card, self.device, self.precision = stream, card, device, precision

    @classmethod
    def load(cls, data, config: str, card, *, device, task_codes: str, train_limit: int | None,
             eval_batch_size: int, seed: int, stream: str | None = None, precision: str = "fp32",
             eval_limit: int | None = None) -> GridWorkload:
        """Load ``config`` as the model ``card`` needs it (visual tokens, object indices, task codes).

        ``stream``: the spec ``data`` was built from; each epoch then trains on fresh samples of the
        config's endless stream (:meth:`start_epoch`) instead of the stored training split.
        ``precision``: of the evaluation passes (:func:`cogen_baselines.evaluate.autocast`)."""
        manifest = experiment_manifest(data, config)
        check_fits(card, manifest, config, wants_task_codes(manifest, task_codes))
        experiment = load_experiment(data, config, visual_tokens=card.visual_tokens, objects=card.objects,
                                     task_codes=task_codes, device=device, train_limit=train_limit,
                                     eval_limit=eval_limit)
        opened = open_stream(stream, data, config) if stream is not None else None
        return cls(experiment, eval_batch_size, seed, opened, card, device, precision)

    @classmethod
    def paper_input(cls, card) -> GridShape:
        """A 20x20 CompGen grid with depth-4 task codes (a 22x22 canvas with visual tokens)."""
        from cogen_baselines.data import task_vocabulary

        side = 22 if card.visual_tokens else 20
        return GridShape(side, side, 15 if card.visual_tokens else 11, task_vocabulary())

    @classmethod
    def default_epochs(cls, manifest: Mapping) -> None:
        """The paper's epochs do not depend on the experiment (the card's apply)."""
        return None

    @classmethod
    def paper_rows(cls) -> Mapping[str, int]:
        """The rows of the grid paper's splits (100,000 training samples, 1,000 per test split)."""
        from cogen_baselines.paper import GRID_ROWS

        return GRID_ROWS

    def start_epoch(self, epoch: int) -> None:
        """With a stream, epoch ``e`` trains on its samples ``(e - 1) * n`` to ``e * n - 1`` (``n``: the
        training split's size), none of which repeats a stored validation or test pair."""
        if self.stream is None:
            return
        rows = len(self.experiment.splits["train"])
        batch = self.stream.samples((epoch - 1) * rows, epoch * rows)
        side = self.experiment.height - 2 if self.card.visual_tokens else self.experiment.height
        ids = [f"stream-{int(i)}" for i in batch["index"]]
        self.train = grid_split("train", batch, ids, side, visual_tokens=self.card.visual_tokens,
                                objects=self.card.objects, task_codes=self.experiment.task_codes, device=self.device)

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
        """Loss, padded grid accuracy and cell accuracy on each validation split (``val_*``, ``val_ood_*``)."""
        record = {}
        for split, key in VALIDATION_KEYS.items():
            if split in self.experiment.splits:
                result = scan(model, self.experiment.splits[split], self.eval_batch_size, self.seed,
                              precision=self.precision)
                record[f"{key}_loss"], record[f"{key}_accuracy"] = result.loss, result.accuracy
                record[f"{key}_cell_accuracy"] = result.cell_accuracy
        return record

    def predict(self, model, split: str, path: Path) -> dict[str, float]:
        """Write the predictions of ``split`` to ``path``; returns the in-loop loss and padded grid accuracy."""
        data = self.experiment.splits[split]
        result = scan(model, data, self.eval_batch_size, self.seed, keep=True, precision=self.precision)
        write_records(path, zip(data.ids, grids_from_canvases(result.predictions), strict=True))
        return {"loss": result.loss, "padded_grid_accuracy": result.accuracy}

    def loaded_rows(self) -> dict[str, int]:
        """Rows of each split held on the device."""
        return {name: len(split) for name, split in self.experiment.splits.items()}

    def resident_bytes(self) -> int:
        """Bytes of every split held on the device."""
        return sum(tensor.nbytes for split in self.experiment.splits.values()
                   for tensor in (split.inputs, split.targets, split.tasks, split.objects) if tensor is not None)

    def describe(self) -> dict:
        described = self.experiment.describe()
        if self.stream is not None:
            described["train_stream"] = {"spec": self.stream.experiment.name, "seed": self.stream.seed,
                                         "samples_per_epoch": len(self.experiment.splits["train"]),
                                         "guarded_against": "the stored validation, test and OOD splits"}
        return described
