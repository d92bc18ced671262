"""The Compositional-ARC family of ``cogen build``: plan the configs of a spec, write their shards.

Building a spec takes two passes over the pure episode function:

1. *keys*: every pool episode is generated at retry 0 for its exact grammar key, in parallel
   shards; the driver then plans regenerations so no grammar repeats anywhere in the pool
   (:func:`cogen.pipeline.dedup.plan_retries`, canonical pool order). When the workers share the
   driver's disk, the key pass also saves the episodes it generated in the build's episode cache
   (:mod:`cogen.families.carc.episode_cache`);
2. every config's rows (the pool itself, or a systematicity split of it) are written to Parquet
   by pool index: each episode is read back from the cache, or generated again where the cache
   has none (a regenerated episode, a remote build, a missing file). Either way the bytes are the same.

A split needs only each episode's triplet and variants, which the kernels compute from the
episode's head without generating it, so any shard can be regenerated from its manifest.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from cogen.carc.episodes import EpisodeBatch, EpisodeSampler, stream_seed, triplet_codes
from cogen.carc.split import held_out_triplets, split_rows
from cogen.carc.table import COLUMNS, EPISODE_COLUMNS, RowData, rows_table
from cogen.families.carc.episode_cache import CachedEpisodes, cache_folder, chunks, save_chunk
from cogen.families.carc.spec import CarcConfig, CarcSetting, setting_from_dict
from cogen.kit.build import (
    ConfigPlan,
    FamilyBuilder,
    ShardTask,
    add_stats,
    plan_retries,
    retry_numbers,
    shard_ranges,
    stage,
    task_table,
)

__all__ = ["GENERATOR_VERSION", "CarcBuilder", "PoolJob", "StaticJob", "batch_rows", "pool_keys", "pool_rows",
           "regenerate_table", "shard_tables"]

#: Bump when the generator changes what a (spec, index, retry) produces. 2: the reference query
#: mode is the default (``queries: distinct`` gives version 1's rows) and rows say what
#: ``rotation_type`` 8 does (column ``rotation_type_8``).
GENERATOR_VERSION = 2
#: Rows per row group of a carc shard: a row holds a dozen or more 10x10 grids (5-15 KB in
#: Arrow), so :data:`~cogen.pipeline.parquet.ROW_GROUP_ROWS` rows would hold 100+ MB at once.
EPISODE_GROUP_ROWS = 2_000
#: Episodes the pilot generates before any worker starts (compiles the kernels, fails fast).
PILOT_EPISODES = 8


@dataclass(frozen=True)
class PoolJob:
    """Payload of a shard of pool episodes: the rows' pool indices, their retries and the row layout.

    ``cache``: the build's episode cache folder (:mod:`cogen.families.carc.episode_cache`), or None to
    generate every episode again.
    """

    sampler: EpisodeSampler
    kind: str
    episodes: np.ndarray = field(compare=False)
    retries: np.ndarray = field(compare=False)
    cache: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class StaticJob:
    """Payload of a shard of the static variant (its 8 episodes are regenerated whole: they are tiny)."""

    setting: CarcSetting
    split: str


@dataclass(frozen=True)
class KeyTask:
    """Pool episodes ``[start, stop)`` whose grammar keys the first pass computes (and saves in ``cache``, if any)."""

    sampler: EpisodeSampler
    start: int
    stop: int
    cache: str | None = None


def pool_keys(task: KeyTask) -> np.ndarray:
    """Grammar keys of a range of pool episodes at retry 0 (first build pass; a worker entry point).

    With a cache folder, the episodes are saved there too, one file per cache chunk.
    """
    parts = []
    for start, stop in chunks(task.start, task.stop):
        with stage("key pass"):
            batch = task.sampler.generate(np.arange(start, stop)).require_ok()
        if task.cache is not None:
            with stage("file i/o"):
                save_chunk(task.cache, batch)
        parts.append(batch.keys)
    return np.concatenate(parts) if parts else np.zeros((0, 2), np.uint64)


def pool_rows(setting: CarcSetting, sampler: EpisodeSampler, retries: np.ndarray,
              config: CarcConfig) -> dict[str, np.ndarray]:
    """Pool indices of every split of ``config``, from the episodes' heads alone."""
    if config.kind == "episodes":
        return {"train": np.arange(setting.episodes)}
    heads = sampler.heads(np.arange(setting.episodes), retries)
    return split_rows(triplet_codes(heads[:, :3]), heads[:, 3:], config.split_seed, setting.split.held_out,
                      setting.split.min_label_count, len(sampler.variants))


