"""Numba kernel of ``cogen verify``'s row keys: 128 bits per (grid, tag), independent of the sampler.

The sampler deduplicates with its own FNV-style key (:func:`cogen.families.cogitao.generate._sampler.content_key`);
verifying uniqueness with that same function would trust it. :func:`grid_keys` hashes a different
framing (height and width, a caller's tag such as the sequence's id, then the cells eight at a
time) with MurmurHash3's 64-bit finaliser in two lanes. Equal rows always get equal keys; two
different rows share a key with probability about 2**-128.
"""

from __future__ import annotations

import numpy as np

from cogen.jit import kernel

__all__ = ["grid_keys"]

_C1 = np.uint64(0xFF51AFD7ED558CCD)
_C2 = np.uint64(0xC4CEB9FE1A85EC53)
_K1 = np.uint64(0x9FB21C651E98DF25)
_K2 = np.uint64(0xD6E8FEB86659FD93)
_B0 = np.uint64(0x2545F4914F6CDD1D)


@kernel
def _fmix(z):
    """MurmurHash3's 64-bit finaliser (a bijection)."""
    z = (z ^ (z >> np.uint64(33))) * _C1
    z = (z ^ (z >> np.uint64(33))) * _C2
    return z ^ (z >> np.uint64(33))


@kernel
def grid_keys(heights, widths, tags, cells, starts, keys):
    """``keys[s]`` = two uint64 of row ``s``: its grid's ``heights[s] x widths[s]`` int8 cells at
    ``cells[starts[s]:]`` (row-major) and its ``tags[s]``."""
    for s in range(heights.shape[0]):
        size = heights[s] * widths[s]
        a = _fmix((np.uint64(heights[s]) << np.uint64(32)) | np.uint64(widths[s]))
        b = _fmix(np.uint64(tags[s]) + _B0)
        for i in range(0, size, 8):
            word = np.uint64(0)
            for k in range(min(8, size - i)):
                word |= np.uint64(np.uint8(cells[starts[s] + i + k])) << np.uint64(8 * k)
            a = _fmix(a ^ word) + _K1
            b = _fmix(b + word * _K2) ^ (b >> np.uint64(29))
        keys[s, 0] = _fmix(a ^ np.uint64(size))
        keys[s, 1] = _fmix(b ^ a)
