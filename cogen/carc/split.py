"""The systematicity-aware split of Compositional-ARC (reference ``split_data_systematicity.py``).

A *triplet* is the unordered set of an episode's three transformation types. The ten triplets
(``itertools.combinations`` of the types in the reference's order) are shuffled with Python's
``random`` seeded by the split seed; the first ``held_out`` (2, i.e. 20 %) appear only in
validation and test, the rest only in training. Seeds 1860, 1870, 1880 and 1890 give the
held-out triplets of the paper's Table 7.

>>> held_out_triplets(1860)[0]
[('translation', 'rotation', 'grow'), ('translation', 'mirror', 'grow')]
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

import numpy as np

from cogen.carc.grammar import TRANSFORMATIONS

__all__ = ["STATIC_TEST_FRACTION", "all_triplets", "held_out_triplets", "split_rows", "static_split", "triplet_code"]

#: Share of the static variant's 8 episodes held out for testing (reference: ``int(0.2 * 8)`` = 1).
STATIC_TEST_FRACTION = 0.2


def all_triplets(names: Sequence[str] = TRANSFORMATIONS) -> list[tuple[str, str, str]]:
    """The ten triplets, in ``itertools.combinations`` order."""
    return list(itertools.combinations(names, 3))


def held_out_triplets(seed: int, held_out: int = 2,
                      names: Sequence[str] = TRANSFORMATIONS) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """``(held-out triplets, training triplets)`` of split ``seed``, each in shuffled order.

    Exactly the reference: ``random.seed(seed)`` then ``random.shuffle`` of the combinations (an
    explicit ``random.Random(seed)`` draws the same numbers without touching the global state).
    """
    triplets = all_triplets(names)
    random.Random(seed).shuffle(triplets)
    return triplets[:held_out], triplets[held_out:]


def triplet_code(triplet: Sequence[str]) -> int:
    """``sum(1 << type code)`` of a triplet of type names (the code :func:`split_rows` compares)."""
    return sum(1 << TRANSFORMATIONS.index(name) for name in triplet)


def split_rows(codes: np.ndarray, variants: np.ndarray, seed: int, held_out: int = 2, min_label_count: int = 0,
               n_variants: int | None = None) -> dict[str, np.ndarray]:
    """Pool indices of the train, validation and test episodes of split ``seed``.

    ``codes[i]`` is episode ``i``'s triplet code, ``variants[i]`` its three role variants (their
    numbers stand for the reference's function labels). Training keeps every episode of a training
    triplet in pool order; the evaluation pool keeps every episode of a held-out triplet whose three
    labels each occur at least ``min_label_count`` times in training, and its first half (rounded
    down) is validation, the rest test.
    """
    held, _ = held_out_triplets(seed, held_out)
    is_held = np.isin(codes, [triplet_code(t) for t in held])
    train = np.flatnonzero(~is_held)
    counts = np.bincount(variants[train].ravel(), minlength=n_variants or (int(variants.max(initial=0)) + 1))
    enough = (counts[variants] >= min_label_count).all(axis=1) if len(variants) else np.zeros(0, bool)
    pool = np.flatnonzero(is_held & enough)
    half = len(pool) // 2
    return {"train": train, "validation": pool[:half], "test": pool[half:]}


def static_split(seed: int, episodes: int = 8) -> tuple[list[int], list[int]]:
    """``(training episodes, test episodes)`` of the static variant: shuffled, the last 20 % held out."""
    order = list(range(episodes))
    random.Random(seed).shuffle(order)
    n_test = int(STATIC_TEST_FRACTION * episodes)
    return order[: episodes - n_test], order[episodes - n_test:]
