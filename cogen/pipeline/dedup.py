"""Leak-free by construction: make every content key unique across all splits of a config.

Samples are visited in canonical order (splits in order, then index). The first sample with a
given key keeps it; every later sample with a key already taken is *regenerated* with the next
retry number until its key is new, so split sizes stay exact. The plan depends only on the keys,
never on how many workers computed them, so it is the same on every machine and every resume.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["MAX_RETRIES", "duplicates", "plan_retries"]

MAX_RETRIES = 1_000
#: Retries computed at once for a sample whose first regeneration was taken too.
RETRY_BATCH = 8
#: rekey(part, indices, retries): the ``(k, 2)`` uint64 keys of samples ``indices`` of part ``part``
#: at retry numbers ``retries`` (one batched call of the sample function).
Rekey = Callable[[int, np.ndarray, np.ndarray], np.ndarray]


def _key_bytes(keys: np.ndarray) -> list[bytes]:
    """Each 128-bit key as bytes (hashable; equal bytes iff equal keys)."""
    return np.ascontiguousarray(keys, np.uint64).reshape(-1, 2).view("S16").ravel().tolist()


def duplicates(parts: list[np.ndarray]) -> list[tuple[int, int]]:
    """``(part, index)`` of every sample whose key an earlier sample (canonical order) already has."""
    allkeys = np.concatenate(parts)
    order = np.lexsort((allkeys[:, 1], allkeys[:, 0]))  # stable: equal keys keep canonical order
    ranked = allkeys[order]
    repeated = (ranked[1:] == ranked[:-1]).all(axis=1)
    positions = np.sort(order[1:][repeated])
    bounds = np.cumsum([0] + [len(p) for p in parts])
    owners = np.searchsorted(bounds, positions, side="right") - 1
    return list(zip(owners.tolist(), (positions - bounds[owners]).tolist(), strict=True))


def plan_retries(keys: Sequence[np.ndarray], rekey: Rekey) -> list[dict[int, int]]:
    """Retry numbers that make all keys unique.

    ``keys[s]`` holds the ``(n_s, 2)`` uint64 keys of part ``s`` (a split) at retry 0; ``rekey``
    computes keys at higher retries (see :data:`Rekey`). Returns, per part, ``{index: retry}``
    for the samples that must be regenerated. Duplicates are resolved one by one in canonical
    order, each taking its first retry whose key is new; keys are computed in batches (every
    duplicate's first retry in one call per part) without changing that order's outcome.
    """
    parts = [np.asarray(k, np.uint64).reshape(-1, 2) for k in keys]
    plans: list[dict[int, int]] = [{} for _ in parts]
    if not parts or sum(map(len, parts)) == 0:
        return plans
    repeated = duplicates(parts)
    if not repeated:
        return plans
    taken = set(_key_bytes(np.concatenate(parts)))
    candidates: dict[tuple[int, int, int], bytes] = {}
    for part in range(len(parts)):
        indices = np.array([i for p, i in repeated if p == part], np.int64)
        if len(indices):
            found = _key_bytes(rekey(part, indices, np.ones(len(indices), np.int64)))
            candidates.update(((part, i, 1), key) for i, key in zip(indices.tolist(), found, strict=True))
    for part, index in repeated:
        for retry in range(1, MAX_RETRIES + 1):
            if (part, index, retry) not in candidates:
                retries = np.arange(retry, min(retry + RETRY_BATCH, MAX_RETRIES + 1), dtype=np.int64)
                found = _key_bytes(rekey(part, np.full(len(retries), index, np.int64), retries))
                candidates.update(((part, index, r), key) for r, key in zip(retries.tolist(), found, strict=True))
            key = candidates.pop((part, index, retry))
            if key not in taken:
                taken.add(key)
                plans[part][index] = retry
                break
        else:
            from cogen.errors import GenerationError

            raise GenerationError(f"could not find a new sample after {MAX_RETRIES} regenerations: the spec's space "
                                  "of distinct (input, sequence) pairs is too small for the requested sizes")
    return plans
