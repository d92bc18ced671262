"""Episodes of study pairs and queries (rows of ``study_*`` and ``query_*`` grids) as a training workload for MLC.

The grids of every episode are read through :mod:`cogen.io` and held on the device; a batch of
episodes becomes MLC's token layout (:mod:`cogen_baselines.models.mlc`) on the device, vectorised
over episodes and queries (:func:`episode_tokens`; the tests check it against cogen's MLC export).
Training adds the copy task (every study pair is also a query) and the target noise (each
real query's output cell is redrawn uniformly from 0-9 with probability 0.001). Validation and
predictions use the real queries only; predictions carry ``cogen eval``'s query ids. Every test
split gets two predictions files: the greedy decoding (``<split>.jsonl``, what the model outputs)
and the argmax under the gold prefix (``<split>.teacher_forced.jsonl``, what the MLC paper's code
scores: the same exact match, but the colour and shape accuracies of the paper).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

from cogen.errors import DataError
from cogen_baselines.amp import autocast
from cogen_baselines.errors import BaselineError
from cogen_baselines.evaluate import score, write_records
from cogen_baselines.models.mlc import EOS, IO_SEP, PATCH_OFFSET, SOS, SUP_SEP, VOCAB_SIZE, encoder_length
from cogen_baselines.workload import check_fits, check_stream

__all__ = ["EpisodeSplit", "MLCBatch", "MLCWorkload", "default_epochs", "episode_tokens", "grids_of"]

_GRIDS = ("study_inputs", "study_outputs", "query_inputs", "query_outputs")
_PATCH_WEIGHTS = (1000, 100, 10, 1)


def default_epochs(manifest: Mapping) -> int:
    """The paper's epochs for an episode config: 300 for systematicity, 200 for 3-shot."""
    return 200 if manifest.get("kind") == "3shot" else 300


class MLCBatch(NamedTuple):
    """Token sequences of a batch of queries, flattened over episodes: ``(N, L)``, ``(N, 26)``, ``(N, 26)``, ``(N,)``."""

    encoder: torch.Tensor
    decoder_input: torch.Tensor
    target: torch.Tensor
    is_copy: torch.Tensor


def _patches(grids: torch.Tensor) -> torch.Tensor:
    """Patch tokens ``(..., 25)`` of 10x10 grids ``(..., 10, 10)`` (:mod:`cogen_baselines.models.mlc`'s layout)."""
    lead = grids.shape[:-2]
    patches = grids.long().reshape(*lead, 5, 2, 5, 2).transpose(-3, -2).reshape(*lead, 25, 4)
    weights = torch.tensor(_PATCH_WEIGHTS, device=grids.device)
    return PATCH_OFFSET + (patches * weights).sum(dim=-1)


def grids_of(tokens: np.ndarray) -> np.ndarray:
    """10x10 grids ``(..., 10, 10)`` int8 of patch tokens ``(..., 25)`` (the inverse of :func:`_patches`)."""
    lead = tokens.shape[:-1]
    digits = (tokens[..., None].astype(np.int64) - PATCH_OFFSET) // np.array(_PATCH_WEIGHTS) % 10
    return digits.reshape(*lead, 5, 5, 2, 2).swapaxes(-3, -2).reshape(*lead, 10, 10).astype(np.int8)


def episode_tokens(study_in, study_out, query_in, query_out, copy_task: bool = True) -> MLCBatch:
    """MLC token sequences of ``E`` episodes of ``K`` study pairs and ``Q`` queries (grids ``(E, K|Q, 10, 10)``).

    Query ``j`` of episode ``e`` is row ``e * Q' + j`` (``Q' = K + Q`` with the copy task, whose
    study pairs come first), as cogen's MLC export stacks them.
    """
    s_in, s_out, q_in, q_out = (_patches(g) for g in (study_in, study_out, query_in, query_out))
    episodes, study = s_in.shape[:2]
    device = s_in.device

    def column(token):
        return torch.full((*s_in.shape[:2], 1), token, device=device, dtype=torch.long)

    support = torch.cat([s_in, column(IO_SEP), s_out, column(SUP_SEP)], dim=2).reshape(episodes, -1)
    if copy_task:
        q_in, q_out = torch.cat([s_in, q_in], dim=1), torch.cat([s_out, q_out], dim=1)
    queries = q_in.shape[1]
    separator = torch.full((episodes, queries, 1), IO_SEP, device=device, dtype=torch.long)
    encoder = torch.cat([support[:, None].expand(-1, queries, -1), q_in, separator], dim=2)
    start = torch.full_like(separator, SOS)
    end = torch.full_like(separator, EOS)
    is_copy = (torch.arange(queries, device=device) < (study if copy_task else 0)).expand(episodes, -1)
    return MLCBatch(encoder.reshape(episodes * queries, -1), torch.cat([start, q_out], 2).reshape(-1, 26),
                    torch.cat([q_out, end], 2).reshape(-1, 26), is_copy.reshape(-1))


