"""The result of one check of ``cogen verify`` (its own module, so the verify levels can share it)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Check"]


@dataclass(frozen=True)
class Check:
    """One verified property of one config (or of the whole folder when ``config`` is empty)."""

    config: str
    name: str
    ok: bool
    detail: str = ""
