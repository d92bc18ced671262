"""What cogen's shared tests need of the programs family (:mod:`cogen.kit.testing`): a tiny build, and the damage
each of its checks exists to catch."""

from __future__ import annotations

from cogen.kit.testing import TinyBuild, copy_row, edit_shard, shard_of

__all__ = ["TAMPERS", "TINY"]

TINY = TinyBuild("setting: vp\nfamily: programs\nseed: 9\nfunctions: 12\nsettings: [block]\n", "vp-block", "test")


def _law(folder) -> None:  # one output cell of one function flipped
    def change(columns):
        grid = columns["outputs"][0]
        columns["outputs"][0] = [("." if grid[0][0] == "*" else "*") + grid[0][1:]] + grid[1:]
    edit_shard(shard_of(folder, "vp-block", "test"), change)


def _distinct(folder) -> None:  # the second function is the first again
    function = ["inputs", "outputs", "cell_groups", "patterns", "character_rows", "sample_inputs", "sample_outputs"]
    edit_shard(shard_of(folder, "vp-block", "test"), copy_row(function, 0, 1))


TAMPERS = {("vp-block", "function law"): _law, ("vp-block", "distinct functions"): _distinct}
