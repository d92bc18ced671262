"""What a family's ``build.py`` needs: :class:`FamilyBuilder`, a base class whose defaults do the usual work, and
the pieces a builder of its own is made of.

A family whose rows are a pure function of ``(split's source, index, retry)`` writes only what is its own::

    class MirrorBuilder(FamilyBuilder):
        family = "toy"
        COLUMNS = (("id", "string"), ("input", "list<list<int8>>"), ("output", "list<list<int8>>"))
        setting_from_dict = staticmethod(setting_from_dict)      # the inverse of ``setting.to_dict()``

        def source(self, config, split):                        # what a shard of ``split`` samples from
            return Source(self.setting.side, stream_seed(self.setting.seed, config.name, split))

        def keys(self, source, indices, retries):                # optional: every row unique across the splits
            return input_keys(sample(source, indices, retries))

    def shard_tables(task, stats):                               # the ``shard_writer`` role, run in the workers
        for start, rows in row_groups(task):
            add_stats(stats, accepted=len(rows), regenerated=rows.regenerated)
            yield rows_table(sample(rows.source, rows.indices, rows.retries), task.ids(start, len(rows)))

and gets the rest of the :class:`cogen.family.Builder` protocol: one config per ``setting.configs``, split sizes
from ``config.sizes``, fingerprints of ``setting.to_dict()``, the manifest's ``info``, a pilot that writes a few
rows of every split, the dedup plan (:func:`plan_retries`: the first row with a key keeps it, a later one is
regenerated with the next retry number, in canonical order, and the regenerations go into the manifest),
:class:`ShardTask` s whose payload is a :class:`RowsJob`, the settings ``cogen verify --regenerate`` rebuilds,
and :meth:`FamilyBuilder.regenerate_table`, which the determinism check
(:class:`cogen.kit.checks.Determinism`) regenerates shards with from a manifest alone.

A family with another plan (a parallel key pass, rows shared between configs) overrides :meth:`~FamilyBuilder.
prepare` and uses :meth:`~FamilyBuilder.shard_tasks` and the functions below.

``stats`` (filled by the shard writer, summed into the manifest and the card's generation statistics): ``accepted``
counts the rows written; every other name counts what the family wants reported (one per rejection cause,
``regenerated`` for rows dedup regenerated; ``noops`` and ``size_redraws`` feed the card's no-op table, see
:mod:`cogen.folder.stats`). A builder that counts no rejection reports 100 % accepted.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

import numpy as np

from cogen.errors import BuildError, GenerationError
from cogen.folder.atomic import atomic_write
from cogen.pipeline.dedup import duplicates, plan_retries
from cogen.pipeline.memory_scratch import keep_in_memory, kept_in_memory
from cogen.pipeline.parquet import ROW_GROUP_ROWS
from cogen.pipeline.shards import ConfigPlan, ShardTask, encode_shard, shard_ranges, task_table
from cogen.pipeline.stages import stage
from cogen.rng import retry_numbers, stream_seed

__all__ = ["ROW_GROUP_ROWS", "BuildError", "ConfigPlan", "FamilyBuilder", "GenerationError", "RowsJob", "ShardTask",
           "add_stats", "atomic_write", "duplicates", "encode_shard", "keep_in_memory", "kept_in_memory", "plan_retries",
           "retry_numbers", "row_groups", "settings_by_spec",
           "shard_ranges", "stage", "stream_seed", "task_table"]


@dataclass(frozen=True)
class RowsJob:
    """The payload of a :class:`FamilyBuilder` shard: rows ``indices`` of a split at ``retries``, and the split's
    ``source`` (what :meth:`FamilyBuilder.source` returned: the family's description of what they are drawn from)."""

    source: Any
    indices: np.ndarray = field(compare=False)
    retries: np.ndarray = field(compare=False)

    def __len__(self) -> int:
        return len(self.indices)

    @property
    def regenerated(self) -> int:
        """Rows that dedup regenerated (retry above 0)."""
        return int(np.count_nonzero(self.retries))

    def part(self, offset: int, count: int) -> RowsJob:
        """Rows ``offset`` to ``offset + count - 1`` of this job."""
        return RowsJob(self.source, self.indices[offset: offset + count], self.retries[offset: offset + count])


def row_groups(task: ShardTask, rows: int = ROW_GROUP_ROWS) -> Iterator[tuple[int, RowsJob]]:
    """``(start, job)`` per row group of a :class:`FamilyBuilder` shard: ``start`` is the split-level index of the
    group's first row (for ``task.ids(start, len(job))``), ``job`` its part of the task's :class:`RowsJob`."""
    job: RowsJob = task.payload
    for offset in range(0, len(job), rows):
        yield task.start + offset, job.part(offset, rows)


def add_stats(stats: dict[str, int], **counts: int) -> None:
    """Add ``counts`` (``accepted=``, one per rejection cause, ``regenerated=``, ...) to a shard's ``stats``."""
    for name, count in counts.items():
        stats[name] = stats.get(name, 0) + int(count)


def settings_by_spec(manifests: list[dict], from_dict: Callable[[dict], Any]) -> list:
    """One setting per distinct ``spec`` of ``manifests`` (``from_dict(spec)``), restricted to their configs."""
    from cogen.pipeline.regenerate import settings_by_spec as by_spec

    return by_spec(manifests, from_dict)


class FamilyBuilder:
    """A family's :class:`cogen.family.Builder` with defaults (see the module docstring).

    A subclass sets :attr:`family` (the record's name), :attr:`COLUMNS` (or overrides :meth:`columns`) and
    :attr:`GENERATOR_VERSION`, gives :meth:`setting_from_dict` and :meth:`source`, and :meth:`keys` if its rows
    must be unique. The setting follows :class:`cogen.family.Setting` and has ``to_dict()`` (what decides the
    data, as JSON values, stored in each manifest as ``spec``); each config has a ``name`` and ``sizes``
    (``(split, rows)`` pairs), unless :meth:`split_sizes` says otherwise.
    """

    family: ClassVar[str] = ""
    #: Bump when the sampler changes what a (source, index, retry) produces: it changes every fingerprint.
    GENERATOR_VERSION: ClassVar[int] = 1
    COLUMNS: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: Rows per split the default :meth:`pilot` writes.
    PILOT_ROWS: ClassVar[int] = 4

    def __init__(self, setting: Any, rows_per_shard: int = 50_000):
        self.setting, self.rows_per_shard = setting, rows_per_shard

    # ---------------------------------------------------------------- what a family writes
    @staticmethod
    def setting_from_dict(spec: dict) -> Any:
        """The setting whose ``to_dict()`` is ``spec`` (a manifest's ``spec``)."""
        raise NotImplementedError

    def source(self, config: Any, split: str) -> Any:
        """What the rows of ``split`` of ``config`` are drawn from (picklable: it travels in every task)."""
        raise NotImplementedError

    def keys(self, source: Any, indices: np.ndarray, retries: np.ndarray) -> np.ndarray | None:
        """The ``(len(indices), 2)`` uint64 content keys of rows ``indices`` at ``retries`` of ``source``, which
        dedup makes unique across every split of a config; None (the default): no dedup."""
        return None

    # ---------------------------------------------------------------- defaults
    @classmethod
    def settings_from_manifests(cls, manifests: list[dict]) -> list:
        """The settings the built configs of ``manifests`` came from (one per spec, restricted to those
        configs), for ``cogen verify --regenerate``."""
        return settings_by_spec(manifests, cls.setting_from_dict)

    def config_names(self) -> list[str]:
        """Names of the configs this build writes."""
        return [c.name for c in self.setting.configs]

    def split_sizes(self, config: Any) -> dict[str, int]:
        """Rows of every split of ``config``, in split order."""
        return dict(config.sizes)

    def columns(self, config: Any) -> tuple[tuple[str, str], ...]:
        """The columns of ``config``'s rows (name, type of :mod:`cogen.folder.features`)."""
        return self.COLUMNS

    def rows(self) -> int:
        """Rows the build writes (for the memory estimate)."""
        return sum(sum(self.split_sizes(c).values()) for c in self.setting.configs)

    def key_rows(self) -> int:
        """Rows a parallel key pass visits (for progress bars): none, :meth:`prepare` keys rows itself."""
        return 0

    def fingerprints(self) -> dict[str, str]:
        """Config name -> :meth:`fingerprint`, in spec order."""
        return {c.name: self.fingerprint(c) for c in self.setting.configs}

    def fingerprint(self, config: Any) -> str:
        """Identity of everything that decides ``config``'s bytes: the family, ``setting.to_dict()``, the config
        and :attr:`GENERATOR_VERSION`."""
        described = {"family": self.setting.family, "spec": self.setting.to_dict(), "config": asdict(config)}
        spec = hashlib.sha256(json.dumps(described, sort_keys=True, default=list).encode()).hexdigest()
        return hashlib.sha256(f"{spec}|{self.GENERATOR_VERSION}".encode()).hexdigest()

    def info(self, config: Any) -> dict:
        """What the manifest and the dataset card say about ``config``: family, setting, its version (if the
        setting has one), seed, description, generator version, :meth:`config_info`, and the spec."""
        version = getattr(self.setting, "version", None)
        return {"family": self.family, "setting": self.setting.name, **({} if version is None else {"version": version}),
                "seed": self.setting.seed, "description": getattr(self.setting, "description", ""),
                "generator_version": self.GENERATOR_VERSION, **self.config_info(config), "spec": self.setting.to_dict()}

    def config_info(self, config: Any) -> dict:
        """What the manifest says of ``config`` besides the setting's (such as its kind); empty by default."""
        return {}

    def pilot(self) -> None:
        """Write a few rows of every split in memory (fails fast on a spec that cannot be sampled)."""
        for config in self.setting.configs:
            for split, count in self.split_sizes(config).items():
                rows = min(self.PILOT_ROWS, count)
                job = RowsJob(self.source(config, split), np.arange(rows), np.zeros(rows, np.int64))
                task_table(self._task(config, split, 0, 1, 0, rows, "pilot", job))

    def prepare(self, executor: Any, progress: Callable[[int], None] | None = None, scratch: Any = None) -> list:
        """Every config's :meth:`plan` (no parallel first pass: ``executor`` and ``scratch`` are not needed)."""
        return [self.plan(config) for config in self.setting.configs]

    def plan(self, config: Any) -> ConfigPlan:
        """``config`` ready to write: its rows made unique (:meth:`retries`), its shard tasks, its manifest info."""
        sizes = self.split_sizes(config)
        retries = self.retries(config)
        fingerprint = self.fingerprint(config)
        tasks = [task for split, count in sizes.items()
                 for task in self.shard_tasks(config, split, count, fingerprint, self._jobs(config, split, retries[split]))]
        regenerated = {split: [(int(i), int(r[i])) for i in np.flatnonzero(r)] for split, r in retries.items()}
        return ConfigPlan(config.name, fingerprint, self.columns(config), sizes, tasks, self.info(config), regenerated)

    def retries(self, config: Any) -> dict[str, np.ndarray]:
        """Each split's retry number per row (mostly 0) that makes every :meth:`keys` of ``config`` unique."""
        sizes = self.split_sizes(config)
        splits, sources = list(sizes), [self.source(config, split) for split in sizes]
        first = [self.keys(source, np.arange(sizes[s]), np.zeros(sizes[s], np.int64)) for s, source in zip(splits, sources, strict=True)]
        if any(keys is None for keys in first):
            return {split: np.zeros(count, np.int64) for split, count in sizes.items()}

        def rekey(part: int, indices: np.ndarray, retries: np.ndarray) -> np.ndarray:
            return self.keys(sources[part], indices, retries)

        with stage("dedup plan"):
            plans = plan_retries(first, rekey)
        return {split: retry_numbers(plan, 0, sizes[split]) for split, plan in zip(splits, plans, strict=True)}

    def _jobs(self, config: Any, split: str, retries: np.ndarray) -> Callable[[int, int], RowsJob]:
        source = self.source(config, split)
        return lambda start, stop: RowsJob(source, np.arange(start, stop), retries[start:stop])

    def shard_tasks(self, config: Any, split: str, rows: int, fingerprint: str,
                    payload: Callable[[int, int], Any]) -> list[ShardTask]:
        """The :class:`ShardTask` s of ``rows`` rows of ``split`` (at most ``rows_per_shard`` each);
        ``payload(start, stop)`` is what the shard writer reads of rows ``[start, stop)``."""
        ranges = shard_ranges(rows, self.rows_per_shard)
        return [self._task(config, split, index, len(ranges), start, stop, fingerprint, payload(start, stop))
                for index, (start, stop) in enumerate(ranges)]

    def _task(self, config: Any, split: str, index: int, count: int, start: int, stop: int, fingerprint: str,
              payload: Any) -> ShardTask:
        return ShardTask(family=self.family, config=config.name, split=split, index=index, count=count, start=start,
                         stop=stop, fingerprint=fingerprint, columns=self.columns(config), payload=payload)

    @classmethod
    def regenerate_table(cls, manifest: dict, split: str, start: int, stop: int):
        """Rows ``[start, stop)`` of ``split`` of a built config, regenerated from its manifest alone (the
        ``regenerate`` of :class:`cogen.kit.checks.Determinism`)."""
        name = manifest["config"]
        setting = cls.setting_from_dict(manifest["spec"]).only([name])
        builder = cls(setting)
        config = next(c for c in setting.configs if c.name == name)
        retries = retry_numbers(manifest["splits"][split].get("regenerated", []), start, stop)
        job = RowsJob(builder.source(config, split), np.arange(start, stop), retries)
        return task_table(ShardTask.rows_of(manifest, split, start, stop, job))
