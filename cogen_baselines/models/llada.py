"""LLaDA (the grid paper, App. H; decision 4): a masked-diffusion transformer trained from scratch.

Sequence: ``[task code] + input grid + target grid`` (flattened). The task code has its own
embedding table; the cells share one table of the grid's classes plus ``MASK``: 11 + 1 = 12
tokens for ``llada`` (the paper's code, branch ``features/llada`` of ``ktroyan/visualreasoning``:
visual tokens off, as the paper's text says), 15 + 1 for ``llada-sft`` (visual-token canvases).
6 layers, d = 128, 4 heads, RMSNorm, SwiGLU of hidden size 384, 1-D RoPE (theta 500,000) in every
layer, bidirectional attention, no dropout.

* Training: per sample ``t ~ U(0, 1)``, ``p = (1 - eps) t + eps``; every target cell is masked with
  probability ``p``; the prompt is never masked. ``loss="mean"`` (the paper's code): the plain mean
  cross-entropy over every masked target cell of the batch. ``loss="sft"`` (LLaDA's SFT form): each
  masked cell's cross-entropy weighted by ``1/p``, normalised by the target length.
* ``init="mitchell"`` (the paper's code, OLMo's rule): every linear and embedding weight of the
  trunk trunc-normal (cut at 3 std) with std ``1/sqrt(fan_in)``, the attention output and the
  feed-forward output of layer ``i`` further divided by ``sqrt(2 (i + 1))``; the 2-layer head and the
  task-token table live outside the branch's backbone and keep PyTorch's initialisation (the task
  table N(0, 1)). ``init="normal"`` (``llada-sft``): std 0.02 everywhere (decision 2,
  :func:`init_weights`).
* Decoding: the target starts fully masked; each of 32 steps predicts every masked cell (argmax,
  temperature 0) and unmasks the most confident ones, ``n // 32`` per step plus one during the
  first ``n % 32`` steps (low-confidence remasking, one block); the confidence is the softmax
  probability of the argmax computed in float64, as the branch does on CUDA.
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
    reset_to_defaults,
    rotary_1d,
)

__all__ = ["LOSSES", "LLaDA", "mitchell_init", "transfer_schedule"]

#: The two training losses (see the module docstring).
LOSSES = ("mean", "sft")


def _trunc(weight: torch.Tensor, std: float) -> None:
    nn.init.trunc_normal_(weight, std=std, a=-3 * std, b=3 * std)


def mitchell_init(embeddings: list[nn.Embedding], encoder: Encoder) -> None:
    """The "mitchell" initialisation of the paper's LLaDA (see the module docstring)."""
    for table in embeddings:
        _trunc(table.weight, table.weight.shape[1] ** -0.5)
    for layer, block in enumerate(encoder.blocks):
        depth = (2 * (layer + 1)) ** -0.5
        attention, feed_forward = block.attention, block.feed_forward
        _trunc(attention.qkv.weight, attention.qkv.in_features ** -0.5)
        _trunc(attention.out.weight, attention.out.in_features ** -0.5 * depth)
        for linear in (feed_forward.gate, feed_forward.up):
            _trunc(linear.weight, linear.in_features ** -0.5)
        _trunc(feed_forward.down.weight, feed_forward.down.in_features ** -0.5 * depth)


def transfer_schedule(length: int, steps: int) -> list[int]:
    """How many masked cells each decoding step reveals: ``length // steps``, plus one in the first
    ``length % steps`` steps (sums to ``length``)."""
    base, extra = divmod(length, steps)
    return [base + (1 if step < extra else 0) for step in range(steps)]


