"""Keep the stubbornness kernel's Numba cache honest about the engine kernels it inlines.

``python -m cogen.metrics._pin`` rewrites ``ENGINE_KERNELS_SHA256`` in ``_stubborn_kernels.py``
with the digest of ``cogen/engine/_kernels.py``. Numba keys its cache on the caller's own source,
so the pin is what invalidates that cache when the engine changes; while it is stale,
:mod:`cogen.metrics.stubborn` compiles an uncached copy instead, and ``tests/test_metrics.py`` fails.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

__all__ = ["engine_pin_is_current", "refresh_engine_pin"]

_PIN = re.compile(r'^ENGINE_KERNELS_SHA256 = "([0-9a-f]*)"$', re.MULTILINE)


def _kernel_files() -> tuple[Path, Path]:
    import cogen.engine as engine

    here = Path(__file__).resolve().parent
    return Path(engine.__file__).resolve().parent / "_kernels.py", here / "_stubborn_kernels.py"


def engine_pin_is_current() -> bool:
    """True when ``_stubborn_kernels.ENGINE_KERNELS_SHA256`` is the digest of the engine kernels' source."""
    engine, pinned = _kernel_files()
    match = _PIN.search(pinned.read_text(encoding="utf-8"))
    return bool(match) and match.group(1) == hashlib.sha256(engine.read_bytes()).hexdigest()


def refresh_engine_pin() -> bool:
    """Pin the current engine digest in ``_stubborn_kernels.py`` (invalidating its Numba cache); True if changed."""
    engine, pinned = _kernel_files()
    text = pinned.read_text(encoding="utf-8")
    updated = _PIN.sub(f'ENGINE_KERNELS_SHA256 = "{hashlib.sha256(engine.read_bytes()).hexdigest()}"', text)
    if updated != text:
        pinned.write_text(updated, encoding="utf-8")
    return updated != text


if __name__ == "__main__":
    print("updated" if refresh_engine_pin() else "already current")
