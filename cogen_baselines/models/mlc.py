"""The MLC model (the MLC paper, seed 000, Table 3; spec A.6): a transformer encoder-decoder over 2x2 patches.

Tokens (the reference's ``PatchTokenizer``, the layout cogen's MLC export writes; the tests hold the
two equal): ids 0-4 ``PAD``, ``SOS``, ``EOS``, ``IO_SEP`` ("→"), ``SUP_SEP`` ("|"); ids 5..10004
every 2x2 patch ``(a, b, c, d)`` (top-left, top-right, bottom-left, bottom-right) as
``5 + 1000a + 100b + 10c + d``, a 10x10 grid being 25 tokens, patches left to right, top to
bottom. The encoder reads the study
pairs and the query input (52K + 26 tokens), the decoder writes the query output as 25 patch tokens
and EOS. Positions: a learned 1-D table over the sequence (one per side) plus learned 2-D row and
column embeddings added to every patch token. 3 + 3 post-norm layers (the reference's
``nn.Transformer`` default, with its final encoder and decoder norms), d = 128, 8 heads, FFN 768,
GELU, dropout 0; separate encoder and decoder embeddings and an output layer over the whole
vocabulary (5.7 M parameters, most of them in those three tables).

Loss: cross-entropy over the decoder's tokens, all-background patches weighted 0.2 (weighted mean).
Decoding is greedy; :meth:`MLC.teacher_forced` gives the argmax of every position under the gold
prefix, which the reference's colour and shape accuracies are computed from.

``init="code"`` (the MLC paper's code): the token, position, row and column tables
N(0, 1), the encoder's and decoder's matrices xavier-uniform (``nn.Transformer``'s reset), every
other layer as PyTorch initialises it; ``init="normal"``: truncated normal std 0.02 (decision 2).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from cogen_baselines.models.layers import init_weights, reset_to_defaults

__all__ = ["BACKGROUND_WEIGHT", "EOS", "GRID_TOKENS", "IO_SEP", "MLC", "PAD", "PATCH_OFFSET", "SOS", "SUP_SEP",
           "VOCAB_SIZE", "encoder_length", "patch_positions"]

PAD, SOS, EOS, IO_SEP, SUP_SEP = range(5)
PATCH_OFFSET = 5
VOCAB_SIZE = PATCH_OFFSET + 10_000
GRID_TOKENS = 25


def encoder_length(study_examples: int) -> int:
    """Encoder tokens per query for K study pairs: ``in IO_SEP out SUP_SEP`` each, then ``query IO_SEP`` (52K + 26)."""
    return (2 * GRID_TOKENS + 2) * study_examples + GRID_TOKENS + 1

#: Loss weight of the all-background patch token (id 5), the paper's "background weight".
BACKGROUND_WEIGHT = 0.2
DECODER_LENGTH = GRID_TOKENS + 1


def patch_positions(length: int, first_grid: int, period: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(is_patch, row, col)`` of each of ``length`` positions of a sequence whose grids of 25
    patch tokens start at ``first_grid`` and repeat every ``period`` tokens (26: grid + separator)."""
    place = torch.arange(length) - first_grid
    offset = place % period
    is_patch = (place >= 0) & (offset < GRID_TOKENS)
    offset = offset.clamp(max=GRID_TOKENS - 1)
    return is_patch, offset // 5, offset % 5


