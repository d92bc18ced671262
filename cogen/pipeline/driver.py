"""``cogen build``: plan, generate and write every config of a spec into a Hub-ready folder.

One build writes into a folder at a time (:class:`cogen.folder.FolderLock`). A config whose
manifest, listed in the card, matches the spec and whose every shard still has the SHA-256 its
manifest records is kept whole, without sampling its keys again; every other config is planned
and its shards are written, keeping finished shards whose bytes match their record. Stopped
early (Ctrl-C, SIGTERM, SIGHUP), a build raises :class:`cogen.errors.BuildInterrupted`, whose
message says what finished; running it again resumes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import as_completed
from dataclasses import dataclass, field
from pathlib import Path

from cogen.card import check_card_owner, folder_card_checksums, write_card
from cogen.errors import BuildError, BuildInterrupted, os_error_text
from cogen.families import Builder, Setting, family
from cogen.folder import (
                          MANIFEST_FORMAT,
                          FolderLock,
                          append_journal,
                          clear_journal,
                          config_dir,
                          environment_versions,
                          file_sha256,
                          has_shard_records,
                          manifest_path,
                          read_journal,
                          record_problem,
                          shard_records,
                          write_json_atomic,
)
from cogen.pipeline.executors import make_executor
from cogen.pipeline.shards import ConfigPlan, ShardResult, run_shard
from cogen.specs import load_spec

__all__ = ["BuildReport", "ConfigReport", "build", "builder_for"]

#: progress(phase, advance, total): phase is "compile" (the kernels, before any worker starts; no
#: counts), "keys" or "write"; advance=0 announces the total.
Progress = Callable[[str, int, int], None]
#: notify(message): things a user should know while the build runs (a shard rebuilt, a stale lock).
Notify = Callable[[str], None]


@dataclass
class ConfigReport:
    """What one config's build did.

    ``kept`` is True when the whole config was already complete and verified (nothing planned);
    ``rebuilt`` lists the shards that existed but had to be written again, with why.
    """

    config: str
    rows: dict[str, int]
    written: int = 0
    skipped: int = 0
    stats: dict[str, dict[str, int]] = field(default_factory=dict)
    kept: bool = False
    rebuilt: list[str] = field(default_factory=list)


@dataclass
class BuildReport:
    """What a build did, config by config, and how long it took."""

    folder: Path
    configs: list[ConfigReport]
    seconds: float


@dataclass
class _Tally:
    """How far the build got (for the message of an interrupted build)."""

    phase: str = "preparing"
    shards: int = 0
    done: int = 0
    finished: list[str] = field(default_factory=list)

    def message(self, folder: Path) -> str:
        done = f"{self.done} of {self.shards} shards written" if self.shards else "no shard written yet"
        complete = f"; complete configs: {', '.join(self.finished)}" if self.finished else ""
        return (f"interrupted while {self.phase} ({done}{complete}); run the same command again to resume "
                f"(finished work in {folder} is kept)")


def builder_for(setting: Setting, rows_per_shard: int = 50_000) -> Builder:
    """The :class:`~cogen.families.Builder` of ``setting``'s family."""
    return family(setting.family).make_builder(setting, rows_per_shard)


def build(spec: str | Path, folder: str | Path, *, scale: float = 1.0, seed: int | None = None, workers: int = 1,
          executor: str = "local", dask_address: str | None = None, only: list[str] | None = None,
          rows_per_shard: int = 50_000, progress: Progress | None = None, notify: Notify | None = None,
          force: bool = False) -> BuildReport:
    """Build the configs of ``spec`` (a spec file path or a packaged spec name) into ``folder``.

    The folder gets ``data/<config>/<split>-XXXXX-of-YYYYY.parquet``, ``manifests/<config>.json``
    (with every shard's SHA-256, bytes, rows and row groups) and a ``README.md`` dataset card
    listing every config in the folder (:mod:`cogen.folder`). An interrupted build resumes:
    complete configs are kept whole and finished shards whose bytes match their record are kept
    (see the module docstring); other configs already in the folder are untouched. ``only``
    restricts the build to some configs of the spec. A README.md that cogen did not write is
    refused unless ``force``. Raises :class:`~cogen.errors.BuildError` (the folder is being built
    by another process, cannot be written, ...) and :class:`~cogen.errors.BuildInterrupted`.
    """
    if scale <= 0:
        raise BuildError(f"--scale must be positive, got {scale}")
    started = time.perf_counter()
    setting = load_spec(spec).only(only).scaled(scale).with_seed(seed)
    folder = _output_folder(folder)
    tally = _Tally()
    with FolderLock(folder, "build") as lock:
        if lock.stale_pid is not None and notify:
            notify(f"an earlier build of {folder} (pid {lock.stale_pid}) stopped before finishing; resuming it")
        check_card_owner(folder, force)
        try:
            reports = _build_locked(setting, folder, spec, tally, rows_per_shard=rows_per_shard, workers=workers,
                                    executor=executor, dask_address=dask_address, progress=progress, notify=notify)
        except KeyboardInterrupt:
            raise BuildInterrupted(tally.message(folder)) from None
    return BuildReport(folder, reports, time.perf_counter() - started)


