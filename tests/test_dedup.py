"""The regeneration plan: batched key computation gives exactly the one-by-one plan."""

import numpy as np
import pytest

from cogen.errors import GenerationError
from cogen.pipeline.dedup import MAX_RETRIES, RETRY_BATCH, plan_retries


def _key(part: int, index: int, retry: int, space: int) -> tuple[int, int]:
    """A deterministic key drawn from ``space`` values, so that collisions (at any retry) are common."""
    value = int(np.random.default_rng([part, index, retry]).integers(space))
    return value, value * 7 + 1


def _one_by_one(keys: list[np.ndarray], space: int) -> list[dict[int, int]]:
    """The plan's definition: canonical order, first key wins, a repeat takes its first free retry."""
    taken, duplicates = set(), []
    for part, part_keys in enumerate(keys):
        for index, key in enumerate(map(tuple, part_keys.tolist())):
            if key in taken:
                duplicates.append((part, index))
            taken.add(key)
    plans = [{} for _ in keys]
    for part, index in duplicates:
        for retry in range(1, MAX_RETRIES + 1):
            key = _key(part, index, retry, space)
            if key not in taken:
                taken.add(key)
                plans[part][index] = retry
                break
        else:
            raise GenerationError("exhausted")
    return plans


@pytest.mark.parametrize("seed", range(16))
def test_plan_equals_the_one_by_one_definition(seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 50, int(rng.integers(1, 4)))
    space = int(sizes.sum()) * 2 + int(rng.integers(1, 100))
    keys = [np.array([_key(p, i, 0, space) for i in range(n)], np.uint64).reshape(-1, 2) for p, n in enumerate(sizes)]
    calls = []

    def rekey(part, indices, retries):
        calls.append(len(indices))
        return np.array([_key(part, i, r, space) for i, r in zip(indices.tolist(), retries.tolist(), strict=True)],
                        np.uint64).reshape(-1, 2)

    expected = _one_by_one(keys, space)
    assert plan_retries(keys, rekey) == expected
    regenerated = sum(map(len, expected))
    # batched: one call per part for every first retry, then one per RETRY_BATCH later retries of a sample
    later = sum(-(-(retry - 1) // RETRY_BATCH) for plan in expected for retry in plan.values())
    assert len(calls) <= len(keys) + later
    merged = [tuple(k) for part_keys in keys for k in part_keys.tolist()]
    if len(set(merged)) < len(merged):
        assert regenerated > 0


def test_a_space_too_small_is_a_clear_error():
    keys = [np.zeros((3, 2), np.uint64)]
    with pytest.raises(GenerationError, match="too small"):
        plan_retries(keys, lambda part, indices, retries: np.zeros((len(indices), 2), np.uint64))
