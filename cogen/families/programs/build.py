"""The string-to-grid programs family of ``cogen build``: one config per setting, one row per function.

Function ``i`` of a config is a pure function of (seed, config name, i, retry)
(:func:`cogen.families.programs.functions.sample`). The builder samples every function of a config once,
regenerates the repeats of an earlier function in canonical order (the paper's functions are
"different"; :func:`cogen.pipeline.dedup.plan_retries`), records those regenerations in the
manifest and writes the rows in shards; any shard can be regenerated from the manifest alone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from cogen._rng import retry_numbers
from cogen.families.programs.functions import (
    CELLS,
    CHARACTERS,
    INPUTS,
    SAMPLES,
    SIZE,
    FunctionBatch,
    input_bits,
    sample,
    stream_seed,
)
from cogen.families.programs.spec import SPLIT, ProgramsConfig, ProgramsSetting, setting_from_dict
from cogen.pipeline.dedup import plan_retries
from cogen.pipeline.parquet import ROW_GROUP_ROWS
from cogen.pipeline.shards import ConfigPlan, ShardTask, shard_ranges, task_table

__all__ = ["COLUMNS", "GENERATOR_VERSION", "FunctionsJob", "ProgramsBuilder", "regenerate_table", "rows_table",
           "shard_tables"]

#: Bump when the sampler changes what a (seed, config, index, retry) produces.
GENERATOR_VERSION = 1

#: Columns of every programs config, in order.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "string"),
    ("setting", "string"),
    ("inputs", "list<string>"),
    ("outputs", "list<string>"),
    ("cell_groups", "list<list<int8>>"),
    ("patterns", "list<string>"),
    ("character_rows", "list<int8>"),
    ("sample_inputs", "list<list<list<int8>>>"),
    ("sample_outputs", "list<list<list<int8>>>"),
)


@dataclass(frozen=True)
class FunctionsJob:
    """Payload of a shard: the functions ``indices`` (with their ``retries``) of one setting's stream."""

    kind: str
    stream: int
    indices: np.ndarray = field(compare=False)
    retries: np.ndarray = field(compare=False)


def _nested(values, shape: tuple[int, ...]):
    """A pyarrow list array of ``len(shape) - 1`` nesting levels over flat ``values`` (an array or a
    pyarrow array) of a regular shape."""
    import pyarrow as pa

    array = values if isinstance(values, pa.Array) else pa.array(np.asarray(values).reshape(-1))
    for depth in range(len(shape) - 1, 0, -1):
        count = int(np.prod(shape[:depth]))
        array = pa.ListArray.from_arrays(pa.array(np.arange(count + 1, dtype=np.int32) * shape[depth]), array)
    return array


