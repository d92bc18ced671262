"""The static fixed-grammar variant (carc_reference.md §5.4), checked with the oracle."""

from __future__ import annotations

import itertools

import numpy as np
from test_carc_oracle import components, compose, normalised, render

from cogen.carc.grammar import KINDS, ROLES
from cogen.carc.static import FREE_COLORS, SHAPES, static_rows
from cogen.families.carc.build import static_episodes
from cogen.specs import load_spec


def test_static_episodes_follow_their_fixed_grammars():
    setting = load_spec("carc")
    episodes = static_episodes(setting)
    layout = episodes.layout
    assert episodes.grids.shape == (8, 3 * 4 + 3 * 4 + 14, 2, 10, 10)
    kinds = [k for k in range(6) for _ in range(layout.primitives if k < 3 else layout.compositions)] + [6] * 14
    shapes = [frozenset(s) for s in SHAPES]
    for i, (a, b, c) in enumerate(itertools.product(range(2), repeat=3)):
        steps = [(v.name, dict(v.kwargs)) for v in episodes.variants[i]]
        color = (2, 6)[b]
        indicator = (frozenset({((8, 4), (0, 7))[c]}), (1, 3)[c])
        level2_inputs = set()
        for example, kind in enumerate(kinds):
            marks = [role in KINDS[kind].split("+") for role in ROLES]
            grid_in, grid_out = episodes.grids[i, example]
            objects = components(grid_in)
            if marks[2]:
                objects.remove(indicator)
            (main,) = objects
            assert (normalised(main[0]) == shapes[a]) == marks[0]
            assert normalised(main[0]) in shapes if marks[0] else normalised(main[0]) not in shapes
            assert main[1] == color if marks[1] else main[1] in FREE_COLORS
            result = compose(main, [s for s, m in zip(steps, marks, strict=True) if m])
            assert np.array_equal(grid_out, render(([indicator] if marks[2] else []) + [result]))
            if kind == 6:
                level2_inputs.add(grid_in.tobytes())
        assert len(level2_inputs) == 14


def test_static_split_has_the_reference_default_sizes():
    setting = load_spec("carc")
    rows = static_rows(static_episodes(setting), setting.static.seed)
    assert {split: len(r) for split, r in rows.items()} == {"train": 290, "validation": 14, "test": 14}
    (held,) = set(rows["test"].episode.tolist())
    assert np.array_equal(rows["validation"].queries, rows["test"].queries)
    train_level2 = rows["train"].episode[rows["train"].query_kinds[:, 0] == 6]
    assert held not in set(train_level2.tolist())  # the held-out episode's queries never reach training
    assert (rows["train"].episode == held).sum() == 24  # its 24 study examples do
