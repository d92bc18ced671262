"""Keep the sampler's Numba cache honest about the engine kernels it inlines.

``python -m cogen.generate.stamp`` rewrites ``ENGINE_KERNELS_SHA256`` in ``_sampler.py`` with the
digest of ``cogen/engine/_kernels.py``. Numba keys its cache on the caller's own source only,
so this pinned digest is what invalidates the sampler's cache when the engine kernels change;
``tests/test_generate.py`` fails while it is stale.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

__all__ = ["engine_digest", "refresh", "stamp_is_current"]

_PACKAGE = Path(__file__).resolve().parents[1]
_KERNELS = _PACKAGE / "engine" / "_kernels.py"
_SAMPLER = _PACKAGE / "generate" / "_sampler.py"
_LINE = re.compile(r'^ENGINE_KERNELS_SHA256 = "([0-9a-f]*|unset)"$', re.MULTILINE)


def engine_digest() -> str:
    """SHA-256 of the engine kernels' source."""
    return hashlib.sha256(_KERNELS.read_bytes()).hexdigest()


def _pinned(pinned: Path = _SAMPLER) -> str:
    match = _LINE.search(pinned.read_text(encoding="utf-8"))
    return match.group(1) if match else ""


def stamp_is_current(pinned: Path = _SAMPLER) -> bool:
    """True when ``pinned`` (by default the sampler) pins the current engine kernels."""
    return _pinned(pinned) == engine_digest()


def refresh(pinned: Path = _SAMPLER) -> bool:
    """Pin the current engine digest in ``pinned`` (by default ``_sampler.py``); True if the file changed."""
    text = pinned.read_text(encoding="utf-8")
    updated = _LINE.sub(f'ENGINE_KERNELS_SHA256 = "{engine_digest()}"', text)
    if updated != text:
        pinned.write_text(updated, encoding="utf-8")
    return updated != text


if __name__ == "__main__":
    print("updated" if refresh() else "already current")
