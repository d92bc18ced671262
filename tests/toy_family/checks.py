"""The toy's ``cogen verify`` checks, with code of their own: every output is its input mirrored, out-of-domain
grids have a side no in-domain grid has, no input grid twice; shards regenerate byte for byte."""

import hashlib

import numpy as np

from cogen.kit.checks import FamilyChecks, HeldOut, Rederived, UniqueKeys
from toy_family.build import ToyBuilder


def _not_mirrored(row: dict) -> str | None:
    return None if np.array_equal(np.fliplr(np.array(row["input"])), np.array(row["output"])) else \
        "the output is not the input mirrored"


class ToyChecks(FamilyChecks):
    builder = ToyBuilder

    def __init__(self, data):
        super().__init__(data)
        self.mirrored = Rederived(data, _not_mirrored, "mirrored outputs")
        self.sides = HeldOut("held-out sides", "grid sides")
        self.inputs = UniqueKeys("unique inputs", "input grids")

    def take(self, split, file, start, table):
        self.mirrored.add(split, start, table)
        grids = table.column("input").to_pylist()
        self.sides.add(split, {len(grid) for grid in grids})
        self.inputs.add(split, start, [hashlib.sha256(repr(grid).encode()).digest() for grid in grids])

    def results(self):
        return [self.mirrored.check("every output is its input mirrored"), self.sides.check(self.config),
                self.inputs.check(self.config)]