def _texts(cells: np.ndarray, width: int, row: int | None = None):
    """Rows of 0/1 ``cells`` (``width`` per string) as a pyarrow string array of ``.``/``*``, with a
    newline after every ``row`` characters but the last."""
    import pyarrow as pa

    chars = np.where(cells.reshape(-1, width) > 0, ord("*"), ord(".")).astype(np.uint8)
    if row is not None:
        lines = chars.reshape(len(chars), width // row, row)
        newline = np.full((len(chars), width // row, 1), ord("\n"), np.uint8)
        chars = np.concatenate([lines, newline], axis=2).reshape(len(chars), -1)[:, :-1]
    count, length = chars.shape
    offsets = pa.py_buffer((np.arange(count + 1, dtype=np.int32) * length).tobytes())
    data = pa.py_buffer(np.ascontiguousarray(chars).tobytes())
    return pa.Array.from_buffers(pa.string(), count, [None, offsets, data])


def rows_table(batch: FunctionBatch, ids):
    """The rows of ``batch`` as an Arrow table with :data:`COLUMNS`; ``ids`` is the ``id`` column, an
    Arrow ``string`` array."""
    import pyarrow as pa

    n = len(batch)
    outputs = batch.outputs()
    inputs = pa.array(list(INPUTS) * n, pa.string())
    columns = {
        "id": ids,
        "setting": pa.array([batch.setting] * n, pa.string()),
        "inputs": _nested(inputs, (n, SAMPLES)),
        "outputs": _nested(_texts(outputs, CELLS, SIZE), (n, SAMPLES)),
        "cell_groups": _nested(batch.groups.astype(np.int8), (n, SIZE, SIZE)),
        "patterns": _nested(_texts(batch.patterns, SIZE), (n, CHARACTERS)),
        "character_rows": _nested(batch.rows.astype(np.int8), (n, CHARACTERS)),
        "sample_inputs": _nested(np.tile(input_bits().astype(np.int8), (n, 1)), (n, SAMPLES, 1, CHARACTERS)),
        "sample_outputs": _nested(outputs.astype(np.int8), (n, SAMPLES, SIZE, SIZE)),
    }
    return pa.table(columns)


def shard_tables(task: ShardTask, stats: dict[str, int]) -> Iterator:
    """Arrow tables (one per row group) of a programs shard; ``stats`` counts functions and regenerations."""
    job: FunctionsJob = task.payload
    for offset in range(0, len(job.indices), ROW_GROUP_ROWS):
        indices = job.indices[offset: offset + ROW_GROUP_ROWS]
        retries = job.retries[offset: offset + ROW_GROUP_ROWS]
        stats["accepted"] = stats.get("accepted", 0) + len(indices)
        stats["regenerated"] = stats.get("regenerated", 0) + int(np.count_nonzero(retries))
        yield rows_table(sample(job.kind, job.stream, indices, retries), task.ids(task.start + offset, len(indices)))


def function_retries(kind: str, stream: int, count: int) -> np.ndarray:
    """Retry number of each of ``count`` functions that makes them all distinct (mostly 0)."""
    keys = sample(kind, stream, np.arange(count)).keys()

    def rekey(part: int, indices: np.ndarray, retries: np.ndarray) -> np.ndarray:
        return sample(kind, stream, indices, retries).keys()

    return retry_numbers(plan_retries([keys], rekey)[0], 0, count)


class ProgramsBuilder:
    """Plans the configs of a programs spec: every function of each setting, made distinct."""

    family = "programs"

    def __init__(self, setting: ProgramsSetting, rows_per_shard: int = 50_000):
        self.setting, self.rows_per_shard = setting, rows_per_shard

    @classmethod
    def settings_from_manifests(cls, manifests: list[dict]) -> list:
        """The settings the built configs of ``manifests`` came from (one per spec, restricted to
        those configs), for ``cogen verify --regenerate``."""
        from cogen.pipeline.regenerate import settings_by_spec

        return settings_by_spec(manifests, setting_from_dict)

    def config_names(self) -> list[str]:
        """Names of the configs this build writes."""
        return [c.name for c in self.setting.configs]

    def rows(self) -> int:
        """Rows the build writes (one per function)."""
        return sum(config.functions for config in self.setting.configs)

    def split_sizes(self, name: str) -> dict[str, int]:
        """Rows of each split of config ``name``: its one split holds one row per function."""
        config = next((c for c in self.setting.configs if c.name == name), None)
        return {SPLIT: config.functions} if config is not None else {}

    def key_rows(self) -> int:
        """No parallel key pass: a config's functions are keyed in :meth:`prepare`, in one vector step."""
        return 0

    def fingerprints(self) -> dict[str, str]:
        """Config name -> :meth:`fingerprint`, in spec order."""
        return {c.name: self.fingerprint(c) for c in self.setting.configs}

    def fingerprint(self, config: ProgramsConfig) -> str:
        """Identity of everything that decides the config's bytes."""
        parts = (self.setting.fingerprint(config), str(GENERATOR_VERSION))
        return hashlib.sha256("|".join(parts).encode()).hexdigest()

    def pilot(self) -> None:
        """Sample one function of every setting (fails fast on an unknown setting)."""
        for config in self.setting.configs:
            sample(config.kind, 0, [0]).outputs()

    def prepare(self, executor, progress=None, scratch=None) -> list[ConfigPlan]:
        """Every config's distinct functions and their shard tasks (no parallel first pass, no ``scratch`` needed)."""
        return [self._plan(config) for config in self.setting.configs]

    def _plan(self, config: ProgramsConfig) -> ConfigPlan:
        stream = stream_seed(self.setting.seed, config.name)
        retries = function_retries(config.kind, stream, config.functions)
        fingerprint = self.fingerprint(config)
        ranges = shard_ranges(config.functions, self.rows_per_shard)
        tasks = [ShardTask(family=self.family, config=config.name, split=SPLIT, index=index, count=len(ranges),
                           start=start, stop=stop, fingerprint=fingerprint, columns=COLUMNS,
                           payload=FunctionsJob(config.kind, stream, np.arange(start, stop), retries[start:stop]))
                 for index, (start, stop) in enumerate(ranges)]
        regenerated = [(int(i), int(retries[i])) for i in np.flatnonzero(retries)]
        return ConfigPlan(config.name, fingerprint, COLUMNS, {SPLIT: config.functions}, tasks, self.info(config),
                          {SPLIT: regenerated})

    def info(self, config: ProgramsConfig) -> dict:
        """What the manifest and the dataset card say about the config."""
        return {"family": self.family, "setting": self.setting.name, "version": self.setting.version,
                "seed": self.setting.seed, "description": self.setting.description,
                "generator_version": GENERATOR_VERSION, "kind": config.kind, "spec": self.setting.to_dict()}


def regenerate_table(manifest: dict, split: str, start: int, stop: int):
    """Rows ``[start, stop)`` of ``split`` of a built config, regenerated from its manifest alone."""
    setting = setting_from_dict(manifest["spec"])
    kind = manifest["kind"]
    stream = stream_seed(setting.seed, manifest["config"])
    retries = retry_numbers(manifest["splits"][split].get("regenerated", []), start, stop)
    job = FunctionsJob(kind, stream, np.arange(start, stop), retries)
    return task_table(ShardTask.rows_of(manifest, split, start, stop, job))
