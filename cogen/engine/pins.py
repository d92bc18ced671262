"""Keep the Numba caches of the engine's callers honest about the engine kernels they inline.

Numba keys a cached kernel on its *own* source file only, so a kernel in another module that
calls ``run_scene`` would keep running the old engine after ``cogen/engine/_kernels.py``
changes. Each such module pins the engine's digest in a line ``ENGINE_KERNELS_SHA256 = "..."``;
changing the pin changes the module's source and so invalidates its cache.

``python -m cogen.engine.pins`` refreshes every pin; ``tests/test_engine_pins.py`` fails while
one is stale.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

__all__ = ["PINNED_CALLERS", "engine_digest", "is_current", "refresh", "stale_callers"]

_PACKAGE = Path(__file__).resolve().parents[1]
_KERNELS = _PACKAGE / "engine" / "_kernels.py"
#: Modules whose Numba kernels call the engine kernels, relative to the package.
PINNED_CALLERS = ("generate/_sampler.py", "metrics/_stubborn_kernels.py")
_LINE = re.compile(r'^ENGINE_KERNELS_SHA256 = "([0-9a-f]*)"$', re.MULTILINE)


def engine_digest() -> str:
    """SHA-256 of the engine kernels' source."""
    return hashlib.sha256(_KERNELS.read_bytes()).hexdigest()


def is_current(caller: str) -> bool:
    """True when the module ``caller`` (e.g. ``"generate/_sampler.py"``) pins the current engine."""
    match = _LINE.search((_PACKAGE / caller).read_text(encoding="utf-8"))
    return bool(match) and match.group(1) == engine_digest()


def stale_callers() -> list[str]:
    """The pinned callers whose pin differs from the current engine."""
    return [caller for caller in PINNED_CALLERS if not is_current(caller)]


def refresh() -> list[str]:
    """Pin the current engine digest in every caller; returns the files that changed."""
    changed = []
    for caller in PINNED_CALLERS:
        path = _PACKAGE / caller
        text = path.read_text(encoding="utf-8")
        updated = _LINE.sub(f'ENGINE_KERNELS_SHA256 = "{engine_digest()}"', text)
        if updated != text:
            path.write_text(updated, encoding="utf-8")
            changed.append(caller)
    return changed


if __name__ == "__main__":
    print("\n".join(f"updated {c}" for c in refresh()) or "all pins current")