def batch_rows(batch: EpisodeBatch, kind: str) -> RowData:
    """The rows of a config of ``kind`` made from generated episodes (one row per episode)."""
    from cogen.carc._kernels import LEVEL2, META_COLOR, META_NCOLOR

    n, layout = len(batch), batch.sampler.layout
    study = batch.shots if kind == "3shot" else batch.study
    study_kinds = np.full((n, layout.shots), LEVEL2) if kind == "3shot" else \
        np.tile(np.repeat(np.arange(6), [layout.primitives] * 3 + [layout.compositions] * 3), (n, 1))
    kwargs = np.array([v.kwargs_json for v in batch.sampler.variants], object)[batch.variant_numbers]
    return RowData(episode=batch.indices, study=study, study_kinds=study_kinds, queries=batch.queries,
                   query_kinds=np.full((n, layout.queries), LEVEL2), types=batch.types, kwargs=kwargs,
                   shape_words=batch.shapes[:, 0:2], color=batch.meta[:, META_COLOR],
                   neighbor_words=batch.shapes[:, 2:4], neighbor_color=batch.meta[:, META_NCOLOR],
                   rotation=batch.sampler.rotation, shots=batch.shots if kind == "episodes" else None)


def _add_stats(stats: dict[str, int], causes: np.ndarray, regenerated: int) -> None:
    from cogen.carc._kernels import CAUSES

    add_stats(stats, **dict(zip(CAUSES, causes.sum(axis=0).tolist(), strict=True)), regenerated=regenerated)


def shard_tables(task: ShardTask, stats: dict[str, int]) -> Iterator:
    """Arrow tables (one per row group) of a Compositional-ARC shard; fills ``stats`` with grammar
    attempts by outcome and the number of regenerated episodes."""
    job = task.payload
    if isinstance(job, StaticJob):
        episodes = static_episodes(job.setting)
        rows = _static_rows(job.setting, episodes)[job.split]
        _add_stats(stats, episodes.causes, 0)
        yield rows_table(rows, task.ids(0, len(rows)))
        return
    source = job.sampler if job.cache is None else CachedEpisodes(job.sampler, job.cache)
    for offset in range(0, len(job.episodes), EPISODE_GROUP_ROWS):
        episodes = job.episodes[offset: offset + EPISODE_GROUP_ROWS]
        retries = job.retries[offset: offset + EPISODE_GROUP_ROWS]
        with stage("sampling"):
            batch = source.generate(episodes, retries).require_ok()
        _add_stats(stats, batch.causes, int(np.count_nonzero(retries)))
        first = task.start + offset
        table = rows_table(batch_rows(batch, job.kind), task.ids(first, len(batch)))
        del batch  # a gathered copy of the episodes: not held while the writer encodes the row group
        yield table


def static_episodes(setting: CarcSetting):
    """The static variant's 8 episodes for ``setting``."""
    from cogen.carc.static import generate_static

    return generate_static(setting.static, stream_seed(setting.static.seed, f"{setting.name}-static"),
                           setting.rotation, setting.degenerate == "keep", tuple(setting.shape_size), setting.queries)


def _static_rows(setting: CarcSetting, episodes) -> dict[str, RowData]:
    from cogen.carc.static import static_rows

    return static_rows(episodes, setting.static.seed)


