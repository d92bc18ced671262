"""The systematicity-aware split: Table 7's held-out triplets, the split rule, the static variant."""

from __future__ import annotations

import numpy as np
import pytest

from cogen.carc.grammar import TRANSFORMATIONS, triplet_name
from cogen.carc.split import all_triplets, held_out_triplets, split_rows, static_split, triplet_code

PAPER_NAMES = {"translation": "translation", "mirror": "reflection", "rotation": "rotation", "set_color": "coloring",
               "grow": "extension"}
#: Compositional-ARC paper, Table 7 (carc_reference.md §5.2): held-out triplets, then the training
#: triplets in the order the table lists them.
TABLE_7 = {
    1860: (["translation+rotation+extension", "translation+reflection+extension"],
           ["translation+reflection+coloring", "reflection+rotation+extension", "translation+reflection+rotation",
            "translation+rotation+coloring", "reflection+coloring+extension", "reflection+rotation+coloring",
            "translation+coloring+extension", "rotation+coloring+extension"]),
    1870: (["rotation+coloring+extension", "reflection+rotation+coloring"],
           ["translation+rotation+extension", "translation+reflection+rotation", "reflection+rotation+extension",
            "reflection+coloring+extension", "translation+reflection+extension", "translation+rotation+coloring",
            "translation+reflection+coloring", "translation+coloring+extension"]),
    1880: (["reflection+rotation+coloring", "reflection+coloring+extension"],
           ["translation+coloring+extension", "translation+rotation+extension", "translation+rotation+coloring",
            "reflection+rotation+extension", "translation+reflection+coloring", "translation+reflection+extension",
            "translation+reflection+rotation", "rotation+coloring+extension"]),
    1890: (["translation+rotation+coloring", "translation+rotation+extension"],
           ["translation+coloring+extension", "translation+reflection+rotation", "rotation+coloring+extension",
            "translation+reflection+coloring", "reflection+rotation+extension", "translation+reflection+extension",
            "reflection+coloring+extension", "reflection+rotation+coloring"]),
}


def paper_name(triplet) -> str:
    return "+".join(PAPER_NAMES[name] for name in triplet)


@pytest.mark.parametrize("seed", sorted(TABLE_7))
def test_the_four_seeds_reproduce_table_7(seed):
    held, train = held_out_triplets(seed)
    assert [paper_name(t) for t in held] == TABLE_7[seed][0]
    assert [paper_name(t) for t in train] == TABLE_7[seed][1]


def test_triplets_are_the_ten_combinations_in_the_reference_order():
    triplets = all_triplets()
    assert len(triplets) == 10 and triplets[0] == ("translation", "mirror", "rotation")
    assert triplets[-1] == ("rotation", "set_color", "grow")
    assert TRANSFORMATIONS == ("translation", "mirror", "rotation", "set_color", "grow")


def test_the_split_holds_out_whole_triplets_and_halves_the_evaluation_pool():
    rng = np.random.default_rng(0)
    triplets = all_triplets()
    codes = np.array([triplet_code(triplets[i]) for i in rng.integers(0, 10, 1001)])
    variants = rng.integers(0, 10, (1001, 3))
    rows = split_rows(codes, variants, 1860)
    held = {triplet_code(t) for t in held_out_triplets(1860)[0]}
    assert set(codes[rows["train"]]).isdisjoint(held)
    pool = np.concatenate([rows["validation"], rows["test"]])
    assert set(codes[pool]) <= held and len(pool) + len(rows["train"]) == 1001
    assert len(rows["test"]) - len(rows["validation"]) in (0, 1)  # an odd pool gives the extra episode to test
    assert np.all(np.diff(rows["train"]) > 0) and np.all(np.diff(pool) > 0)  # pool order, no shuffling


def test_min_label_count_drops_evaluation_episodes_with_rare_labels():
    train, held = triplet_code(("mirror", "rotation", "set_color")), triplet_code(("translation", "rotation", "grow"))
    codes = np.array([train] * 4 + [held] * 2)
    variants = np.array([[0, 1, 2]] * 4 + [[0, 1, 2], [0, 1, 9]])
    rows = split_rows(codes, variants, 1860, min_label_count=4, n_variants=10)
    assert list(rows["train"]) == [0, 1, 2, 3] and list(rows["validation"]) + list(rows["test"]) == [4]


def test_static_split_holds_out_one_of_eight_episodes():
    train, test = static_split(1860)
    assert len(test) == 1 and sorted(train + test) == list(range(8))


def test_triplet_names_are_canonical():
    assert triplet_name(["grow", "translation", "rotation"]) == "translation+rotation+grow"