@dataclass
class EpisodeSplit:
    """One split's episodes on the device (``uint8`` grids ``(E, K|Q, 10, 10)``) and their row ids."""

    name: str
    grids: dict[str, torch.Tensor]
    ids: list[str]

    def __len__(self) -> int:
        return self.grids["study_inputs"].shape[0]

    def tokens(self, rows, copy_task: bool = False, noise: float = 0.0) -> MLCBatch:
        """Token sequences of episodes ``rows``; ``noise`` redraws real-query output cells at that rate."""
        study_in, study_out, query_in, query_out = (self.grids[name][rows] for name in _GRIDS)
        if noise:
            flip = torch.rand(query_out.shape, device=query_out.device) < noise
            query_out = torch.where(flip, torch.randint_like(query_out, 0, 10), query_out)
        return episode_tokens(study_in, study_out, query_in, query_out, copy_task)

    @property
    def queries(self) -> int:
        return self.grids["query_inputs"].shape[1]


def _read(data, config: str, split: str, limit: int | None, device) -> EpisodeSplit:
    from cogen.io import split_table, table_arrays

    table = split_table(data, config, split, keep=lambda name: name == "id" or name in _GRIDS)
    if limit is not None:
        table = table.slice(0, limit)
    arrays = table_arrays(table, tokens=False, columns=list(_GRIDS))
    for name in _GRIDS:
        shapes = arrays[f"{name}_shape"]
        if shapes.size and not (shapes == 10).all():
            raise BaselineError(f"{config}/{split}: the MLC layout needs every episode to hold the same number of "
                                f"10x10 grids in {name}; this split's episodes differ")
    grids = {name: torch.from_numpy(np.ascontiguousarray(arrays[name])).to(device=device, dtype=torch.uint8)
             for name in _GRIDS}
    return EpisodeSplit(split, grids, [str(i) for i in table.column("id").to_pylist()])


def _write_tokens(path: Path, ids, tokens: np.ndarray) -> None:
    """Write the grids of predicted patch tokens under ``ids`` (None where a token is not a patch: malformed)."""
    valid = ((tokens >= PATCH_OFFSET) & (tokens < VOCAB_SIZE)).all(axis=1)
    grids = grids_of(np.where(valid[:, None], tokens, PATCH_OFFSET))
    write_records(path, ((name, grid if ok else None) for name, grid, ok in zip(ids, grids, valid, strict=True)))


