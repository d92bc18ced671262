"""The device-agnostic precision switch: what a GPU run does, available on any device.

A run's precision is one of :data:`PRECISIONS`; ``auto`` is FP16 mixed precision on CUDA (the
grid paper's) and FP32 elsewhere. Every training and evaluation pass goes through
:func:`autocast` and :func:`grad_scaler` with the resolved precision, so forcing ``fp16`` or
``bf16`` on a CPU runs the very code path a GPU takes (CPU autocast and an enabled GradScaler),
which is how the tests exercise the CUDA branches without a GPU.
"""

from __future__ import annotations

import torch

__all__ = ["PRECISIONS", "autocast", "grad_scaler", "resolve_precision"]

#: Precisions a run accepts; ``auto`` resolves per device (:func:`resolve_precision`).
PRECISIONS = ("auto", "fp32", "fp16", "bf16")
_DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


def resolve_precision(precision: str, device: torch.device) -> str:
    """``auto``: ``fp16`` on CUDA, ``fp32`` elsewhere; any other value stays as it is."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}")
    if precision == "auto":
        return "fp16" if device.type == "cuda" else "fp32"
    return precision


def autocast(device: torch.device, precision: str = "auto"):
    """Mixed precision for ``precision`` on ``device`` (disabled for ``fp32``)."""
    precision = resolve_precision(precision, device)
    return torch.autocast(device.type, dtype=_DTYPES.get(precision, torch.float32), enabled=precision in _DTYPES)


def grad_scaler(device: torch.device, precision: str = "auto") -> torch.amp.GradScaler:
    """A GradScaler, enabled for ``fp16`` only (bf16 and fp32 need none)."""
    return torch.amp.GradScaler(device.type, enabled=resolve_precision(precision, device) == "fp16")
