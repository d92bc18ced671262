"""The one place that decides Numba options; every kernel in cogen is decorated with :func:`kernel`.

``cache=True`` writes compiled code next to the module (``__pycache__``), so a second process
loads it in a fraction of a second. Numba's cache only notices edits to the kernel's *own*
file, which is why kernels that call each other live in one module, and why a module that uses
kernels or constants of another file pins that file's digest (:mod:`cogen.pins`). While a pin is
stale, the module's kernels are compiled without the cache: correct results, a slower start.

Loading a kernel from the cache, Numba first refreshes its whole target context: it imports about a
hundred modules of typing and lowering code and installs their registries, what *compiling* needs,
0.13-0.20 CPU-s, the largest part of a small build's Numba cost. Code loaded from the cache needs only
Numba's runtime and the C symbols it calls, so cogen's kernels load through :class:`_LightCache`,
which sets up just those; a kernel that is compiled (a cache miss) still refreshes the whole context
(Numba's compiler does it). This leans on three Numba internals, checked before use and pinned by
``tests/test_jit_light_load.py`` (which fails when an upgrade changes them): the cache's
``load_overload`` (refresh, then ``_load_overload``), the dispatcher's ``_cache`` attribute, and the
places that register C symbols with LLVM. Where they do not match, or with
``COGEN_NUMBA_LIGHT_LOAD=0``, kernels load as Numba loads them.
"""

from __future__ import annotations

import logging
import os
from functools import cache

import numba

from cogen import pins

__all__ = ["JIT_OPTIONS", "cache_enabled", "kernel", "light_load_enabled"]

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
    """Compile ``function`` with cogen's Numba options (loaded from the cache by :class:`_LightCache`)."""
    dispatcher = numba.njit(**{**JIT_OPTIONS, "cache": cache_enabled(function.__module__)})(function)
    if type(getattr(dispatcher, "_cache", None)) is _function_cache() and light_load_enabled():
        dispatcher._cache.__class__ = _LightCache
    return dispatcher


#: What Numba's ``Cache.load_overload`` calls, in order (numba 0.68: refresh the target context, then
#: load); another sequence means the method changed, and the light load is not used.
LOAD_OVERLOAD_NAMES = ("refresh", "_guard_against_spurious_io_errors", "_load_overload")
#: Modules that register C symbols with LLVM when imported, which cached code may call: the
#: target context's refresh imports them; the light load imports them itself (numba 0.68: the hash
#: secret of ``numba.cpython.hashing``; the runtime's and the context's own are set up by
#: ``rtsys.initialize`` and the context; ``numba.np.ufunc.parallel``'s only for ``parallel=True``).
SYMBOL_MODULES = ("numba.cpython.hashing",)


def _function_cache() -> type:
    from numba.core.caching import FunctionCache

    return FunctionCache


@cache
def light_load_enabled() -> bool:
    """Whether cogen's kernels load from the cache without refreshing Numba's target context: unless
    ``COGEN_NUMBA_LIGHT_LOAD=0``, and only while Numba's cache loading is the one it was checked against."""
    if os.environ.get("COGEN_NUMBA_LIGHT_LOAD", "1").strip() == "0":
        return False
    loader = _function_cache()
    return loader.load_overload.__code__.co_names == LOAD_OVERLOAD_NAMES and \
        callable(getattr(loader, "_load_overload", None))


def _light_setup(target_context) -> None:
    """What code loaded from the cache needs of Numba: its runtime (NRT) and the C symbols it may call."""
    import importlib

    from numba.core.runtime import rtsys

    rtsys.initialize(target_context)
    for name in SYMBOL_MODULES:
        importlib.import_module(name)


class _LightCache(_function_cache()):
    """Numba's cache of one kernel, loading without refreshing the target context (module docstring)."""

    def load_overload(self, sig, target_context):
        try:
            _light_setup(target_context)
            with self._guard_against_spurious_io_errors():
                return self._load_overload(sig, target_context)
        except Exception:  # anything unexpected: load as Numba does (which says what is wrong, if anything)
            log.debug("light load of %s failed; loading as Numba does", getattr(self, "_name", "a kernel"), exc_info=True)
            return super().load_overload(sig, target_context)
