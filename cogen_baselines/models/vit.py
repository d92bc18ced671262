"""The grid transformer trunk behind Vanilla-TF and Grid-TF (the paper's ``vit`` backbone, patch size 1).

Sequence: ``[registers] + grid cells + [task code]``. Cells are embedded from their class, then
mixed with an absolute positional encoding: a learned 1-D table added to the tokens (Vanilla), or
the fixed 2-D sin-cos encoding with object positional encoding (OPE) mixed by a learnt
vector-weighted sum of the two L2-normalised vectors (Grid). Registers and task tokens get no
absolute position (registers pass through the mixer with a zero position, as in the authors'
code); with 2-D RoPE they get angle 0. After the encoder, registers and task tokens are cut off and
the 2-layer MLP head classifies each cell token.

Where the paper's text and the authors' code differ, ``init``, ``dropout_at`` and ``project`` choose
(the registry's cards give the code's form; ``--follow text`` the text's):

* ``init="code"``: the trunk's linear layers normal with std 0.02, the cell embedding, the head and
  the task-token table as PyTorch initialises them (the task table N(0, 1)), the learned 1-D APE
  ``randn`` (std 1); ``init="text"``: truncated normal std 0.02 (:func:`init_weights`).
* ``dropout_at``: ``inner`` (the code: attention probabilities and inside the feed-forward) or
  ``residual`` (the text: after the attention and after the feed-forward).
* ``project``: a linear layer between the encoder and the head (the text, I.2); the code has none.
"""

from __future__ import annotations

import torch
from torch import nn

from cogen_baselines.models.base import GridBatch, GridModel, GridShape
from cogen_baselines.models.layers import (
    INITS,
    CellEmbedding,
    Encoder,
    MLPHead,
    head_dim_check,
    init_weights,
    l2_normalise,
    output_layer,
    reset_to_defaults,
    rotary_2d,
    sincos,
    sincos_2d,
)

__all__ = ["GridTransformer", "object_position_encoding"]


def object_position_encoding(objects: torch.Tensor, height: int, width: int, dim: int) -> torch.Tensor:
    """``(B, H*W, dim)`` Grid-TF encoding: sin-cos of the object index (half of ``dim``), of the
    column (a quarter) and of the row (a quarter)."""
    rows, cols = torch.meshgrid(torch.arange(height, device=objects.device), torch.arange(width, device=objects.device),
                                indexing="ij")
    place = torch.cat([sincos(cols.reshape(-1), dim // 4), sincos(rows.reshape(-1), dim // 4)], dim=-1)
    ids = sincos(objects.flatten(1), dim // 2)
    return torch.cat([ids, place.expand(objects.shape[0], -1, -1)], dim=-1)


class GridTransformer(GridModel):
    """Encoder-only transformer over grid cells (see the module docstring for the options)."""

    def __init__(self, shape: GridShape, *, dim: int = 128, depth: int = 6, heads: int = 4, hidden: int = 512,
                 dropout: float = 0.0, position: str = "learned", rope: bool = False, registers: int = 0,
                 head_hidden: int = 128, init: str = "code", dropout_at: str = "inner", project: bool = False):
        super().__init__()
        head_dim_check(dim, heads, 4 if rope else 1)
        if init not in INITS:
            raise ValueError(f"init={init!r} is not one of {', '.join(INITS)}")
        self.shape, self.position, self.registers = shape, position, registers
        self.embed = CellEmbedding(shape.classes, dim)
        if position == "learned":
            self.ape = nn.Parameter(torch.zeros(shape.cells, dim))
        elif position == "sincos":
            self.register_buffer("ape", sincos_2d(shape.height, shape.width, dim), persistent=False)
        elif position == "sincos+objects":
            self.mix_tokens = nn.Parameter(torch.ones(dim))
            self.mix_positions = nn.Parameter(torch.ones(dim))
        else:
            raise ValueError(f"unknown position encoding {position!r}")
        self.register_tokens = nn.Parameter(torch.zeros(registers, dim)) if registers else None
        self.task = nn.Embedding(shape.task_vocab, dim) if shape.task_vocab else None
        angles = rotary_2d(shape.height, shape.width, dim // heads, before=registers,
                           after=shape.task_tokens) if rope else None
        self.encoder = Encoder(depth, dim, heads, hidden, dropout, rotary=angles, dropout_at=dropout_at)
        self.project = output_layer(nn.Linear(dim, dim)) if project else None
        self.head = MLPHead(dim, head_hidden, shape.classes)
        self._initialise(init)

    def _initialise(self, init: str) -> None:
        if init == "text":
            init_weights(self)
            if self.position == "learned":
                nn.init.trunc_normal_(self.ape, std=0.02, a=-0.04, b=0.04)
        else:
            reset_to_defaults(self)
            for module in self.encoder.modules():
                if isinstance(module, nn.Linear):
                    nn.init.trunc_normal_(module.weight, std=0.02)   # cut at +-2 absolute: in effect a normal
                    if module.bias is not None:
                        nn.init.zeros_(module.bias)
            if self.position == "learned":
                nn.init.normal_(self.ape)
        if self.register_tokens is not None:
            nn.init.trunc_normal_(self.register_tokens, std=0.02, a=-0.04, b=0.04)

    def _cells(self, batch: GridBatch) -> torch.Tensor:
        tokens = self.embed(batch.inputs.flatten(1))
        if self.position != "sincos+objects":
            return tokens + self.ape
        if batch.objects is None:
            raise ValueError("Grid-TF needs the object index of every input cell (batch.objects)")
        positions = object_position_encoding(batch.objects, self.shape.height, self.shape.width, tokens.shape[-1])
        return self.mix_tokens * l2_normalise(tokens) + self.mix_positions * l2_normalise(positions.to(tokens.dtype))

    def _registers(self, batch_size: int, dtype: torch.dtype) -> torch.Tensor:
        """The register tokens, through the mixer with a zero position (the code adds the APE after prepending them)."""
        tokens = self.register_tokens.expand(batch_size, -1, -1).to(dtype)
        return self.mix_tokens.to(dtype) * l2_normalise(tokens) if self.position == "sincos+objects" else tokens

    def logits(self, batch: GridBatch) -> torch.Tensor:
        cells = self._cells(batch)
        parts = [cells]
        if self.register_tokens is not None:
            parts.insert(0, self._registers(cells.shape[0], cells.dtype))
        if self.task is not None and batch.tasks is not None:
            parts.append(self.task(batch.tasks))
        hidden = self.encoder(torch.cat(parts, dim=1))
        grid = hidden[:, self.registers: self.registers + self.shape.cells]
        scores = self.head(self.project(grid) if self.project is not None else grid)
        return scores.view(-1, self.shape.height, self.shape.width, self.shape.classes)
