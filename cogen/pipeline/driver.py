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
import shutil
import time
from collections.abc import Callable
from concurrent.futures import Future, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from cogen.card import check_card_owner, folder_card_checksums, is_cogen_card, write_card
from cogen.errors import BuildError, BuildInterrupted, os_error_text
from cogen.families import Builder, Setting, family
from cogen.folder import (
                          MANIFEST_FORMAT,
                          FolderLock,
                          append_journal,
                          clear_journal,
                          environment_versions,
                          file_sha256,
                          has_shard_records,
                          manifest_path,
                          read_journal,
                          scratch_path,
                          shard_records,
                          write_json_atomic,
)
from cogen.pipeline.executors import make_executor
from cogen.pipeline.parquet import PARQUET_FORMAT
from cogen.pipeline.shards import ConfigPlan, ShardResult, ShardTask, run_shard, run_shard_elsewhere
from cogen.pipeline.stores import LocalStore, RemoteStore, open_store
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
    """What a build did, config by config, and how long it took (``folder``: a URL for a remote build)."""

    folder: Path | str
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
          force: bool = False, dask_scheduler_file: str | None = None, client=None,
          storage_options: dict | None = None, state_dir: str | Path | None = None,
          parquet_cdc: bool = False) -> BuildReport:
    """Build the configs of ``spec`` (a spec file path or a packaged spec name) into ``folder``.

    The folder gets ``data/<config>/<split>-XXXXX-of-YYYYY.parquet``, ``manifests/<config>.json``
    (with every shard's SHA-256, bytes, rows and row groups) and a ``README.md`` dataset card
    listing every config in the folder (:mod:`cogen.folder`). An interrupted build resumes:
    complete configs are kept whole and finished shards whose bytes match their record are kept
    (see the module docstring); other configs already in the folder are untouched. ``only``
    restricts the build to some configs of the spec. A README.md that cogen did not write is
    refused unless ``force``. Raises :class:`~cogen.errors.BuildError` (the folder is being built
    by another process, cannot be written, ...) and :class:`~cogen.errors.BuildInterrupted`.

    ``folder`` may be an fsspec URL (``s3://bucket/c3``; ``storage_options`` go to fsspec): the
    workers upload their shards there, and the build's state lives in ``state_dir`` (default: a
    folder under ``~/.cache/cogen/remote-builds``). A Dask cluster is reached through ``client``
    (an existing ``distributed.Client``), ``dask_scheduler_file`` or ``dask_address``; its workers
    need no shared disk (they return the bytes, or upload them), and must run the driver's
    versions of cogen, numpy, numba, pyarrow and polars (checked before any work).

    ``parquet_cdc`` writes the shards with content-defined chunking (for a dataset that is
    appended to: the Hub then deduplicates unchanged chunks); it costs about twice the encoding
    time, and the folder's manifests and shard stamps record it, so a build with the other
    setting rewrites every shard.
    """
    if scale <= 0:
        raise BuildError(f"--scale must be positive, got {scale}")
    started = time.perf_counter()
    setting = load_spec(spec).only(only).scaled(scale).with_seed(seed)
    store = open_store(folder, storage_options, state_dir)
    folder = _output_folder(store.state)
    dask = {"address": dask_address, "scheduler_file": dask_scheduler_file, "client": client}
    tally = _Tally()
    with FolderLock(folder, "build") as lock:
        if lock.stale_pid is not None and notify:
            notify(f"an earlier build of {store.url} (pid {lock.stale_pid}) stopped before finishing; resuming it")
        if isinstance(store, RemoteStore):
            _check_remote_card(store, force)
            store.pull_metadata()
        check_card_owner(folder, force)
        try:
            reports = _build_locked(setting, store, spec, tally, rows_per_shard=rows_per_shard, workers=workers,
                                    executor=executor, dask=dask, progress=progress, notify=notify, cdc=parquet_cdc)
        except KeyboardInterrupt:
            raise BuildInterrupted(tally.message(folder)) from None
    return BuildReport(store.url if store.remote else folder, reports, time.perf_counter() - started)


def _check_remote_card(store: RemoteStore, force: bool) -> None:
    text = store.remote_card()
    if text is not None and not force and not is_cogen_card(text):
        raise BuildError(f"{store.url}/README.md was not written by cogen, and cogen would replace it with the dataset "
                         "card; build into another prefix, move the file away, or pass --force to replace it")


