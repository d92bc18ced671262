"""The one place that decides Numba options; every kernel in cogen is decorated with :func:`kernel`.

``cache=True`` writes compiled code next to the module (``__pycache__``), so a second process
loads it in a fraction of a second. Numba's cache only notices edits to the kernel's *own*
file, which is why kernels that call each other live in one module, and why a module that uses
kernels or constants of another file pins that file's digest (:mod:`cogen.pins`). While a pin is
stale, the module's kernels are compiled without the cache: correct results, a slower start.
"""

from __future__ import annotations

import logging
from functools import cache

import numba

from cogen import pins

__all__ = ["JIT_OPTIONS", "cache_enabled", "kernel"]

JIT_OPTIONS = {"cache": True, "nogil": True, "boundscheck": False, "error_model": "numpy"}
log = logging.getLogger(__name__)


@cache
def cache_enabled(module: str) -> bool:
    """Whether the kernels of ``module`` may use Numba's on-disk cache (no when its pin is stale)."""
    if module not in pins.PINNED or pins.is_current(module):
        return True
    log.warning("%s pins older versions of %s; compiling its kernels without the cache (run "
                "`python -m cogen.pins` to refresh the pin)", module, ", ".join(pins.PINNED[module]))
    return False


def kernel(function):
    """Compile ``function`` with cogen's Numba options."""
    return numba.njit(**{**JIT_OPTIONS, "cache": cache_enabled(function.__module__)})(function)