class MLCWorkload:
    """Train and evaluate the MLC model on one config of episodes."""

    COLUMNS = frozenset({"id", *_GRIDS})
    STREAMS = False
    test_splits = ("test",)
    validation_splits = ("validation",)

    def __init__(self, splits: dict[str, EpisodeSplit], manifest: dict, eval_batch_size: int, seed: int,
                 noise: float = 0.001, copy_task: bool = True, precision: str = "fp32", source=None):
        self.splits, self.manifest = splits, manifest
        self.eval_batch_size, self.seed, self.noise, self.copy_task = eval_batch_size, seed, noise, copy_task
        self.train, self.precision, self.source = splits["train"], precision, source

    @classmethod
    def load(cls, data, config: str, card, *, device, task_codes: str, train_limit: int | None,
             eval_batch_size: int, seed: int, stream: str | None = None, precision: str = "fp32",
             eval_limit: int | None = None) -> MLCWorkload:
        """Load the episodes of ``config`` onto ``device`` (``stream`` must be None: episodes are stored only)."""
        from cogen_baselines.data import experiment_manifest

        check_stream(card, stream)
        manifest = experiment_manifest(data, config)
        check_fits(card, manifest, config)
        splits = {split: _read(data, config, split, train_limit if split == "train" else eval_limit, device)
                  for split in ("train", "validation", "test") if split in manifest.get("splits", {})}
        if "train" not in splits:
            raise DataError(f"{config} has no train split")
        return cls(splits, manifest, eval_batch_size, seed, precision=precision, source=(data, config))

    @classmethod
    def paper_input(cls, card) -> int:
        """The encoder length of the systematicity episodes (12 study pairs)."""
        return encoder_length(12)

    @classmethod
    def default_epochs(cls, manifest: Mapping) -> int:
        return default_epochs(manifest)

    @classmethod
    def paper_rows(cls) -> None:
        """The MLC paper's splits differ per seed (its Table 7): judged by the build's scale only."""
        return None

    def start_epoch(self, epoch: int) -> None:
        """Every epoch trains on the stored episodes (nothing to draw)."""

    @property
    def model_input(self) -> int:
        """The encoder length the model is built for (52K + 26)."""
        return int(self.train.tokens(slice(0, 1)).encoder.shape[1])

    @property
    def train_size(self) -> int:
        return len(self.train)

    def train_batch(self, rows: torch.Tensor) -> MLCBatch:
        return self.train.tokens(rows, self.copy_task, self.noise)

    def _scan(self, model, split: EpisodeSplit, keep: bool):
        """Mean loss, exact match and (``keep``) the predicted tokens of every query, greedy and teacher-forced;
        one host copy at the end."""
        device = split.grids["study_inputs"].device
        loss_sum = torch.zeros((), device=device, dtype=torch.float64)
        correct = torch.zeros((), device=device, dtype=torch.int64)
        kept, forced = [], []
        was_training = model.training
        model.eval()
        with torch.inference_mode(), autocast(device, self.precision):
            for start in range(0, len(split), self.eval_batch_size):
                batch = split.tokens(slice(start, start + self.eval_batch_size))
                loss_sum += model.training_loss(batch, reduction="none").double().sum()
                predicted = model.generate(batch.encoder)
                correct += (predicted == batch.target[:, :-1]).all(dim=1).sum()
                if keep:
                    kept.append(predicted)
                    forced.append(model.teacher_forced(batch.encoder, batch.decoder_input))
        model.train(was_training)
        count = max(1, len(split) * split.queries)
        tokens = (torch.cat(kept).cpu().numpy(), torch.cat(forced).cpu().numpy()) if kept else (None, None)
        return float(loss_sum) / count, int(correct) / count, tokens

    def validate(self, model) -> dict[str, float]:
        """Teacher-forced loss and greedy exact match on the validation queries."""
        if "validation" not in self.splits:
            return {}
        loss, accuracy, _ = self._scan(model, self.splits["validation"], keep=False)
        return {"val_loss": loss, "val_accuracy": accuracy}

    def predict(self, model, split: str, path: Path) -> dict[str, float]:
        """Write the greedy predictions of every query of ``split`` under ``cogen eval``'s query ids."""
        from cogen.eval import expected_ids
        from cogen.folder import read_split
        from cogen_baselines.workload import headlines

        data = self.splits[split]
        loss, accuracy, (greedy, forced) = self._scan(model, data, keep=True)
        ids = expected_ids(read_split(*self.source, split))[: len(greedy)]   # cogen eval's ids, row-major
        _write_tokens(path, ids, greedy)
        teacher = path.with_name(f"{split}.teacher_forced.jsonl")
        _write_tokens(teacher, ids, forced)
        metrics = score(*self.source, split, teacher, teacher.with_name(f"{split}.teacher_forced.eval.json"))
        return {"loss": loss, "padded_grid_accuracy": accuracy,
                "teacher_forced": {name: metrics.get(name) for name in headlines(self.manifest)}}

    def loaded_rows(self) -> dict[str, int]:
        """Episodes of each split held on the device."""
        return {name: len(split) for name, split in self.splits.items()}

    def resident_bytes(self) -> int:
        """Bytes of every split's grids held on the device."""
        return sum(grids.nbytes for split in self.splits.values() for grids in split.grids.values())

    def describe(self) -> dict:
        return {"config": self.manifest.get("config"), "setting": self.manifest.get("kind"),
                "kind": self.manifest.get("kind"),
                "copy_task": self.copy_task, "noise": self.noise,
                "rows": {name: len(split) for name, split in self.splits.items()},
                "study_examples": int(self.train.grids["study_inputs"].shape[1]), "queries": self.train.queries}
