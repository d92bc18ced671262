"""Building blocks shared by the models: initialisation, positional encodings, attention, heads.

Everything here is plain PyTorch. Attention goes through ``scaled_dot_product_attention`` (fused
kernels on GPU); rotary encodings are precomputed per sequence layout and stored as buffers, so a
forward pass does no Python work per token or per sample.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["DROPOUT_PLACES", "INITS", "Block", "CellEmbedding", "Encoder", "MLPHead", "Rotary", "head_dim_check",
           "init_weights", "l2_normalise", "output_layer", "reset_to_defaults", "rotary_1d", "rotary_2d", "sincos",
           "sincos_2d"]

#: Where a model's initialisation comes from: ``code``, the authors' code (each model says how); ``text``,
#: the paper's text (truncated normal, std 0.02: decision 2, with the output layers of :func:`init_weights`).
INITS = ("code", "text")
#: Where a block's dropout sits: ``inner``, on the attention probabilities and inside the feed-forward
#: (after its activation and after its output layer; the authors' code); ``residual``, on the output of
#: the attention and of the feed-forward, before each residual sum (the paper's text).
DROPOUT_PLACES = ("inner", "residual")


def init_weights(model: nn.Module, std: float = 0.02, fan_in: bool = False) -> None:
    """The paper's text's initialisation: truncated-normal weights cut at 2 std, zero biases, unit norm
    scales (the paper: "truncated normal"; ``init="text"``; the authors' code is each model's ``init="code"``).

    Weights get std 0.02 (decision 2), except layers marked by :func:`output_layer` (the linear
    layers that map the trunk to the classes) and, with ``fan_in=True``, every conv and linear
    layer: those get std ``1/sqrt(fan_in)``. Three stacked output layers at std 0.02 start training
    on a long plateau (measured on 256 samples of one transformation: a small Vanilla-TF does not
    learn a one-cell colour change in 300 steps; with the scaled output layers it does in 100, and
    the ResNet likewise).
    """
    for module in model.modules():
        if isinstance(module, CellEmbedding):
            nn.init.trunc_normal_(module.weight, std=std, a=-2 * std, b=2 * std)
            nn.init.zeros_(module.bias)
        elif isinstance(module, (nn.Linear, nn.Conv2d, nn.Embedding)):
            scaled = (fan_in or getattr(module, "output_layer", False)) and not isinstance(module, nn.Embedding)
            scale = module.weight[0].numel() ** -0.5 if scaled else std
            nn.init.trunc_normal_(module.weight, std=scale, a=-2 * scale, b=2 * scale)
            if getattr(module, "bias", None) is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, (nn.LayerNorm, nn.RMSNorm, nn.BatchNorm2d)):
            if module.weight is not None:
                nn.init.ones_(module.weight)
            if getattr(module, "bias", None) is not None:
                nn.init.zeros_(module.bias)


def reset_to_defaults(model: nn.Module) -> None:
    """PyTorch's own initialisation of every layer of ``model`` (what the authors' code leaves as it is):
    linear and conv layers kaiming-uniform with ``a = sqrt(5)`` (bound ``1/sqrt(fan_in)``, biases too),
    embeddings N(0, 1), norms 1 and 0, multi-head attention xavier-uniform with zero biases. Children are
    reset before their parents, so a parent's own reset (attention zeroing its output bias) wins, as at
    construction."""
    for module in reversed(list(model.modules())):
        reset = getattr(module, "reset_parameters", None) or getattr(module, "_reset_parameters", None)
        if module is not model and callable(reset):
            reset()


def output_layer(layer: nn.Linear) -> nn.Linear:
    """Mark ``layer`` as one of the layers that map the trunk to the classes (fan-in init, see :func:`init_weights`)."""
    layer.output_layer = True
    return layer


def sincos(positions: torch.Tensor, dim: int, base: float = 10_000.0) -> torch.Tensor:
    """``(..., dim)`` fixed sin-cos features of integer ``positions``: sines of ``dim/2`` frequencies, then cosines."""
    half = dim // 2
    frequencies = base ** (-torch.arange(half, dtype=torch.float32, device=positions.device) / half)
    angles = positions.to(torch.float32)[..., None] * frequencies
    return torch.cat([angles.sin(), angles.cos()], dim=-1)


def sincos_2d(height: int, width: int, dim: int) -> torch.Tensor:
    """``(height * width, dim)`` 2-D sin-cos table: half of ``dim`` encodes the column, half the row."""
    rows, cols = torch.meshgrid(torch.arange(height), torch.arange(width), indexing="ij")
    return torch.cat([sincos(cols.reshape(-1), dim // 2), sincos(rows.reshape(-1), dim // 2)], dim=-1)


def rotary_1d(length: int, head_dim: int, theta: float = 10_000.0) -> torch.Tensor:
    """``(length, head_dim/2)`` rotary angles of positions ``0..length-1``."""
    frequencies = theta ** (-torch.arange(head_dim // 2, dtype=torch.float64) / (head_dim // 2))
    return (torch.arange(length, dtype=torch.float64)[:, None] * frequencies).to(torch.float32)


def rotary_2d(height: int, width: int, head_dim: int, before: int = 0, after: int = 0) -> torch.Tensor:
    """``(before + height*width + after, head_dim/2)`` axial rotary angles as the authors' code has them
    (``rotary-embedding-torch``'s ``freqs_for='pixel'``, ``max_freq = side // 2``, over ``head_dim // 4``
    dimensions per axis): positions spaced evenly over [-1, 1] along each axis, ``n`` rotation pairs per
    axis at the frequencies ``pi * linspace(1, max_freq / 2, n)``; the rows turn the first ``n`` pairs,
    the columns the next ``n``, and the other half of the head is not rotated (angle 0). The
    ``before``/``after`` tokens (registers, task codes) get angle 0: attention to and from them ignores
    position, as in the code, which leaves them out of the rotation."""
    per_axis = head_dim // 4
    per_axis = per_axis if per_axis % 2 == 0 else max(2, per_axis - 1)
    pairs = per_axis // 2
    if 2 * pairs > head_dim // 2:
        raise ValueError(f"head size {head_dim} is too small for 2-D rotary pairs")
    max_freq = max(height, width) // 2
    frequencies = math.pi * torch.linspace(1.0, max_freq / 2, pairs, dtype=torch.float64)
    rows, cols = torch.meshgrid(torch.linspace(-1, 1, height, dtype=torch.float64),
                                torch.linspace(-1, 1, width, dtype=torch.float64), indexing="ij")
    out = torch.zeros(before + height * width + after, head_dim // 2, dtype=torch.float64)
    out[before: before + height * width, :pairs] = rows.reshape(-1, 1) * frequencies
    out[before: before + height * width, pairs: 2 * pairs] = cols.reshape(-1, 1) * frequencies
    return out.to(torch.float32)


class Rotary(nn.Module):
    """Rotary position embedding with fixed angles ``(L, head_dim/2)``; rotates q and k of shape ``(B, h, L, hd)``,
    pairs of neighbouring dimensions. The rotation is computed in FP32 whatever the activations' precision
    (under FP16 autocast too) and cast back, as the authors' code does (``rope_full_precision``; the rotary
    library disables autocast): an FP16 cosine of a large angle is off by about 5e-4."""

    def __init__(self, angles: torch.Tensor):
        super().__init__()
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        wide = x.float() if x.element_size() < 4 else x
        even, odd = wide[..., 0::2], wide[..., 1::2]
        cos, sin = self.cos, self.sin
        return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2).to(x.dtype)


class Attention(nn.Module):
    """Multi-head self-attention (bidirectional), optionally rotary; ``dropout`` on the attention
    probabilities while training."""

    def __init__(self, dim: int, heads: int, bias: bool = True, dropout: float = 0.0):
        super().__init__()
        self.heads, self.dropout = heads, dropout
        self.qkv = nn.Linear(dim, 3 * dim, bias=bias)
        self.out = nn.Linear(dim, dim, bias=bias)

    def forward(self, x: torch.Tensor, rotary: Rotary | None = None) -> torch.Tensor:
        batch, length, dim = x.shape
        q, k, v = self.qkv(x).view(batch, length, 3, self.heads, dim // self.heads).permute(2, 0, 3, 1, 4)
        if rotary is not None:
            q, k = rotary(q), rotary(k)
        mixed = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0)
        return self.out(mixed.transpose(1, 2).reshape(batch, length, dim))


class SwiGLU(nn.Module):
    """LLaMA-style gated feed-forward: ``down(silu(gate(x)) * up(x))``, no biases."""

    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.gate(x)) * self.up(x))


def _feed_forward(dim: int, hidden: int, kind: str, dropout: float = 0.0) -> nn.Module:
    if kind == "swiglu":
        return SwiGLU(dim, hidden)
    return nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Dropout(dropout), nn.Linear(hidden, dim),
                         nn.Dropout(dropout))


def _norm(dim: int, kind: str) -> nn.Module:
    return nn.RMSNorm(dim, eps=1e-5) if kind == "rms" else nn.LayerNorm(dim)


class Block(nn.Module):
    """Pre-norm transformer block; ``dropout`` where ``dropout_at`` says (:data:`DROPOUT_PLACES`)."""

    def __init__(self, dim: int, heads: int, hidden: int, dropout: float = 0.0, norm: str = "layer",
                 feed_forward: str = "gelu", bias: bool = True, dropout_at: str = "inner"):
        super().__init__()
        if dropout_at not in DROPOUT_PLACES:
            raise ValueError(f"dropout_at={dropout_at!r} is not one of {', '.join(DROPOUT_PLACES)}")
        inner = dropout if dropout_at == "inner" else 0.0
        self.norm1, self.norm2 = _norm(dim, norm), _norm(dim, norm)
        self.attention = Attention(dim, heads, bias, inner)
        self.feed_forward = _feed_forward(dim, hidden, feed_forward, inner)
        self.dropout = nn.Dropout(dropout if dropout_at == "residual" else 0.0)

    def forward(self, x: torch.Tensor, rotary: Rotary | None = None) -> torch.Tensor:
        x = x + self.dropout(self.attention(self.norm1(x), rotary))
        return x + self.dropout(self.feed_forward(self.norm2(x)))


class Encoder(nn.Module):
    """``depth`` blocks and a final norm; one rotary table (or none) shared by every layer."""

    def __init__(self, depth: int, dim: int, heads: int, hidden: int, dropout: float = 0.0, norm: str = "layer",
                 feed_forward: str = "gelu", bias: bool = True, rotary: torch.Tensor | None = None,
                 dropout_at: str = "inner"):
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim, heads, hidden, dropout, norm, feed_forward, bias, dropout_at)
                                    for _ in range(depth))
        self.norm = _norm(dim, norm)
        self.rotary = Rotary(rotary) if rotary is not None else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x, self.rotary)
        return self.norm(x)


class MLPHead(nn.Module):
    """The paper's 2-layer MLP head, applied to every grid token: ``dim -> hidden -> ReLU -> classes``
    (the reference code's ``activation='relu'``)."""

    def __init__(self, dim: int, hidden: int, classes: int):
        super().__init__()
        self.net = nn.Sequential(output_layer(nn.Linear(dim, hidden)), nn.ReLU(), output_layer(nn.Linear(hidden, classes)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class CellEmbedding(nn.Module):
    """The papers' patch embedding at patch size 1: a 1x1 convolution of the one-hot grid, that is one
    vector per class plus a bias shared by every cell, kept as a lookup (no one-hot tensor). Initialised
    as PyTorch initialises that convolution (``fan_in`` = the classes); :func:`init_weights` gives the
    text's form."""

    def __init__(self, classes: int, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(classes, dim))
        self.bias = nn.Parameter(torch.empty(dim))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = self.weight.shape[0] ** -0.5
        nn.init.uniform_(self.weight, -bound, bound)
        nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, cells: torch.Tensor) -> torch.Tensor:
        return F.embedding(cells, self.weight) + self.bias


def l2_normalise(x: torch.Tensor) -> torch.Tensor:
    """Unit vectors along the last axis (zero stays zero)."""
    return x / x.norm(dim=-1, keepdim=True).clamp_min(1e-6)


def head_dim_check(dim: int, heads: int, multiple: int) -> None:
    """Refuse widths whose head size cannot carry the rotary pairs."""
    if dim % heads or (dim // heads) % multiple:
        raise ValueError(f"width {dim} with {heads} heads gives head size {dim / heads}; "
                         f"it must be a multiple of {multiple}")