def _build_locked(setting: Setting, store: LocalStore | RemoteStore, spec, tally: _Tally, *, rows_per_shard: int,
                  workers: int, executor: str, dask: dict, progress: Progress | None,
                  notify: Notify | None, cdc: bool = False) -> list[ConfigReport]:
    folder = store.state
    builder = builder_for(setting, rows_per_shard)
    fingerprints = builder.fingerprints()
    trusted = _trusted_manifests(folder, fingerprints, cdc)
    reports = {name: _kept_report(m) for name, m in trusted.items()
               if m.get("rows_per_shard") == rows_per_shard and _files_match(store, m)}
    tally.finished = list(reports)
    _remove_scratch(scratch_path(folder))  # a build killed before its end may have left files there
    todo = [name for name in fingerprints if name not in reports]
    if todo:
        if reports:
            builder = builder_for(setting.only(todo), rows_per_shard)
        if progress:
            progress("compile", 0, 0)
        builder.pilot()  # fails fast on hopeless specs, and compiles the kernels before workers start
        elsewhere = store.remote or executor != "local"  # no disk shared with the workers is assumed
        scratch = None if elsewhere else scratch_path(folder)
        try:
            with make_executor(executor, workers, dask["address"], scheduler_file=dask["scheduler_file"],
                               client=dask["client"]) as pool:
                tally.phase = "sampling keys"
                plans = builder.prepare(pool, _announcing(progress, "keys", builder.key_rows()), scratch=scratch)
                plans = [plan.with_cdc(cdc) for plan in plans]
                recorded = {plan.config: _recorded(folder, plan, trusted.get(plan.config)) for plan in plans}
                for plan in plans:
                    _clear_stale(store, plan, recorded[plan.config])
                tally.phase, tally.shards = "writing shards", sum(len(plan.tasks) for plan in plans)
                results = _write_shards(pool, plans, store, recorded, progress, notify, tally, elsewhere)
        finally:  # the workers have stopped: nothing writes there any more
            _remove_scratch(scratch)
        for plan in plans:
            shard_results = [r for r in results if r.config == plan.config]
            write_json_atomic(manifest_path(folder, plan.config),
                              _manifest(plan, shard_results, store, spec, rows_per_shard, cdc))
            clear_journal(folder, plan.config)
            reports[plan.config] = _report(plan, shard_results)
            tally.finished.append(plan.config)
    _publish_card(store)
    return [reports[name] for name in fingerprints]


def _remove_scratch(scratch: Path | None) -> None:
    """Delete the files the workers of a build shared (best effort: the next build deletes them too)."""
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)


def _publish_card(store: LocalStore | RemoteStore) -> None:
    """Write the card (the card's owner was checked before anything was written); a remote build
    fetches the shards its previews draw, then uploads manifests, previews and card."""
    if isinstance(store, RemoteStore):
        from cogen.card.preview import preview_splits
        from cogen.folder import read_manifests

        for manifest in read_manifests(store.state).values():
            for split in preview_splits(manifest):
                first = manifest["splits"][split]["files"][0]
                if not (store.state / first).is_file():
                    store.fetch(first)
    write_card(store.state, force=True)
    if isinstance(store, RemoteStore):
        store.push_metadata()


def _announcing(progress: Progress | None, phase: str, total: int) -> Callable[[int], None] | None:
    if progress is None:
        return None
    progress(phase, 0, total)
    return lambda advance: progress(phase, advance, 0)


def _output_folder(folder) -> Path:
    folder = Path(folder).expanduser().resolve()  # workers started elsewhere see the same folder
    if folder.exists() and not folder.is_dir():
        raise BuildError(f"{folder} exists and is not a folder; choose another --out")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BuildError(f"cannot create the output folder {folder}: {os_error_text(error)}") from None
    return folder


def _trusted_manifests(folder: Path, fingerprints: dict[str, str], cdc: bool = False) -> dict[str, dict]:
    """The manifests of this build's configs that can be trusted: the spec's fingerprint, shard
    records, the shard format asked for, and the SHA-256 that the card lists for them (so an
    edited manifest is not)."""
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
        if isinstance(manifest, dict) and manifest.get("fingerprint") == fingerprint and has_shard_records(manifest) \
                and manifest.get("parquet_format", 1) == PARQUET_FORMAT and manifest.get("parquet_cdc", False) == cdc:
            trusted[name] = manifest
    return trusted


def _files_match(store: LocalStore | RemoteStore, manifest: dict) -> bool:
    """Every shard a manifest lists has its recorded bytes, and no other file is in the config's folder."""
    records = shard_records(manifest)
    return store.files(manifest["config"]) == set(records) and \
        all(store.problem(f, r) is None for f, r in records.items())


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


