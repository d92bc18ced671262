"""Keep Numba's on-disk caches honest about code that a kernel module takes from other files.

Numba keys a cached kernel on its *own* source file only. A kernel module that calls kernels of
another file (the engine's ``run_scene``, the RNG of :mod:`cogen.rng`) or bakes in constants
computed from another file (the engine's per-token tables from the transformation registry)
would keep running the old code after that file changes. So each such module carries a line

    KERNELS_SHA256 = "<digest of the files it depends on>"

and :data:`PINNED` lists what it depends on. Changing a pin changes the module's source, which
invalidates its cache. While a pin is stale (someone edited a dependency and has not refreshed),
:func:`cogen.jit.kernel` compiles that module's kernels without the cache, so the results are
right, only slower to start, and a warning says how to refresh.

``python -m cogen.pins`` refreshes every pin; ``tests/test_pins.py`` fails while one is stale and
when a kernel module imports a pinned dependency without being listed here.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from types import MappingProxyType

__all__ = ["PINNED", "digest", "is_current", "refresh", "stale_modules"]

_PACKAGE = Path(__file__).resolve().parent
#: Kernel module -> the modules whose source it depends on (its calls and its baked-in constants).
PINNED: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "cogen.engine._kernels": ("cogen.engine.registry",),
    "cogen.engine._replay": ("cogen.engine._kernels",),
    "cogen.families.cogitao.generate._sampler": ("cogen.rng", "cogen.slots", "cogen.engine._kernels"),
    "cogen.metrics._stubborn_kernels": ("cogen.engine._kernels",),
    "cogen.carc._kernels": ("cogen.rng", "cogen.slots"),
    "cogen.carc._replay": ("cogen.carc._kernels",),
})
_LINE = re.compile(r'^KERNELS_SHA256 = "([0-9a-f]*)"$', re.MULTILINE)


def _path(module: str) -> Path:
    return _PACKAGE.joinpath(*module.split(".")[1:]).with_suffix(".py")


def digest(module: str) -> str:
    """SHA-256 of the sources ``module`` depends on (in :data:`PINNED` order)."""
    sha = hashlib.sha256()
    for dependency in PINNED[module]:
        sha.update(_path(dependency).read_bytes())
    return sha.hexdigest()


@cache
def is_current(module: str) -> bool:
    """True when ``module`` (e.g. ``"cogen.families.cogitao.generate._sampler"``) pins the current digest of its dependencies."""
    match = _LINE.search(_path(module).read_text(encoding="utf-8"))
    return bool(match) and match.group(1) == digest(module)


def stale_modules() -> list[str]:
    """The pinned modules whose pin differs from the current digest of their dependencies."""
    return [module for module in PINNED if not is_current(module)]


def refresh() -> list[str]:
    """Pin the current digests (dependencies first, so chains settle in one pass); returns the changed files."""
    changed = []
    for module in _dependency_order():
        path = _path(module)
        text = path.read_text(encoding="utf-8")
        updated = _LINE.sub(f'KERNELS_SHA256 = "{digest(module)}"', text)
        if updated != text:
            path.write_text(updated, encoding="utf-8")
            changed.append(str(path.relative_to(_PACKAGE.parent)))
    is_current.cache_clear()
    return changed


def _dependency_order() -> list[str]:
    ordered: list[str] = []

    def visit(module: str) -> None:
        for dependency in PINNED.get(module, ()):
            visit(dependency)
        if module in PINNED and module not in ordered:
            ordered.append(module)

    for module in PINNED:
        visit(module)
    return ordered


if __name__ == "__main__":
    print("\n".join(f"updated {path}" for path in refresh()) or "all pins current")
