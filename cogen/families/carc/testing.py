"""What cogen's shared tests need of Compositional-ARC (:mod:`cogen.kit.testing`): a tiny build, and the damage
each of its checks exists to catch."""

from __future__ import annotations

from cogen.kit.testing import TinyBuild, copy_row, edit_shard, row_of, set_value, shard_of

__all__ = ["CONFIGS", "TAMPERS", "TINY", "static_split_rule"]

#: The tiny build's configs: the pool and one config of every other kind (100 episodes: scale 0.001).
CONFIGS = ("carc-episodes", "carc-systematicity-1860", "carc-3shot-1860", "carc-3shot-1870", "carc-static")
TINY = TinyBuild("carc", "carc-systematicity-1860", "test", {"scale": 0.001, "only": list(CONFIGS)})
_BROKEN = TINY.config


def _layout(folder) -> None:  # a cell outside the palette
    def change(columns):
        columns["query_inputs"][0][0][0][0] = 11
    edit_shard(shard_of(folder, _BROKEN, "validation"), change)


def _held_out(folder) -> None:  # a training triplet among the held-out episodes
    from cogen.carc.split import held_out_triplets

    _, train = held_out_triplets(1860)
    edit_shard(shard_of(folder, _BROKEN, "validation"), set_value("triplet", 0, "+".join(train[0])))


def _unique(folder) -> None:  # a second episode with the grammar (and examples) of the first
    names = ["study_inputs", "study_outputs", "study_roles", "query_inputs", "query_outputs", "query_roles", "triplet",
             "transformations", "transformation_kwargs", "shape_indicator", "color_indicator", "neighbor_indicator",
             "neighbor_color"]
    edit_shard(shard_of(folder, _BROKEN, "validation"), copy_row(names, 0, 1))


def _split_rule(folder) -> None:  # an episode the split rule does not put there
    edit_shard(shard_of(folder, _BROKEN, "validation"), set_value("episode", 0, 10**6))


def static_split_rule(folder) -> None:
    """A held-out query of the static variant leaks into train."""
    edit_shard(shard_of(folder, "carc-static", "train"), row_of(shard_of(folder, "carc-static", "test")))


def _rotation(folder) -> None:  # a row says rotation_type 8 turns the other way than its spec
    from cogen.carc.grammar import ROTATION_TYPE_8

    def change(columns):
        columns["rotation_type_8"][0] = next(v for v in ROTATION_TYPE_8.values() if v != columns["rotation_type_8"][0])
    edit_shard(shard_of(folder, _BROKEN, "train"), change)


def _rederive(folder) -> None:  # one query output cell differs from what the row's grammar makes of its input
    def change(columns):
        grid = columns["query_outputs"][0][0]
        grid[0][0] = (grid[0][0] + 1) % 10
    edit_shard(shard_of(folder, _BROKEN, "train"), change)


TAMPERS = {(_BROKEN, "episode layout"): _layout, (_BROKEN, "held-out triplets"): _held_out,
           (_BROKEN, "unique grammars"): _unique, (_BROKEN, "split rule"): _split_rule,
           ("carc-static", "split rule"): static_split_rule, (_BROKEN, "rotation convention"): _rotation,
           (_BROKEN, "re-derived outputs"): _rederive}
