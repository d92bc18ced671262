"""PL-TF (COGITAO paper App. H): one weight-shared transformer block looped under PonderNet halting.

Step rule: ``h_t = block(x + h_{t-1})`` with ``h_0 = 0``, so the embedded input is re-injected at
every step. After each step a 2-layer halting MLP reads the mean-pooled state and gives
``lambda_t``; the step is chosen with probability ``p_t = lambda_t * prod_{j<t} (1 - lambda_j)``
(the last step takes the remaining mass).

* Loss: ``sum_t p_t * CE_t + beta * KL(p || truncated geometric(lambda_p))`` (PonderNet).
* Training stops looping once every sample's remaining mass is below ``epsilon``.
* Evaluation runs every step and halts each sample by a Bernoulli(``lambda_t``) draw (seeded),
  predicting with the first step that halts.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from cogen_baselines.models.base import GridBatch, GridModel, GridShape
from cogen_baselines.models.layers import (
    Block,
    MLPHead,
    Rotary,
    head_dim_check,
    init_weights,
    rotary_2d,
    sincos_2d,
)

__all__ = ["PonderTransformer", "ponder_loss"]


def ponder_loss(losses: torch.Tensor, halts: torch.Tensor, prior: float, beta: float) -> torch.Tensor:
    """Per-sample PonderNet loss from per-step task losses and halting probabilities, both ``(T, B)``.

    ``halts[-1]`` is ignored: the last step takes whatever mass is left.
    """
    steps = losses.shape[0]
    continuing = torch.cumprod(1 - halts[:-1], dim=0)
    reach = torch.cat([torch.ones_like(halts[:1]), continuing], dim=0)           # P(reach step t)
    p = torch.cat([halts[:-1] * reach[:-1], reach[-1:]], dim=0)                   # (T, B), sums to 1
    geometric = prior * (1 - prior) ** torch.arange(steps, device=losses.device, dtype=losses.dtype)
    geometric = (geometric / geometric.sum())[:, None]
    kl = (p * (p.clamp_min(1e-12).log() - geometric.log())).sum(dim=0)
    return (p * losses).sum(dim=0) + beta * kl


class PonderTransformer(GridModel):
    """d = 256, 8 heads, one shared pre-LN block (FFN 1024, dropout 0.1, 2-D RoPE), 2-D sin-cos APE by sum."""

    def __init__(self, shape: GridShape, *, dim: int = 256, heads: int = 8, hidden: int = 1024, dropout: float = 0.1,
                 max_steps: int = 7, halt_hidden: int = 128, head_hidden: int = 256, prior: float = 0.05,
                 beta: float = 0.01, epsilon: float = 0.01):
        super().__init__()
        head_dim_check(dim, heads, 4)
        self.shape, self.max_steps, self.prior, self.beta, self.epsilon = shape, max_steps, prior, beta, epsilon
        self.embed = nn.Embedding(shape.classes, dim)
        self.register_buffer("ape", sincos_2d(shape.height, shape.width, dim), persistent=False)
        self.task = nn.Embedding(shape.task_vocab, dim) if shape.task_vocab else None
        self.block = Block(dim, heads, hidden, dropout)
        self.rotary = Rotary(rotary_2d(shape.height, shape.width, dim // heads, after=shape.task_tokens))
        self.norm = nn.LayerNorm(dim)
        self.halt = nn.Sequential(nn.Linear(dim, halt_hidden), nn.ReLU(), nn.Linear(halt_hidden, 1))
        self.head = MLPHead(dim, head_hidden, shape.classes)
        init_weights(self)

    def _embedded(self, batch: GridBatch) -> torch.Tensor:
        x = self.embed(batch.inputs.flatten(1)) + self.ape
        if self.task is not None and batch.tasks is not None:
            x = torch.cat([x, self.task(batch.tasks)], dim=1)
        return x

    def _steps(self, batch: GridBatch, stop_early: bool):
        """Yield ``(logits (B,H,W,C), lambda (B,))`` per step."""
        x = self._embedded(batch)
        state = torch.zeros_like(x)
        remaining = torch.ones(x.shape[0], device=x.device)
        for _ in range(self.max_steps):
            state = self.block(x + state, self.rotary)
            normed = self.norm(state)
            halt = torch.sigmoid(self.halt(normed.mean(dim=1)).squeeze(-1).float())
            logits = self.head(normed[:, : self.shape.cells])
            yield logits.view(-1, self.shape.height, self.shape.width, self.shape.classes), halt
            remaining = remaining * (1 - halt)
            if stop_early and bool((remaining < self.epsilon).all()):
                return

    def _cell_losses(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits.float().permute(0, 3, 1, 2), targets, reduction="none").mean(dim=(1, 2))

    def logits(self, batch: GridBatch) -> torch.Tensor:
        """Scores of the last step of a full loop (for inspection; training and evaluation use the halting)."""
        *_, (logits, _) = self._steps(batch, stop_early=False)
        return logits

    def training_loss(self, batch: GridBatch) -> torch.Tensor:
        losses, halts = [], []
        for logits, halt in self._steps(batch, stop_early=self.training):
            losses.append(self._cell_losses(logits, batch.targets))
            halts.append(halt)
        return ponder_loss(torch.stack(losses), torch.stack(halts), self.prior, self.beta).mean()

    @torch.no_grad()
    def evaluate(self, batch: GridBatch, generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        losses, halts = [], []
        prediction = torch.zeros_like(batch.targets)
        halted = torch.zeros(batch.targets.shape[0], dtype=torch.bool, device=batch.targets.device)
        for step, (logits, halt) in enumerate(self._steps(batch, stop_early=False)):
            losses.append(self._cell_losses(logits, batch.targets))
            halts.append(halt)
            draw = torch.rand(halt.shape, generator=generator, device=halt.device) < halt
            stop = ~halted & (draw | (step == self.max_steps - 1))
            prediction[stop] = logits[stop].argmax(dim=-1)
            halted |= stop
        return ponder_loss(torch.stack(losses), torch.stack(halts), self.prior, self.beta), prediction
