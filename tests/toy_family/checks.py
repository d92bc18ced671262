"""The toy's ``cogen verify`` checks: every output is its input mirrored; shards regenerate byte for byte."""

import numpy as np

from cogen.pipeline.verify import Check, Determinism
from toy_family.build import regenerate_table


def checks(data):
    return ToyChecks(data)


class ToyChecks:
    def __init__(self, data):
        self.data, self.wrong, self.rows = data, [], 0
        self.determinism = Determinism(data, regenerate_table)

    def add(self, split, file, start, table):
        self.rows += table.num_rows
        self.wrong += [row["id"] for row in table.to_pylist()
                       if not np.array_equal(np.fliplr(np.array(row["input"])), np.array(row["output"]))]
        self.determinism.add(split, file, start, table)

    def finish(self):
        detail = f"{self.wrong[0]} is not its input mirrored" if self.wrong else f"{self.rows} rows mirrored"
        return [Check(self.data.config, "mirrored outputs", not self.wrong, detail), self.determinism.check()]
