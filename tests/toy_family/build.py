"""The toy builder: row ``i`` of a split is a pure function of (seed, split, i); no key pass, no retries."""

import hashlib

import numpy as np

from cogen.pipeline.shards import ConfigPlan, ShardTask, shard_ranges, task_table

COLUMNS = (("id", "string"), ("input", "list<list<int8>>"), ("output", "list<list<int8>>"))


def grid(seed: int, side: int, split: str, index: int) -> np.ndarray:
    return np.random.default_rng([seed, ("train", "test").index(split), index]).integers(0, 10, (side, side), np.int8)


def shard_tables(task: ShardTask, stats: dict):
    import pyarrow as pa

    seed, side = task.payload
    inputs = [grid(seed, side, task.split, i) for i in range(task.start, task.stop)]
    stats["accepted"] = stats.get("accepted", 0) + len(inputs)
    yield pa.table({"id": [f"{task.config}-{task.split}-{i}" for i in range(task.start, task.stop)],
                    "input": [g.tolist() for g in inputs], "output": [np.fliplr(g).tolist() for g in inputs]})


def regenerate_table(manifest: dict, split: str, start: int, stop: int):
    spec = manifest["spec"]
    return task_table(ShardTask.rows_of(manifest, split, start, stop, (spec["seed"], spec["side"])))


class ToyBuilder:
    family = "toy"

    def __init__(self, setting, rows_per_shard: int = 50_000):
        self.setting, self.rows_per_shard = setting, rows_per_shard

    @classmethod
    def settings_from_manifests(cls, manifests):
        from toy_family.spec import ToySetting

        return list({ToySetting(m["setting"], m["spec"]["seed"], m["spec"]["side"], m["spec"]["rows"]): None
                     for m in manifests})

    def config_names(self):
        return [c.name for c in self.setting.configs]

    def info(self, config):
        spec = {"seed": self.setting.seed, "side": self.setting.side, "rows": self.setting.rows}
        return {"family": self.family, "setting": self.setting.name, "seed": self.setting.seed,
                "description": "grids mirrored left to right", "generator_version": 1, "spec": spec}

    def rows(self):
        return sum(rows for config in self.setting.configs for _, rows in config.sizes)

    def fingerprints(self):
        spec = f"{self.setting.seed}|{self.setting.side}|{self.setting.rows}"
        return {c.name: hashlib.sha256(f"{c.name}|{spec}".encode()).hexdigest() for c in self.setting.configs}

    def key_rows(self):
        return 0

    def pilot(self):
        grid(self.setting.seed, self.setting.side, "train", 0)

    def prepare(self, executor, progress=None, scratch=None):
        return [self._plan(config, self.fingerprints()[config.name]) for config in self.setting.configs]

    def _plan(self, config, fingerprint: str) -> ConfigPlan:
        tasks = [ShardTask(family=self.family, config=config.name, split=split, index=k, count=len(ranges),
                           start=start, stop=stop, fingerprint=fingerprint, columns=COLUMNS,
                           payload=(self.setting.seed, self.setting.side))
                 for split, rows in config.sizes for ranges in [shard_ranges(rows, self.rows_per_shard)]
                 for k, (start, stop) in enumerate(ranges)]
        return ConfigPlan(config.name, fingerprint, COLUMNS, dict(config.sizes), tasks, self.info(config))
