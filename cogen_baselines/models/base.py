"""What every grid model takes and gives: a batch of padded grids in, per-cell class scores out.

A :class:`GridBatch` holds whole tensors already on the model's device: the input and target
grids (``(B, H, W)`` class ids: colours 0-9 and pad 10, or the 15 visual-token classes), the
depth-4 task code (``(B, 4)`` registry token ids, CompGen only) and, for Grid-TF, the object index
of every input cell. A :class:`GridModel` turns it into a training loss, or into a per-sample loss
and predicted grids for evaluation. Models with their own objective (PonderNet, masked
diffusion) override those two methods; the training loop never needs to know.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["GridBatch", "GridModel", "GridShape", "count_parameters"]


class GridBatch(NamedTuple):
    """One batch of a grid split, on the device (see the module docstring)."""

    inputs: torch.Tensor
    targets: torch.Tensor
    tasks: torch.Tensor | None = None
    objects: torch.Tensor | None = None


@dataclass(frozen=True)
class GridShape:
    """What a model is built for: the padded grid (or canvas) size, the classes, the task code."""

    height: int
    width: int
    classes: int
    task_vocab: int | None = None   # None: no task code (EnvGen)
    task_depth: int = 4

    @property
    def cells(self) -> int:
        """Tokens of one grid."""
        return self.height * self.width

    @property
    def task_tokens(self) -> int:
        """Tokens the task code adds to a sequence (0 without a task code)."""
        return self.task_depth if self.task_vocab else 0


class GridModel(nn.Module):
    """Base class: per-cell logits, cross-entropy over the whole padded grid, argmax predictions."""

    shape: GridShape

    def logits(self, batch: GridBatch) -> torch.Tensor:
        """``(B, H, W, classes)`` scores of every cell of the target grid."""
        raise NotImplementedError

    def training_loss(self, batch: GridBatch) -> torch.Tensor:
        """Mean cross-entropy over every cell of the padded target grids (the paper's loss)."""
        logits = self.logits(batch)
        return F.cross_entropy(logits.flatten(0, 2).float(), batch.targets.flatten())

    @torch.no_grad()
    def evaluate(self, batch: GridBatch, generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-sample loss ``(B,)`` and predicted grids ``(B, H, W)``; ``generator`` drives any sampling."""
        logits = self.logits(batch).float()
        loss = F.cross_entropy(logits.permute(0, 3, 1, 2), batch.targets, reduction="none").mean(dim=(1, 2))
        return loss, logits.argmax(dim=-1)


def count_parameters(model: nn.Module) -> int:
    """Trainable parameters of ``model``."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
