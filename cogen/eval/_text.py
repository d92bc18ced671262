"""How ``cogen eval`` writes numbers in its summary table."""

from __future__ import annotations

import math

__all__ = ["percent"]


def percent(value: float | None) -> str:
    """``12.34 %``, or ``–`` for a missing value (None or NaN)."""
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:.2f} %"
