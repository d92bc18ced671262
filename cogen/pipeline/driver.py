"""``cogen build``: plan, generate and write every config of a spec into a Hub-ready folder."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import as_completed
from dataclasses import dataclass, field
from pathlib import Path

from cogen.card import write_card
from cogen.errors import BuildError
from cogen.families import Builder, Setting, family
from cogen.folder import config_dir, environment_versions, manifest_path, write_json_atomic
from cogen.pipeline.executors import make_executor
from cogen.pipeline.shards import ConfigPlan, ShardResult, run_shard
from cogen.specs import load_spec

__all__ = ["BuildReport", "ConfigReport", "build", "builder_for"]

#: progress(phase, advance, total): phase is "keys" or "write"; advance=0 announces the total.
Progress = Callable[[str, int, int], None]


@dataclass
class ConfigReport:
    """What one config's build did."""

    config: str
    rows: dict[str, int]
    written: int = 0
    skipped: int = 0
    stats: dict[str, dict[str, int]] = field(default_factory=dict)


@dataclass
class BuildReport:
    """What a build did, config by config, and how long it took."""

    folder: Path
    configs: list[ConfigReport]
    seconds: float


def builder_for(setting: Setting, rows_per_shard: int = 50_000) -> Builder:
    """The :class:`~cogen.families.Builder` of ``setting``'s family."""
    return family(setting.family).make_builder(setting, rows_per_shard)


def build(spec: str | Path, folder: str | Path, *, scale: float = 1.0, seed: int | None = None, workers: int = 1,
          executor: str = "local", dask_address: str | None = None, only: list[str] | None = None,
          rows_per_shard: int = 50_000, progress: Progress | None = None) -> BuildReport:
    """Build the configs of ``spec`` (a spec file path or a packaged spec name) into ``folder``.

    The folder gets ``data/<config>/<split>-XXXXX-of-YYYYY.parquet``, ``manifests/<config>.json``
    and a ``README.md`` dataset card listing every config in the folder (:mod:`cogen.folder`).
    Finished shards of an interrupted build are kept and skipped; other configs already in the
    folder are untouched. ``only`` restricts the build to some configs of the spec.
    """
    if scale <= 0:
        raise BuildError(f"--scale must be positive, got {scale}")
    started = time.perf_counter()
    setting = load_spec(spec).only(only).scaled(scale).with_seed(seed)
    folder = _output_folder(folder)
    builder = builder_for(setting, rows_per_shard)
    builder.pilot()  # fails fast on hopeless specs, and compiles the kernels before workers start
    with make_executor(executor, workers, dask_address) as pool:
        plans = builder.prepare(pool, _announcing(progress, "keys", builder.key_rows()))
        for plan in plans:
            _clear_stale(folder, plan)
        results = _write_shards(pool, [t for plan in plans for t in plan.tasks], folder, progress)
    reports = []
    for plan in plans:
        shard_results = [r for r in results if r.config == plan.config]
        write_json_atomic(manifest_path(folder, plan.config), _manifest(plan, shard_results, folder, spec))
        reports.append(_report(plan, shard_results))
    write_card(folder)
    return BuildReport(folder, reports, time.perf_counter() - started)


def _announcing(progress: Progress | None, phase: str, total: int) -> Callable[[int], None] | None:
    if progress is None:
        return None
    progress(phase, 0, total)
    return lambda advance: progress(phase, advance, 0)


def _output_folder(folder) -> Path:
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise BuildError(f"{folder} exists and is not a folder; choose another --out")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BuildError(f"cannot create the output folder {folder}: {error}") from None
    return folder


def _clear_stale(folder: Path, plan: ConfigPlan) -> None:
    """Forget a config's previous manifest if it differs, and delete files the plan does not write."""
    path = manifest_path(folder, plan.config)
    existing = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    if existing is not None and existing.get("fingerprint") != plan.fingerprint:
        path.unlink()
        write_card(folder)  # the card must not list a config that is being rewritten
    shards = config_dir(folder, plan.config)
    wanted = {folder / task.relpath for task in plan.tasks}
    for file in shards.glob("*") if shards.is_dir() else ():
        if file.suffix == ".tmp" or (file.suffix == ".parquet" and file not in wanted):
            file.unlink()


def _write_shards(pool, tasks, folder: Path, progress: Progress | None) -> list[ShardResult]:
    if progress:
        progress("write", 0, sum(t.stop - t.start for t in tasks))
    futures = {pool.submit(run_shard, task, str(folder)): task for task in tasks}
    results = []
    for future in as_completed(futures):
        results.append(future.result())
        if progress:
            task = futures[future]
            progress("write", task.stop - task.start, 0)
    return sorted(results, key=lambda r: r.relpath)


def _manifest(plan: ConfigPlan, results: list[ShardResult], folder: Path, spec) -> dict:
    import pyarrow.parquet as pq

    splits = {}
    for split, rows in plan.splits.items():
        shards = [r for r in results if r.split == split]
        files = [r.relpath for r in shards]
        metadata = [pq.read_metadata(folder / f) for f in files]
        splits[split] = {
            "rows": rows,
            "files": files,
            "num_bytes": sum(m.row_group(i).total_byte_size for m in metadata for i in range(m.num_row_groups)),
            "download_bytes": sum((folder / f).stat().st_size for f in files),
            "stats": _sum_stats(r.stats for r in shards),
            "regenerated": [list(pair) for pair in plan.regenerations.get(split, [])],
        }
        if sum(m.num_rows for m in metadata) != rows:
            raise BuildError(f"{plan.config} {split}: the shards hold {sum(m.num_rows for m in metadata)} rows, "
                             f"expected {rows}; delete {config_dir(folder, plan.config)} and rebuild")
    return {"config": plan.config, "fingerprint": plan.fingerprint, "spec_file": Path(str(spec)).name,
            **plan.info, "versions": environment_versions(),
            "columns": dict(plan.columns), "splits": splits}


def _sum_stats(stats_list) -> dict[str, int]:
    total: dict[str, int] = {}
    for stats in stats_list:
        for name, count in stats.items():
            total[name] = total.get(name, 0) + count
    return total


def _report(plan: ConfigPlan, results: list[ShardResult]) -> ConfigReport:
    return ConfigReport(plan.config, dict(plan.splits), written=sum(not r.skipped for r in results),
                        skipped=sum(r.skipped for r in results),
                        stats={s: _sum_stats(r.stats for r in results if r.split == s) for s in plan.splits})