class CarcBuilder(FamilyBuilder):
    """Plans the configs of a Compositional-ARC spec: the episode pool, its splits, the static variant."""

    family = "carc"
    GENERATOR_VERSION = GENERATOR_VERSION
    setting_from_dict = staticmethod(setting_from_dict)

    @cached_property
    def sampler(self) -> EpisodeSampler:
        """The sampler of the spec's episode pool."""
        return EpisodeSampler.from_setting(self.setting)

    def columns(self, config: CarcConfig) -> tuple[tuple[str, str], ...]:
        """The pool's columns (with its shots), or a split's."""
        return EPISODE_COLUMNS if config.kind == "episodes" else COLUMNS

    def rows(self) -> int:
        """Rows the build writes, at most (every config holds at most the pool's episodes)."""
        return self.setting.episodes * len(self.setting.configs)

    def key_rows(self) -> int:
        """Episodes the key pass of :meth:`prepare` visits (for progress bars)."""
        return self.setting.episodes if any(c.kind != "static" for c in self.setting.configs) else 0

    def pilot(self) -> None:
        """Generate a few episodes (compiling the kernels before workers start); fail fast on a bad spec."""
        self.sampler.generate(np.arange(PILOT_EPISODES)).require_ok()
        if any(c.kind == "static" for c in self.setting.configs):
            static_episodes(self.setting)

    def prepare(self, executor, progress=None, scratch=None) -> list[ConfigPlan]:
        """Key pass over the pool (in parallel) and its dedup plan, then every config's shard tasks.

        ``scratch``: a local folder every worker shares, where the key pass caches the pool's
        episodes for the shard writers (:mod:`cogen.families.carc.episode_cache`); None: no cache.
        """
        configs = self.setting.configs
        retries, cache = None, None
        if any(c.kind != "static" for c in configs):
            cache = cache_folder(scratch, self.sampler, GENERATOR_VERSION)
            retries = self.pool_retries(executor, progress, cache)
        return [self._static_plan(c) if c.kind == "static" else self._pool_plan(c, retries, cache) for c in configs]

    def pool_retries(self, executor, progress=None, cache: str | None = None) -> np.ndarray:
        """Retry number of every pool episode that makes every grammar unique (mostly 0); the key
        pass saves the episodes in ``cache`` (a folder), if given."""
        ranges = shard_ranges(self.setting.episodes, self.rows_per_shard)
        tasks = [KeyTask(self.sampler, start, stop, cache) for start, stop in ranges]
        keys = []
        for task, task_keys in zip(tasks, executor.map(pool_keys, tasks), strict=True):
            keys.append(task_keys)
            if progress:
                progress(task.stop - task.start)

        def rekey(part: int, indices: np.ndarray, retries: np.ndarray) -> np.ndarray:
            return self.sampler.generate(indices, retries).require_ok().keys

        return retry_numbers(plan_retries([np.concatenate(keys)], rekey)[0], 0, self.setting.episodes)

    def _pool_plan(self, config: CarcConfig, retries: np.ndarray, cache: str | None = None) -> ConfigPlan:
        rows = pool_rows(self.setting, self.sampler, retries, config)
        fingerprint = self.fingerprint(config)
        tasks = [task for split, episodes in rows.items() for task in self.shard_tasks(
            config, split, len(episodes), fingerprint, lambda start, stop, episodes=episodes: PoolJob(
                self.sampler, config.kind, episodes[start:stop], retries[episodes[start:stop]], cache))]
        regenerated = {split: _pairs(episodes[retries[episodes] != 0], retries) for split, episodes in rows.items()}
        pool_regenerated = [list(pair) for pair in _pairs(np.flatnonzero(retries), retries)]
        info = {**self.info(config), "pool_regenerated": pool_regenerated}
        return ConfigPlan(config.name, fingerprint, self.columns(config), {s: len(e) for s, e in rows.items()}, tasks,
                          info, regenerated)

    def _static_plan(self, config: CarcConfig) -> ConfigPlan:
        rows = _static_rows(self.setting, static_episodes(self.setting))
        fingerprint = self.fingerprint(config)
        tasks = [ShardTask(family=self.family, config=config.name, split=split, index=0, count=1, start=0,
                           stop=len(split_rows_), fingerprint=fingerprint, columns=COLUMNS,
                           payload=StaticJob(self.setting, split)) for split, split_rows_ in rows.items()]
        return ConfigPlan(config.name, fingerprint, COLUMNS, {s: len(r) for s, r in rows.items()}, tasks,
                          self.info(config))

    def config_info(self, config: CarcConfig) -> dict:
        """The config's kind and split seed."""
        return {"kind": config.kind, "split_seed": config.split_seed}

    def info(self, config: CarcConfig) -> dict:
        """What the manifest and the dataset card say about the config (a split's held-out triplets too)."""
        info = super().info(config)
        if config.kind in ("systematicity", "3shot"):
            held, train = held_out_triplets(config.split_seed, self.setting.split.held_out)
            info.update(held_out_triplets=[list(t) for t in held], train_triplets=[list(t) for t in train])
        return info


def _pairs(indices: np.ndarray, retries: np.ndarray) -> list[tuple[int, int]]:
    return list(zip(indices.tolist(), retries[indices].tolist(), strict=True))


def regenerate_table(manifest: dict, split: str, start: int, stop: int):
    """Rows ``[start, stop)`` of ``split`` of a built config, regenerated from its manifest alone."""
    setting = setting_from_dict(manifest["spec"])
    config = CarcConfig(manifest["config"], manifest["kind"], manifest.get("split_seed"))
    if config.kind == "static":  # the static split is written whole: regenerate it, then cut the range
        return task_table(ShardTask.rows_of(manifest, split, start, stop, StaticJob(setting, split))).slice(
            start, stop - start)
    sampler = EpisodeSampler.from_setting(setting)
    retries = retry_numbers(manifest.get("pool_regenerated", []), 0, setting.episodes)
    episodes = pool_rows(setting, sampler, retries, config)[split][start:stop]
    payload = PoolJob(sampler, config.kind, episodes, retries[episodes])
    return task_table(ShardTask.rows_of(manifest, split, start, stop, payload))
