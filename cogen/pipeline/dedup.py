"""Leak-free by construction: make every content key unique across all splits of a config.

Samples are visited in canonical order (splits in order, then index). The first sample with a
given key keeps it; every later sample with a key already taken is *regenerated* with the next
retry number until its key is new, so split sizes stay exact. The plan depends only on the keys,
never on how many workers computed them, so it is the same on every machine and every resume.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["MAX_RETRIES", "plan_retries"]

MAX_RETRIES = 1_000


def _as_ints(keys: np.ndarray) -> list[int]:
    return [(int(a) << 64) | int(b) for a, b in keys]


def plan_retries(keys: Sequence[np.ndarray], rekey: Callable[[int, int, int], tuple[int, int]]) -> list[dict[int, int]]:
    """Retry numbers that make all keys unique.

    ``keys[s]`` holds the ``(n_s, 2)`` uint64 keys of part ``s`` (a split) at retry 0;
    ``rekey(s, index, retry)`` computes the key of one sample at a higher retry. Returns, per
    part, ``{index: retry}`` for the samples that must be regenerated.
    """
    allkeys = np.concatenate([np.asarray(k, np.uint64).reshape(-1, 2) for k in keys]) if keys else np.zeros((0, 2))
    if len(allkeys) == 0 or len(np.unique(allkeys, axis=0)) == len(allkeys):
        return [{} for _ in keys]
    taken: set[int] = set()
    duplicates: list[tuple[int, int]] = []
    for part, part_keys in enumerate(keys):
        for index, key in enumerate(_as_ints(np.asarray(part_keys, np.uint64).reshape(-1, 2))):
            if key in taken:
                duplicates.append((part, index))
            taken.add(key)
    plans: list[dict[int, int]] = [{} for _ in keys]
    for part, index in duplicates:
        for retry in range(1, MAX_RETRIES + 1):
            a, b = rekey(part, index, retry)
            key = (int(a) << 64) | int(b)
            if key not in taken:
                taken.add(key)
                plans[part][index] = retry
                break
        else:
            from cogen.errors import GenerationError

            raise GenerationError(f"could not find a new sample after {MAX_RETRIES} regenerations: the spec's space "
                                  "of distinct (input, sequence) pairs is too small for the requested sizes")
    return plans