class MLC(nn.Module):
    """Encoder-decoder for MLC episodes (see the module docstring)."""

    def __init__(self, encoder_length: int, *, dim: int = 128, layers: tuple[int, int] = (3, 3), heads: int = 8,
                 hidden: int = 768, dropout: float = 0.0, background_weight: float = BACKGROUND_WEIGHT,
                 init: str = "code"):
        super().__init__()
        if init not in ("code", "normal"):
            raise ValueError(f"MLC: init={init!r} is not code or normal")
        self.encoder_length = encoder_length
        self.encoder_embed = nn.Embedding(VOCAB_SIZE, dim)
        self.decoder_embed = nn.Embedding(VOCAB_SIZE, dim)
        self.encoder_position = nn.Embedding(encoder_length, dim)
        self.decoder_position = nn.Embedding(DECODER_LENGTH, dim)
        self.row, self.col = nn.Embedding(5, dim), nn.Embedding(5, dim)
        options = {"d_model": dim, "nhead": heads, "dim_feedforward": hidden, "dropout": dropout,
                   "activation": "gelu", "batch_first": True, "norm_first": False}
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(**options), layers[0], nn.LayerNorm(dim),
                                             enable_nested_tensor=False)
        self.decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(**options), layers[1], nn.LayerNorm(dim))
        self.output = nn.Linear(dim, VOCAB_SIZE)
        for name, (start, length) in {"encoder": (0, encoder_length), "decoder": (1, DECODER_LENGTH)}.items():
            is_patch, rows, cols = patch_positions(length, start, 26)
            self.register_buffer(f"{name}_patch", is_patch[:, None].float(), persistent=False)
            self.register_buffer(f"{name}_rows", rows, persistent=False)
            self.register_buffer(f"{name}_cols", cols, persistent=False)
        weights = torch.ones(VOCAB_SIZE)
        weights[PATCH_OFFSET] = background_weight
        self.register_buffer("class_weights", weights, persistent=False)
        self.register_buffer("causal", nn.Transformer.generate_square_subsequent_mask(DECODER_LENGTH),
                             persistent=False)
        if init == "normal":
            init_weights(self)
            return
        reset_to_defaults(self)
        for parameter in (*self.encoder.parameters(), *self.decoder.parameters()):
            if parameter.dim() > 1:
                nn.init.xavier_uniform_(parameter)

    def _embed(self, tokens: torch.Tensor, side: str) -> torch.Tensor:
        table = self.encoder_embed if side == "encoder" else self.decoder_embed
        positions = self.encoder_position if side == "encoder" else self.decoder_position
        length = tokens.shape[1]
        patch = getattr(self, f"{side}_patch")[:length]
        grid = self.row(getattr(self, f"{side}_rows")[:length]) + self.col(getattr(self, f"{side}_cols")[:length])
        return table(tokens) + positions.weight[:length] + patch * grid

    def encode(self, encoder: torch.Tensor) -> torch.Tensor:
        """Encoder states ``(N, L, d)`` of ``(N, L)`` encoder tokens."""
        return self.encoder(self._embed(encoder, "encoder"))

    def decode(self, memory: torch.Tensor, decoder_input: torch.Tensor, last: bool = False) -> torch.Tensor:
        """``(N, T, vocab)`` next-token scores for a (causal) decoder input ``(N, T)`` (``last``: only ``(N, vocab)``
        of the last position)."""
        length = decoder_input.shape[1]
        states = self.decoder(self._embed(decoder_input, "decoder"), memory,
                              tgt_mask=self.causal[:length, :length], tgt_is_causal=True)
        return self.output(states[:, -1] if last else states)

    def forward(self, encoder: torch.Tensor, decoder_input: torch.Tensor) -> torch.Tensor:
        return self.decode(self.encode(encoder), decoder_input)

    def loss(self, encoder: torch.Tensor, decoder_input: torch.Tensor, target: torch.Tensor,
             reduction: str = "mean") -> torch.Tensor:
        """Weighted cross-entropy of the target tokens (``reduction="none"``: per sequence, weighted mean)."""
        logits = self(encoder, decoder_input).float()
        losses = F.cross_entropy(logits.transpose(1, 2), target, weight=self.class_weights, reduction="none")
        weights = self.class_weights[target]
        if reduction == "none":
            return losses.sum(dim=1) / weights.sum(dim=1)
        return losses.sum() / weights.sum()

    def training_loss(self, batch, reduction: str = "mean") -> torch.Tensor:
        """:meth:`loss` of an :class:`~cogen_baselines.episodes.MLCBatch`."""
        return self.loss(batch.encoder, batch.decoder_input, batch.target, reduction)

    @torch.no_grad()
    def teacher_forced(self, encoder: torch.Tensor, decoder_input: torch.Tensor) -> torch.Tensor:
        """``(N, 25)`` the argmax at every output position given the gold prefix (SOS and the target's
        first tokens): the reference's test predictions, from which it scores colour and shape."""
        return self(encoder, decoder_input)[:, :GRID_TOKENS].argmax(dim=-1)

    @torch.no_grad()
    def generate(self, encoder: torch.Tensor) -> torch.Tensor:
        """Greedy decoding: ``(N, 25)`` predicted output tokens (any id; non-patch ids mean a malformed grid)."""
        memory = self.encode(encoder)
        tokens = torch.full((encoder.shape[0], 1), SOS, dtype=torch.long, device=encoder.device)
        for _ in range(GRID_TOKENS):
            scores = self.decode(memory, tokens, last=True)
            tokens = torch.cat([tokens, scores.argmax(dim=-1, keepdim=True)], dim=1)
        return tokens[:, 1:]