class LLaDA(GridModel):
    """Masked-diffusion grid model (see the module docstring)."""

    def __init__(self, shape: GridShape, *, dim: int = 128, depth: int = 6, heads: int = 4, hidden: int = 384,
                 head_hidden: int = 128, decode_steps: int = 32, theta: float = 500_000.0, epsilon: float = 1e-3,
                 loss: str = "mean", init: str = "mitchell"):
        super().__init__()
        head_dim_check(dim, heads, 2)
        if loss not in LOSSES or init not in ("mitchell", "normal"):
            raise ValueError(f"LLaDA: unknown loss {loss!r} or init {init!r}")
        self.shape, self.decode_steps, self.epsilon, self.loss = shape, decode_steps, epsilon, loss
        self.mask_token = shape.classes
        self.embed = nn.Embedding(shape.classes + 1, dim)
        self.task = nn.Embedding(shape.task_vocab, dim) if shape.task_vocab else None
        length = shape.task_tokens + 2 * shape.cells
        self.encoder = Encoder(depth, dim, heads, hidden, 0.0, norm="rms", feed_forward="swiglu", bias=False,
                               rotary=rotary_1d(length, dim // heads, theta))
        self.head = MLPHead(dim, head_hidden, shape.classes)
        if init == "mitchell":
            reset_to_defaults(self)
            mitchell_init([self.embed], self.encoder)
        else:
            init_weights(self)

    def _target_logits(self, batch: GridBatch, noisy: torch.Tensor) -> torch.Tensor:
        """``(B, cells, classes)`` scores of the target cells given the (partly masked) target ``noisy``."""
        parts = [self.embed(batch.inputs.flatten(1)), self.embed(noisy)]
        if self.task is not None and batch.tasks is not None:
            parts.insert(0, self.task(batch.tasks))
        hidden = self.encoder(torch.cat(parts, dim=1))
        return self.head(hidden[:, -self.shape.cells:])

    def _masked(self, batch: GridBatch, generator: torch.Generator | None):
        """Per-cell cross-entropy ``(B, cells)`` of the target under a random mask, the mask, and ``p`` ``(B, 1)``."""
        targets = batch.targets.flatten(1)
        size, device = targets.shape[0], targets.device
        draws = {"generator": generator} if generator is not None else {}   # training: the global generator
        p = (1 - self.epsilon) * torch.rand(size, 1, device=device, **draws) + self.epsilon
        masked = torch.rand(targets.shape, device=device, **draws) < p
        logits = self._target_logits(batch, torch.where(masked, self.mask_token, targets)).float()
        return F.cross_entropy(logits.transpose(1, 2), targets, reduction="none"), masked, p

    def _masked_loss(self, batch: GridBatch, generator: torch.Generator | None) -> torch.Tensor:
        """Per-sample loss ``(B,)``: ``sft``, the 1/p-weighted sum over the target length; ``mean``, the
        mean over the sample's masked cells."""
        losses, masked, p = self._masked(batch, generator)
        if self.loss == "sft":
            return (losses * masked / p).sum(dim=1) / losses.shape[1]
        return (losses * masked).sum(dim=1) / masked.sum(dim=1).clamp_min(1)

    def logits(self, batch: GridBatch) -> torch.Tensor:
        """Scores of every target cell from a fully masked target (the first decoding step)."""
        noisy = torch.full_like(batch.targets.flatten(1), self.mask_token)
        return self._target_logits(batch, noisy).view(-1, self.shape.height, self.shape.width, self.shape.classes)

    def training_loss(self, batch: GridBatch) -> torch.Tensor:
        """``sft``: the mean of the per-sample losses; ``mean`` (the paper's code): the mean over every
        masked target cell of the batch."""
        if self.loss == "sft":
            return self._masked_loss(batch, None).mean()
        losses, masked, _ = self._masked(batch, None)
        return (losses * masked).sum() / masked.sum().clamp_min(1)

    @torch.no_grad()
    def decode(self, batch: GridBatch, steps: int | None = None) -> torch.Tensor:
        """``(B, H, W)`` predicted grids by low-confidence remasking over ``steps`` (default 32) steps."""
        tokens = torch.full_like(batch.targets.flatten(1), self.mask_token)
        for reveal in transfer_schedule(self.shape.cells, steps or self.decode_steps):
            if not reveal:
                continue
            probabilities = self._target_logits(batch, tokens).double().softmax(dim=-1)
            confidence, guess = probabilities.max(dim=-1)
            confidence = confidence.masked_fill(tokens != self.mask_token, -1.0)
            chosen = confidence.topk(reveal, dim=1).indices
            tokens.scatter_(1, chosen, guess.gather(1, chosen))
        return tokens.view_as(batch.targets)

    @torch.no_grad()
    def evaluate(self, batch: GridBatch, generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        return self._masked_loss(batch, generator), self.decode(batch)
