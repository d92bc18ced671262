"""PL-TF (the grid paper, App. H): one weight-shared transformer block looped under PonderNet halting.

Step rule (the authors' code): ``h_t = LayerNorm(block(x + h_{t-1}))`` with ``h_0 = x``, so the
embedded input is re-injected at every step and the normalised state is fed back. After each step
a 2-layer halting MLP reads the state's mean over every token and gives ``lambda_t``; the step is
chosen with probability ``p_t = lambda_t * prod_{j<t} (1 - lambda_j)`` (the last step takes the
remaining mass); the head reads the state's cell tokens.

* Loss: ``sum_t p_t * CE_t + beta * KL(p || prior)`` (PonderNet), the prior the code's truncated
  geometric: ``lambda_p (1 - lambda_p)^k`` for every step but the last, which holds the rest,
  ``(1 - lambda_p)^(T-1)`` (0.735 of the mass at lambda_p 0.05 and 7 steps). In the KL, ``p`` is
  clamped to [1e-6, 1 - 1e-6], as in the code.
* Training stops pondering once every sample's remaining mass is below ``epsilon``. That cut is
  decided on the device, without reading anything back to the host: every step runs, and the
  steps after the cut get no probability mass (the cut step takes the rest; the prior keeps its
  values on the steps that ran, not renormalised, as the code slices it), which gives exactly the
  loss of a loop that stops there. So the whole training step is one ``torch.compile`` graph.
* Evaluation runs every step and halts each sample by a Bernoulli(``lambda_t``) draw (seeded),
  predicting with the first step that halts.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from cogen_baselines.models.base import GridBatch, GridModel, GridShape
from cogen_baselines.models.layers import (
    INITS,
    Block,
    CellEmbedding,
    MLPHead,
    Rotary,
    head_dim_check,
    init_weights,
    reset_to_defaults,
    rotary_2d,
    sincos_2d,
)

__all__ = ["PonderTransformer", "ponder_cut", "ponder_loss", "ponder_prior"]


def ponder_cut(halts: torch.Tensor, epsilon: float) -> torch.Tensor:
    """``(T,)`` which steps a loop that stops once every sample's remaining mass is below ``epsilon``
    would run: all steps up to and including the first such step."""
    remaining = torch.cumprod(1 - halts, dim=0)                                   # after step t
    done = (remaining < epsilon).all(dim=1)                                        # (T,)
    stopped_before = torch.cumsum(done.long(), dim=0) - done.long()               # done at a step < t
    return stopped_before == 0


def ponder_prior(prior: float, steps: int, device=None, dtype=torch.float32) -> torch.Tensor:
    """``(steps,)`` the code's truncated geometric prior: ``prior (1 - prior)^k`` for ``k < steps - 1``, and
    the remaining mass ``(1 - prior)^(steps - 1)`` on the last step (sums to 1)."""
    k = torch.arange(steps, device=device, dtype=torch.float64)
    mass = prior * (1 - prior) ** k
    mass[-1] = (1 - prior) ** (steps - 1)
    return mass.to(dtype)


def ponder_loss(losses: torch.Tensor, halts: torch.Tensor, prior: float, beta: float,
                active: torch.Tensor | None = None) -> torch.Tensor:
    """Per-sample PonderNet loss from per-step task losses and halting probabilities, both ``(T, B)``.

    ``active`` (``(T,)`` bool, a prefix; default all): the steps the loop ran. The last active step
    takes whatever mass is left (its ``halts`` entry is ignored) and later steps get none; the KL
    runs over the active steps against :func:`ponder_prior` of all ``T`` steps (not renormalised).
    """
    steps = losses.shape[0]
    if active is None:
        active = torch.ones(steps, dtype=torch.bool, device=losses.device)
    last = active & ~torch.cat([active[1:], active.new_zeros(1)])                   # the step that takes the rest
    reach = torch.cat([torch.ones_like(halts[:1]), torch.cumprod(1 - halts[:-1], dim=0)], dim=0)  # P(reach t)
    p = torch.where(last[:, None], reach, halts * reach) * active[:, None]       # (T, B), sums to 1
    geometric = ponder_prior(prior, steps, losses.device, losses.dtype)[:, None]
    clamped = p.clamp(1e-6, 1 - 1e-6)
    kl = torch.where(active[:, None], clamped * (clamped.log() - geometric.log()), 0).sum(dim=0)
    return (p * losses).sum(dim=0) + beta * kl


class PonderTransformer(GridModel):
    """d = 256, 8 heads, one shared pre-LN block (FFN 1024, dropout 0.1, 2-D RoPE), 2-D sin-cos APE by sum.

    ``init="code"`` (the authors' code): the block's and the halting MLP's linear layers xavier-uniform
    with zero biases, the cell embedding, the head and the task-token table as PyTorch initialises them;
    ``init="text"``: truncated normal std 0.02 (:func:`init_weights`). ``dropout_at``: see
    :data:`~cogen_baselines.models.layers.DROPOUT_PLACES`.
    """

    def __init__(self, shape: GridShape, *, dim: int = 256, heads: int = 8, hidden: int = 1024, dropout: float = 0.1,
                 max_steps: int = 7, halt_hidden: int = 128, head_hidden: int = 128, prior: float = 0.05,
                 beta: float = 0.01, epsilon: float = 0.01, init: str = "code", dropout_at: str = "inner"):
        super().__init__()
        head_dim_check(dim, heads, 4)
        if init not in INITS:
            raise ValueError(f"init={init!r} is not one of {', '.join(INITS)}")
        self.shape, self.max_steps, self.prior, self.beta, self.epsilon = shape, max_steps, prior, beta, epsilon
        self.embed = CellEmbedding(shape.classes, dim)
        self.register_buffer("ape", sincos_2d(shape.height, shape.width, dim), persistent=False)
        self.task = nn.Embedding(shape.task_vocab, dim) if shape.task_vocab else None
        self.block = Block(dim, heads, hidden, dropout, dropout_at=dropout_at)
        self.rotary = Rotary(rotary_2d(shape.height, shape.width, dim // heads, after=shape.task_tokens))
        self.norm = nn.LayerNorm(dim)
        self.halt = nn.Sequential(nn.Linear(dim, halt_hidden), nn.ReLU(), nn.Linear(halt_hidden, 1))
        self.head = MLPHead(dim, head_hidden, shape.classes)
        if init == "text":
            init_weights(self)
            return
        reset_to_defaults(self)
        for module in (*self.block.modules(), *self.halt.modules()):
            if isinstance(module, nn.Linear):
                nn.init.xavier_uniform_(module.weight)
                nn.init.zeros_(module.bias)

    def _embedded(self, batch: GridBatch) -> torch.Tensor:
        x = self.embed(batch.inputs.flatten(1)) + self.ape
        if self.task is not None and batch.tasks is not None:
            x = torch.cat([x, self.task(batch.tasks)], dim=1)
        return x

    def _ponder(self, batch: GridBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """Every step's logits ``(T, B, H, W, C)`` and halting probability ``(T, B)``."""
        x = self._embedded(batch)
        state = x
        logits, halts = [], []
        for _ in range(self.max_steps):
            state = self.norm(self.block(x + state, self.rotary))
            halts.append(torch.sigmoid(self.halt(state.mean(dim=1)).squeeze(-1).float()))
            logits.append(self.head(state[:, : self.shape.cells])
                          .view(-1, self.shape.height, self.shape.width, self.shape.classes))
        return torch.stack(logits), torch.stack(halts)

    def _cell_losses(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits.float().permute(0, 3, 1, 2), targets, reduction="none").mean(dim=(1, 2))

    def logits(self, batch: GridBatch) -> torch.Tensor:
        """Scores of the last step (for inspection; training and evaluation use the halting)."""
        return self._ponder(batch)[0][-1]

    def training_loss(self, batch: GridBatch) -> torch.Tensor:
        logits, halts = self._ponder(batch)
        losses = torch.stack([self._cell_losses(step, batch.targets) for step in logits])
        active = ponder_cut(halts, self.epsilon) if self.training else None
        return ponder_loss(losses, halts, self.prior, self.beta, active).mean()

    @torch.no_grad()
    def evaluate(self, batch: GridBatch, generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        logits, halts = self._ponder(batch)
        losses = torch.stack([self._cell_losses(step, batch.targets) for step in logits])
        prediction = torch.zeros_like(batch.targets)
        halted = torch.zeros(batch.targets.shape[0], dtype=torch.bool, device=batch.targets.device)
        for step in range(self.max_steps):
            draw = torch.rand(halts[step].shape, generator=generator, device=halts.device) < halts[step]
            stop = ~halted & (draw | (step == self.max_steps - 1))
            prediction = torch.where(stop[:, None, None], logits[step].argmax(dim=-1), prediction)
            halted |= stop
        return ponder_loss(losses, halts, self.prior, self.beta), prediction
