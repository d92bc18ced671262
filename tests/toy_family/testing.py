"""What the shared tests need of the toy: its tiny build, and the damage each of its checks exists to catch."""

from cogen.kit.testing import TinyBuild, copy_row, edit_shard, set_value, shard_of

TINY = TinyBuild("setting: tm\nfamily: toy\nseed: 5\nside: 2\nood_side: 3\nrows: 6\n", "tm-mirror", "test")


def _unmirrored(folder):  # one output cell differs from the mirrored input
    edit_shard(shard_of(folder, "tm-mirror", "test"), set_value("output", 0, [[9, 9], [9, 9]]))


def _leaked(folder):  # an out-of-domain size (3 x 3, mirrored) in the in-domain test split
    def change(columns):
        columns["input"][0] = columns["output"][0] = [[2, 2, 2]] * 3
    edit_shard(shard_of(folder, "tm-mirror", "test"), change)


def _repeated(folder):  # a second row with the grid of the first
    edit_shard(shard_of(folder, "tm-mirror", "test"), copy_row(["input", "output"], 0, 1))


TAMPERS = {("tm-mirror", "mirrored outputs"): _unmirrored, ("tm-mirror", "held-out sides"): _leaked,
           ("tm-mirror", "unique inputs"): _repeated}
