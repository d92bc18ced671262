"""ResNet (the grid paper, App. H): a stride-1 residual conv stack classifying every cell.

``resnet`` reproduces the paper (spec A.2 and A.3-6): the task code is embedded and appended as
extra tokens *after* the conv encoder, where only the per-token MLP head sees it, so no cell's
prediction can depend on it (which fits the paper's near-zero CompGen accuracy).
``resnet-film`` goes beyond the paper: the task code conditions every residual block through a
FiLM scale and shift, so the network can tell which sequence to apply.

``init="code"`` (the authors' code): every layer as PyTorch initialises it (convolutions
kaiming-uniform, the task-token table N(0, 1)); ``init="text"``: truncated normal with std
``1/sqrt(fan_in)`` for every conv and linear layer (:func:`init_weights`).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from cogen_baselines.models.base import GridBatch, GridModel, GridShape
from cogen_baselines.models.layers import INITS, MLPHead, init_weights, reset_to_defaults

__all__ = ["ResNet"]

#: The paper's blocks: (in channels, out channels, kernel).
PAPER_BLOCKS = ((32, 64, 3), (64, 128, 3), (128, 128, 1), (128, 256, 3), (256, 128, 1))


class ResidualBlock(nn.Module):
    """conv-BN-ReLU-conv-BN plus a skip (1x1 conv + BN when the width changes), then ReLU; optional FiLM."""

    def __init__(self, channels_in: int, channels_out: int, kernel: int, film_dim: int = 0):
        super().__init__()
        padding = kernel // 2
        self.conv1 = nn.Conv2d(channels_in, channels_out, kernel, padding=padding, bias=False)
        self.bn1 = nn.BatchNorm2d(channels_out)
        self.conv2 = nn.Conv2d(channels_out, channels_out, kernel, padding=padding, bias=False)
        self.bn2 = nn.BatchNorm2d(channels_out)
        self.skip = nn.Identity() if channels_in == channels_out else nn.Sequential(
            nn.Conv2d(channels_in, channels_out, 1, bias=False), nn.BatchNorm2d(channels_out))
        self.film = nn.Linear(film_dim, 2 * channels_out) if film_dim else None

    def forward(self, x: torch.Tensor, condition: torch.Tensor | None = None) -> torch.Tensor:
        out = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        if self.film is not None and condition is not None:
            scale, shift = self.film(condition)[:, :, None, None].chunk(2, dim=1)
            out = out * (1 + scale) + shift
        return F.relu(out + self.skip(x))


class ResNet(GridModel):
    """One-hot grid -> 1x1 stem -> residual blocks -> 1x1 conv to ``embed`` -> per-cell MLP head."""

    def __init__(self, shape: GridShape, blocks=PAPER_BLOCKS, stem: int = 32, embed: int = 128,
                 head_hidden: int = 128, film: bool = False, film_embed: int = 32, init: str = "code"):
        super().__init__()
        if init not in INITS:
            raise ValueError(f"init={init!r} is not one of {', '.join(INITS)}")
        if film and not shape.task_vocab:
            raise ValueError("a FiLM ResNet needs task codes (the data has none: it would be the plain ResNet)")
        self.shape, self.film = shape, film
        self.stem = nn.Sequential(nn.Conv2d(shape.classes, stem, 1, bias=False), nn.BatchNorm2d(stem), nn.ReLU())
        film_dim = film_embed * shape.task_depth if self.film else 0
        self.blocks = nn.ModuleList(ResidualBlock(i, o, k, film_dim) for i, o, k in blocks)
        self.project = nn.Conv2d(blocks[-1][1], embed, 1)
        self.task = nn.Embedding(shape.task_vocab, film_embed if self.film else embed) if shape.task_vocab else None
        self.head = MLPHead(embed, head_hidden, shape.classes)
        self.register_buffer("class_ids", torch.arange(shape.classes)[:, None, None], persistent=False)
        if init == "text":
            init_weights(self, fan_in=True)
        else:
            reset_to_defaults(self)

    def logits(self, batch: GridBatch) -> torch.Tensor:
        # one-hot channels by comparison: F.one_hot checks its input's range, a host sync on a GPU
        x = (batch.inputs[:, None] == self.class_ids).to(self.stem[0].weight.dtype)
        task = self.task(batch.tasks) if self.task is not None and batch.tasks is not None else None
        condition = task.flatten(1) if self.film and task is not None else None
        x = self.stem(x)
        for block in self.blocks:
            x = block(x, condition)
        tokens = self.project(x).flatten(2).transpose(1, 2)           # (B, H*W, embed)
        if task is not None and not self.film:
            tokens = torch.cat([tokens, task], dim=1)                  # the paper: appended after the encoder
        scores = self.head(tokens)[:, : self.shape.cells]              # the task tokens are dropped again
        return scores.view(-1, self.shape.height, self.shape.width, self.shape.classes)
