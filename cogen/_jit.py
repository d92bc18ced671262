"""The one place that decides Numba options; every kernel in cogen is decorated with :func:`kernel`.

``cache=True`` writes compiled code next to the module (``__pycache__``), so a second process
loads it in a fraction of a second. Numba's cache only notices edits to the kernel's *own*
file, which is why kernels that call each other live in one module.
"""

from __future__ import annotations

import numba

JIT_OPTIONS = {"cache": True, "nogil": True, "boundscheck": False, "error_model": "numpy"}


def kernel(function):
    """Compile ``function`` with cogen's Numba options."""
    return numba.njit(**JIT_OPTIONS)(function)
