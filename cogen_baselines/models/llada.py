"""LLaDA (COGITAO paper App. H; decision 4): a masked-diffusion transformer trained from scratch.

Sequence: ``[task code] + input canvas + target canvas`` (visual tokens, flattened). The task
code has its own embedding table; the cells share one table of the 15 visual-token classes plus
``MASK``. 6 layers, d = 128, 4 heads, RMSNorm, SwiGLU of hidden size 384, 1-D RoPE (theta 500,000)
in every layer, bidirectional attention, no dropout.

* Training: per sample ``t ~ U(0, 1)``, ``p = (1 - eps) t + eps``; every target cell is masked with
  probability ``p``; the loss is the cross-entropy of the masked target cells weighted by ``1/p``,
  normalised by the target length (LLaDA's SFT form). The prompt is never masked.
* Decoding: the target starts fully masked; each of 32 steps predicts every masked cell (argmax,
  temperature 0) and unmasks the most confident ones, ``n // 32`` per step plus one during the
  first ``n % 32`` steps (low-confidence remasking, one block).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from cogen_baselines.models.base import GridBatch, GridModel, GridShape
from cogen_baselines.models.layers import (
    Encoder,
    MLPHead,
    head_dim_check,
    init_weights,
    rotary_1d,
)

__all__ = ["LLaDA", "transfer_schedule"]


def transfer_schedule(length: int, steps: int) -> list[int]:
    """How many masked cells each decoding step reveals: ``length // steps``, plus one in the first
    ``length % steps`` steps (sums to ``length``)."""
    base, extra = divmod(length, steps)
    return [base + (1 if step < extra else 0) for step in range(steps)]


class LLaDA(GridModel):
    """Masked-diffusion grid model (see the module docstring)."""

    def __init__(self, shape: GridShape, *, dim: int = 128, depth: int = 6, heads: int = 4, hidden: int = 384,
                 head_hidden: int = 128, decode_steps: int = 32, theta: float = 500_000.0, epsilon: float = 1e-3):
        super().__init__()
        head_dim_check(dim, heads, 2)
        self.shape, self.decode_steps, self.epsilon = shape, decode_steps, epsilon
        self.mask_token = shape.classes
        self.embed = nn.Embedding(shape.classes + 1, dim)
        self.task = nn.Embedding(shape.task_vocab, dim) if shape.task_vocab else None
        length = shape.task_tokens + 2 * shape.cells
        self.encoder = Encoder(depth, dim, heads, hidden, 0.0, norm="rms", feed_forward="swiglu", bias=False,
                               rotary=rotary_1d(length, dim // heads, theta))
        self.head = MLPHead(dim, head_hidden, shape.classes)
        init_weights(self)

    def _target_logits(self, batch: GridBatch, noisy: torch.Tensor) -> torch.Tensor:
        """``(B, cells, classes)`` scores of the target cells given the (partly masked) target ``noisy``."""
        parts = [self.embed(batch.inputs.flatten(1)), self.embed(noisy)]
        if self.task is not None and batch.tasks is not None:
            parts.insert(0, self.task(batch.tasks))
        hidden = self.encoder(torch.cat(parts, dim=1))
        return self.head(hidden[:, -self.shape.cells:])

    def _masked_loss(self, batch: GridBatch, generator: torch.Generator | None) -> torch.Tensor:
        targets = batch.targets.flatten(1)
        size, device = targets.shape[0], targets.device
        p = (1 - self.epsilon) * torch.rand(size, 1, generator=generator, device=device) + self.epsilon
        masked = torch.rand(targets.shape, generator=generator, device=device) < p
        logits = self._target_logits(batch, torch.where(masked, self.mask_token, targets)).float()
        losses = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
        return (losses * masked / p).sum(dim=1) / targets.shape[1]

    def logits(self, batch: GridBatch) -> torch.Tensor:
        """Scores of every target cell from a fully masked target (the first decoding step)."""
        noisy = torch.full_like(batch.targets.flatten(1), self.mask_token)
        return self._target_logits(batch, noisy).view(-1, self.shape.height, self.shape.width, self.shape.classes)

    def training_loss(self, batch: GridBatch) -> torch.Tensor:
        return self._masked_loss(batch, None).mean()

    @torch.no_grad()
    def decode(self, batch: GridBatch, steps: int | None = None) -> torch.Tensor:
        """``(B, H, W)`` predicted grids by low-confidence remasking over ``steps`` (default 32) steps."""
        tokens = torch.full_like(batch.targets.flatten(1), self.mask_token)
        for reveal in transfer_schedule(self.shape.cells, steps or self.decode_steps):
            if not reveal:
                continue
            probabilities = self._target_logits(batch, tokens).float().softmax(dim=-1)
            confidence, guess = probabilities.max(dim=-1)
            confidence = confidence.masked_fill(tokens != self.mask_token, -1.0)
            chosen = confidence.topk(reveal, dim=1).indices
            tokens.scatter_(1, chosen, guess.gather(1, chosen))
        return tokens.view_as(batch.targets)

    @torch.no_grad()
    def evaluate(self, batch: GridBatch, generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        return self._masked_loss(batch, generator), self.decode(batch)
