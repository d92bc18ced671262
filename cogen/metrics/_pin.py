"""Keep the stubbornness kernel's Numba cache honest about the engine kernels it inlines.

``python -m cogen.metrics._pin`` rewrites ``ENGINE_KERNELS_SHA256`` in ``_stubborn_kernels.py``
with the digest of ``cogen/engine/_kernels.py`` (the same pin as the sampler's, see
:mod:`cogen.generate.stamp`). Numba keys its cache on the caller's own source, so the pin is what
invalidates that cache when the engine changes; while it is stale, :mod:`cogen.metrics.stubborn`
compiles an uncached copy instead, and ``tests/test_metrics.py`` fails.
"""

from __future__ import annotations

from pathlib import Path

from cogen.generate.stamp import refresh, stamp_is_current

__all__ = ["engine_pin_is_current", "refresh_engine_pin"]

_KERNELS = Path(__file__).resolve().parent / "_stubborn_kernels.py"


def engine_pin_is_current() -> bool:
    """True when ``_stubborn_kernels.ENGINE_KERNELS_SHA256`` is the digest of the engine kernels' source."""
    return stamp_is_current(_KERNELS)


def refresh_engine_pin() -> bool:
    """Pin the current engine digest in ``_stubborn_kernels.py`` (invalidating its Numba cache); True if changed."""
    return refresh(_KERNELS)


if __name__ == "__main__":
    print("updated" if refresh_engine_pin() else "already current")
