"""The toy builder: row ``i`` of a split is a pure function of (the split's stream, i, retry); inputs unique."""

import hashlib
from dataclasses import dataclass

import numpy as np

from cogen.kit.build import FamilyBuilder, add_stats, row_groups, stream_seed
from toy_family.spec import SPLITS, setting_from_dict


@dataclass(frozen=True)
class Source:
    """What a split's grids are drawn from: their side and the split's random stream."""

    side: int
    stream: int


def grids(source: Source, indices, retries) -> np.ndarray:
    """The ``(n, side, side)`` input grids of rows ``indices`` at ``retries``: 0s and 1s."""
    shape = (source.side, source.side)
    return np.array([np.random.default_rng([source.stream, i, r]).integers(0, 2, shape, np.int8)
                     for i, r in zip(np.asarray(indices).tolist(), np.asarray(retries).tolist(), strict=True)],
                    np.int8).reshape(-1, *shape)


def shard_tables(task, stats):
    import pyarrow as pa

    for start, rows in row_groups(task):
        inputs = grids(rows.source, rows.indices, rows.retries)
        add_stats(stats, accepted=len(rows), regenerated=rows.regenerated)
        yield pa.table({"id": task.ids(start, len(rows)), "input": [g.tolist() for g in inputs],
                        "output": [np.fliplr(g).tolist() for g in inputs]})


class ToyBuilder(FamilyBuilder):
    family = "toy"
    COLUMNS = (("id", "string"), ("input", "list<list<int8>>"), ("output", "list<list<int8>>"))
    setting_from_dict = staticmethod(setting_from_dict)

    def source(self, config, split) -> Source:
        side = self.setting.ood_side if split == "test_ood" else self.setting.side
        return Source(side, stream_seed(self.setting.seed, config.name, SPLITS.index(split)))

    def keys(self, source, indices, retries) -> np.ndarray:
        """A 128-bit key per input grid (of its shape and cells): no grid twice in a config."""
        found = grids(source, indices, retries)
        digests = b"".join(hashlib.blake2b(bytes(g.shape) + g.tobytes(), digest_size=16).digest() for g in found)
        return np.frombuffer(digests, np.uint64).reshape(-1, 2)