def _build_locked(setting: Setting, folder: Path, spec, tally: _Tally, *, rows_per_shard: int, workers: int,
                  executor: str, dask_address: str | None, progress: Progress | None,
                  notify: Notify | None) -> list[ConfigReport]:
    builder = builder_for(setting, rows_per_shard)
    fingerprints = builder.fingerprints()
    trusted = _trusted_manifests(folder, fingerprints)
    reports = {name: _kept_report(m) for name, m in trusted.items()
               if m.get("rows_per_shard") == rows_per_shard and _files_match(folder, m)}
    tally.finished = list(reports)
    todo = [name for name in fingerprints if name not in reports]
    if todo:
        if reports:
            builder = builder_for(setting.only(todo), rows_per_shard)
        if progress:
            progress("compile", 0, 0)
        builder.pilot()  # fails fast on hopeless specs, and compiles the kernels before workers start
        with make_executor(executor, workers, dask_address) as pool:
            tally.phase = "sampling keys"
            plans = builder.prepare(pool, _announcing(progress, "keys", builder.key_rows()))
            recorded = {plan.config: _recorded(folder, plan, trusted.get(plan.config)) for plan in plans}
            for plan in plans:
                _clear_stale(folder, plan, recorded[plan.config])
            tally.phase, tally.shards = "writing shards", sum(len(plan.tasks) for plan in plans)
            results = _write_shards(pool, plans, folder, recorded, progress, notify, tally)
        for plan in plans:
            shard_results = [r for r in results if r.config == plan.config]
            write_json_atomic(manifest_path(folder, plan.config),
                              _manifest(plan, shard_results, folder, spec, rows_per_shard))
            clear_journal(folder, plan.config)
            reports[plan.config] = _report(plan, shard_results)
            tally.finished.append(plan.config)
    write_card(folder, force=True)  # the card's owner was checked before anything was written
    return [reports[name] for name in fingerprints]


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
        raise BuildError(f"cannot create the output folder {folder}: {os_error_text(error)}") from None
    return folder


def _trusted_manifests(folder: Path, fingerprints: dict[str, str]) -> dict[str, dict]:
    """The manifests of this build's configs that can be trusted: the spec's fingerprint, shard
    records, and the SHA-256 that the card lists for them (so an edited manifest is not)."""
    listed = folder_card_checksums(folder) or {}
    trusted = {}
    for name, fingerprint in fingerprints.items():
        path = manifest_path(folder, name)
        try:
            if listed.get(name) != file_sha256(path):
                continue
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(manifest, dict) and manifest.get("fingerprint") == fingerprint and has_shard_records(manifest):
            trusted[name] = manifest
    return trusted


def _files_match(folder: Path, manifest: dict) -> bool:
    """Every shard a manifest lists has its recorded bytes, and no other file is in the config's folder."""
    records = shard_records(manifest)
    shards = config_dir(folder, manifest["config"])
    present = {p.relative_to(folder).as_posix() for p in shards.iterdir()} if shards.is_dir() else set()
    return present == set(records) and all(record_problem(folder, f, r) is None for f, r in records.items())


def _kept_report(manifest: dict) -> ConfigReport:
    splits = manifest["splits"]
    return ConfigReport(manifest["config"], {s: v["rows"] for s, v in splits.items()},
                        skipped=sum(len(v["files"]) for v in splits.values()),
                        stats={s: dict(v.get("stats", {})) for s, v in splits.items()}, kept=True)


def _recorded(folder: Path, plan: ConfigPlan, trusted: dict | None) -> dict[str, dict]:
    """Path -> record of every shard of ``plan`` written before: from its trusted manifest and the journal."""
    records = shard_records(trusted) if trusted else {}
    records.update(read_journal(folder, plan.config, plan.fingerprint))
    return records