def _clear_stale(store: LocalStore | RemoteStore, plan: ConfigPlan, recorded: dict[str, dict]) -> None:
    """Take down the config's old manifest (its records move to the journal) and delete files the plan does not write."""
    folder = store.state
    path = manifest_path(folder, plan.config)
    try:
        if path.exists():
            journaled = read_journal(folder, plan.config, plan.fingerprint)
            for relpath, record in recorded.items():
                if relpath not in journaled:
                    append_journal(folder, plan.config, plan.fingerprint, relpath, record)
            path.unlink()
            _publish_card(store)  # the card must not list a config that is being rewritten
        wanted = {task.relpath for task in plan.tasks}
        for relpath in store.files(plan.config):
            if relpath.endswith(".tmp") or (relpath.endswith(".parquet") and relpath not in wanted):
                store.remove(relpath)
    except OSError as error:
        raise BuildError(f"cannot update {folder}: {os_error_text(error)} ({error.filename})") from None


def _write_shards(pool, plans: list[ConfigPlan], store: LocalStore | RemoteStore, recorded: dict[str, dict[str, dict]],
                  progress: Progress | None, notify: Notify | None, tally: _Tally,
                  elsewhere: bool = False) -> list[ShardResult]:
    """Run every shard task; each finished shard is journaled at once, so a stopped build keeps it.

    ``elsewhere``: the workers may not see the driver's disk. The driver then decides which
    shards to keep, and the workers return the bytes (a local folder) or upload them (a URL).
    """
    folder = store.state
    tasks = [task for plan in plans for task in plan.tasks]
    if progress:
        progress("write", 0, sum(t.stop - t.start for t in tasks))
    futures: dict = {}
    results: list[ShardResult] = []

    def finish(future) -> None:
        task = futures.pop(future)
        result = future.result()
        if result.data is not None:
            store.write(result.relpath, result.data)
            result.data = None
        if task.relpath in rewritten:
            result.rewritten = rewritten[task.relpath]
        results.append(result)
        tally.done += 1
        if not result.skipped:
            append_journal(folder, task.config, task.fingerprint, result.relpath, result.record)
        if result.rewritten and notify:
            notify(f"rebuilt {result.relpath}: {result.rewritten}")
        if progress:
            progress("write", task.stop - task.start, 0)

    rewritten: dict[str, str] = {}
    try:
        for task in tasks:
            record = recorded[task.config].get(task.relpath)
            if not elsewhere:
                futures[pool.submit(run_shard, task, str(folder), record)] = task
            else:
                kept, why = _kept_shard(store, task, record)
                if why:
                    rewritten[task.relpath] = why
                if kept is not None:
                    futures[_done(kept)] = task
                elif store.remote:
                    futures[pool.submit(run_shard_elsewhere, task, store.url, store.storage_options)] = task
                else:
                    futures[pool.submit(run_shard_elsewhere, task)] = task
            for future in [f for f in futures if f.done()]:  # an in-process executor finishes at once
                finish(future)
        for future in as_completed(list(futures)):
            finish(future)
    finally:
        for future in futures:
            future.cancel()
    return sorted(results, key=lambda r: r.relpath)


def _done(result: ShardResult) -> Future:
    future: Future = Future()
    future.set_result(result)
    return future


def _kept_shard(store: LocalStore | RemoteStore, task: ShardTask,
                recorded: dict | None) -> tuple[ShardResult | None, str | None]:
    """The driver's version of :func:`run_shard`'s check: (the kept shard, or None; why it is rewritten, or None)."""
    stamp, stats = store.footer(task.relpath)
    if stamp != task.stamp():
        return None, None
    if not recorded:
        return None, "no SHA-256 was recorded for it (its build was cut short before it was journaled)"
    if store.problem(task.relpath, recorded) is not None:
        return None, "its bytes differ from the SHA-256 recorded when it was written"
    return ShardResult(task.relpath, task.config, task.split, task.stop - task.start, stats, 0.0, skipped=True,
                       record=dict(recorded)), None


def _manifest(plan: ConfigPlan, results: list[ShardResult], store: LocalStore | RemoteStore, spec,
              rows_per_shard: int, cdc: bool = False) -> dict:
    splits = {}
    for split, rows in plan.splits.items():
        shards = [r for r in results if r.split == split]
        files = [r.relpath for r in shards]
        metadata = [store.metadata(f) for f in files]
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
                             f"expected {rows}; delete {store.url}/data/{plan.config} and rebuild")
    return {"config": plan.config, "manifest_format": MANIFEST_FORMAT, "fingerprint": plan.fingerprint,
            "spec_file": Path(str(spec)).name, **plan.info, "versions": environment_versions(),
            "rows_per_shard": rows_per_shard, "parquet_format": PARQUET_FORMAT, "parquet_cdc": cdc,
            "columns": dict(plan.columns),
            "splits": splits}


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
