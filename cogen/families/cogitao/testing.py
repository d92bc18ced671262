"""What cogen's shared tests need of COGITAO (:mod:`cogen.kit.testing`): a tiny build, and the damage each of its
checks exists to catch."""

from __future__ import annotations

from cogen.kit.testing import TinyBuild, edit_shard, row_of, shard_of

__all__ = ["TAMPERS", "TINY", "TINY_SPEC"]

#: One experiment, every split, a few rows each.
TINY_SPEC = """\
setting: V
seed: 5
defaults:
  grid: {height: [6, 8], width: [6, 8]}
  objects: {count: [1, 2], where: {is_shape_fully_connected: true, rows: [1, 3], cols: [1, 3]}}
  sizes: {train: 60, validation: 12, test: 12, validation_ood: 12, test_ood: 12}
experiments:
  V-1:
    in_domain: {sequences: [[translate_up], [rot90], [mirror_horizontal, rot90]]}
    out_of_domain: {sequences: [[rot90, mirror_horizontal]]}
"""
TINY = TinyBuild(TINY_SPEC, "V-1", "test_ood")


def _held_out(folder) -> None:  # an out-of-domain sequence appears in domain (with the output it makes)
    from cogen.bank import load_bank
    from cogen.engine import apply_sequence

    bank, sequence = load_bank(), ["rot90", "mirror_horizontal"]

    def change(columns):
        for row, grid in enumerate(columns["input"]):
            objects = [(r, c, bank.object(i)) for i, (r, c) in
                       zip(columns["object_ids"][row], columns["object_positions"][row], strict=True)]
            result = apply_sequence(sequence, objects, len(grid), len(grid[0]))
            if result.ok:
                columns["transformations"][row], columns["output"][row] = sequence, result.grid.tolist()
                return
        raise AssertionError("no validation row can take the out-of-domain sequence")
    edit_shard(shard_of(folder, "V-1", "validation"), change)


def _unique(folder) -> None:  # a test sample reappears in validation
    edit_shard(shard_of(folder, "V-1", "validation"), row_of(shard_of(folder, "V-1", "test")))


def _rederive(folder) -> None:  # one output pixel differs from what the engine makes of the input
    def change(columns):
        grid = columns["output"][0]
        grid[0][0] = (grid[0][0] + 1) % 10
    edit_shard(shard_of(folder, "V-1", "train"), change)


TAMPERS = {("V-1", "held-out sequences"): _held_out, ("V-1", "unique (input, sequence)"): _unique,
           ("V-1", "re-derived outputs"): _rederive}