def _clear_stale(folder: Path, plan: ConfigPlan, recorded: dict[str, dict]) -> None:
    """Take down the config's old manifest (its records move to the journal) and delete files the plan does not write."""
    path = manifest_path(folder, plan.config)
    try:
        if path.exists():
            journaled = read_journal(folder, plan.config, plan.fingerprint)
            for relpath, record in recorded.items():
                if relpath not in journaled:
                    append_journal(folder, plan.config, plan.fingerprint, relpath, record)
            path.unlink()
            write_card(folder, force=True)  # the card must not list a config that is being rewritten
        shards = config_dir(folder, plan.config)
        wanted = {folder / task.relpath for task in plan.tasks}
        for file in shards.iterdir() if shards.is_dir() else ():
            if file.suffix == ".tmp" or (file.suffix == ".parquet" and file not in wanted):
                file.unlink()
    except OSError as error:
        raise BuildError(f"cannot update {folder}: {os_error_text(error)} ({error.filename})") from None


def _write_shards(pool, plans: list[ConfigPlan], folder: Path, recorded: dict[str, dict[str, dict]],
                  progress: Progress | None, notify: Notify | None, tally: _Tally) -> list[ShardResult]:
    """Run every shard task; each finished shard is journaled at once, so a stopped build keeps it."""
    tasks = [task for plan in plans for task in plan.tasks]
    if progress:
        progress("write", 0, sum(t.stop - t.start for t in tasks))
    futures: dict = {}
    results: list[ShardResult] = []

    def finish(future) -> None:
        task = futures.pop(future)
        result = future.result()
        results.append(result)
        tally.done += 1
        if not result.skipped:
            append_journal(folder, task.config, task.fingerprint, result.relpath, result.record)
        if result.rewritten and notify:
            notify(f"rebuilt {result.relpath}: {result.rewritten}")
        if progress:
            progress("write", task.stop - task.start, 0)

    try:
        for task in tasks:
            futures[pool.submit(run_shard, task, str(folder), recorded[task.config].get(task.relpath))] = task
            for future in [f for f in futures if f.done()]:  # an in-process executor finishes at once
                finish(future)
        for future in as_completed(list(futures)):
            finish(future)
    finally:
        for future in futures:
            future.cancel()
    return sorted(results, key=lambda r: r.relpath)


def _manifest(plan: ConfigPlan, results: list[ShardResult], folder: Path, spec, rows_per_shard: int) -> dict:
    import pyarrow.parquet as pq

    splits = {}
    for split, rows in plan.splits.items():
        shards = [r for r in results if r.split == split]
        files = [r.relpath for r in shards]
        metadata = [pq.read_metadata(folder / f) for f in files]
        splits[split] = {
            "rows": rows,
            "files": files,
            "shards": {r.relpath: r.record for r in shards},
            "num_bytes": sum(m.row_group(i).total_byte_size for m in metadata for i in range(m.num_row_groups)),
            "download_bytes": sum(r.record["bytes"] for r in shards),
            "stats": _sum_stats(r.stats for r in shards),
            "regenerated": [list(pair) for pair in plan.regenerations.get(split, [])],
        }
        if sum(r.record["rows"] for r in shards) != rows:
            raise BuildError(f"{plan.config} {split}: the shards hold {sum(m.num_rows for m in metadata)} rows, "
                             f"expected {rows}; delete {config_dir(folder, plan.config)} and rebuild")
    return {"config": plan.config, "manifest_format": MANIFEST_FORMAT, "fingerprint": plan.fingerprint,
            "spec_file": Path(str(spec)).name, **plan.info, "versions": environment_versions(),
            "rows_per_shard": rows_per_shard, "columns": dict(plan.columns), "splits": splits}


def _sum_stats(stats_list) -> dict[str, int]:
    total: dict[str, int] = {}
    for stats in stats_list:
        for name, count in stats.items():
            total[name] = total.get(name, 0) + count
    return total


def _report(plan: ConfigPlan, results: list[ShardResult]) -> ConfigReport:
    return ConfigReport(plan.config, dict(plan.splits), written=sum(not r.skipped for r in results),
                        skipped=sum(r.skipped for r in results),
                        stats={s: _sum_stats(r.stats for r in results if r.split == s) for s in plan.splits},
                        rebuilt=[f"{r.relpath}: {r.rewritten}" for r in results if r.rewritten])
