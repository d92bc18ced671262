"""``cogen build``: plan, generate and write every config of a spec into a Hub-ready folder.

One build writes into a folder at a time (:class:`cogen.folder.FolderLock`), and a folder holds
one build: a folder whose configs were built from other inputs (spec, seed, scale, versions,
code: :mod:`cogen.folder.inputs`) is refused, saying what differs, unless ``force`` replaces its
content as a whole. A config whose manifest, listed in the card, records this build's inputs and
whose every shard still has the SHA-256 its manifest records is kept whole, without sampling its
keys again; every other config is planned and its shards are written, keeping finished shards
whose bytes match their record.

Stopped early (Ctrl-C, SIGTERM, SIGHUP), a build raises :class:`cogen.errors.BuildInterrupted`,
whose message says what finished; running it again resumes, keeping what is finished at every
stage: the key pass's results (:mod:`cogen.pipeline.resume`), every journaled shard, and a config
whose shards are all written, whose manifest is then written from its saved plan without
sampling anything again. Journals, plans and saved keys are deleted once the card is written.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from collections.abc import Callable
from concurrent.futures import Future, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from cogen.card import check_card_owner, folder_card_checksums, is_cogen_card, write_card
from cogen.errors import BuildError, BuildInterrupted, os_error_text
from cogen.family import Builder, Setting, family
from cogen.folder import (
                          CROISSANT_FILE,
                          MANIFEST_FORMAT,
                          FolderLock,
                          append_journal,
                          clear_journal,
                          environment_versions,
                          file_sha256,
                          manifest_path,
                          read_journal,
                          scratch_path,
                          shard_records,
                          write_json_atomic,
)
from cogen.folder.inputs import code_digest, differences, folder_inputs, inputs_key, write_record
from cogen.folder.layout import CARD_FILE, DATA_DIR, MANIFEST_DIR, PREVIEW_DIR, STATE_DIR, plan_path, record_path
from cogen.folder.ownership import SHARD_NAME, foreign_files, is_state_name, is_temporary, listed_shards
from cogen.pipeline.executors import make_executor, start_method
from cogen.pipeline.memory import machine_memory
from cogen.pipeline.memory_scratch import HELD_BYTES, holding
from cogen.pipeline.resume import KeyPassCache, key_pass_folder, remove_key_passes
from cogen.pipeline.shards import ConfigPlan, ShardResult, ShardTask, run_shard, run_shard_elsewhere
from cogen.pipeline.stores import LocalStore, RemoteStore, open_store
from cogen.specs import load_spec, packaged_spec_name

__all__ = ["BuildReport", "ConfigReport", "MAX_SEED", "TINY_BUILD_ROWS", "available_cores", "build", "builder_for",
           "estimate_memory", "machine_memory"]

#: progress(phase, advance, total): phase is "compile" (the kernels, before any worker starts; no
#: counts), "keys" or "write"; advance=0 announces the total.
Progress = Callable[[str, int, int], None]
#: notify(message): things a user should know while the build runs (a shard rebuilt, a stale lock).
Notify = Callable[[str], None]
#: Largest seed (the RNG streams take 63-bit seeds).
MAX_SEED = 2**63 - 1
#: The memory estimate of :func:`estimate_memory`: a process (Python, NumPy, Numba, pyarrow), the
#: driver's bytes per row (keys, dedup plan, the key pass's encoded files) and a worker's per row of a shard.
PROCESS_BYTES = 400 * 2**20
DRIVER_ROW_BYTES = 100
WORKER_ROW_BYTES = 2_000
#: A local build of fewer rows runs in the driver's process whatever ``workers`` says: the same bytes, and
#: less CPU time. G1 with 2 workers, in the driver against a pool (``benchmarks/bench_startup.py pool``,
#: medians of 5, load 1.6-2): 520 rows 0.90 against 1.04 CPU-s; 10,400 rows 1.30 against 1.84 (each
#: worker imports polars, its shards' writer, again); 20,800 rows 1.33 against 1.94 CPU-s and 1.25
#: against 1.66 s wall; at 41,600 rows the pool catches up on the wall clock (1.41 against 1.47 s).
TINY_BUILD_ROWS = 20_000
#: Keys of a shard's stamp that name the shard; the others name the file format (and join a config's inputs).
_SHARD_STAMP_KEYS = ("fingerprint", "config", "split", "start", "stop")


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
    keys: KeyPassCache | None = None

    def message(self, folder: Path) -> str:
        done = f"{self.done} of {self.shards} shards written" if self.shards else "no shard written yet"
        if self.keys is not None and not self.shards:
            done += f"; the key pass of {self.keys.saved + self.keys.loaded} shards is saved"
        complete = f"; complete configs: {', '.join(self.finished)}" if self.finished else ""
        return (f"interrupted while {self.phase} ({done}{complete}); run the same command again to resume "
                f"(finished work in {folder} is kept)")


@dataclass
class _Build:
    """One build's settings, as the steps below share them."""

    store: LocalStore | RemoteStore
    spec: str | Path
    inputs: dict[str, dict]
    formats: dict
    rows_per_shard: int
    workers: int
    executor: str
    dask: dict
    progress: Progress | None
    notify: Notify | None
    cdc: bool = False
    tally: _Tally = field(default_factory=_Tally)
    #: The packaged spec the build's spec is (``"c3"``), or None: a user's spec file (every manifest says which).
    packaged_spec: str | None = None

    @property
    def folder(self) -> Path:
        return self.store.state

    def key(self, config: str) -> str:
        """The journal key of ``config`` (its inputs)."""
        return inputs_key(self.inputs[config])


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
    (with every shard's SHA-256, bytes, rows and row groups, and the build's inputs) and a
    ``README.md`` dataset card listing every config in the folder (:mod:`cogen.folder`). An
    interrupted build resumes (see the module docstring); other configs of the spec already in the
    folder are untouched. ``only`` restricts the build to some configs of the spec.

    ``force`` replaces the folder's content as a whole when it holds a build with other inputs
    (another spec, seed, scale, versions or code; configs the spec does not make), replaces a
    README.md that cogen did not write, and builds even when :func:`estimate_memory` says the
    build will not fit in memory; without it these are refused. ``workers`` above the cores
    available are cut to that number (with a note); a local build of fewer than
    :data:`TINY_BUILD_ROWS` rows runs in this process (the same bytes, less CPU time). Raises :class:`~cogen.errors.BuildError` (the
    folder is being built by another process, cannot be written, ...) and
    :class:`~cogen.errors.BuildInterrupted`.

    ``folder`` may be an fsspec URL (``s3://bucket/c3``; ``storage_options`` go to fsspec): the
    workers upload their shards there, and the build's state lives in ``state_dir`` (default: a
    folder under ``~/.cache/cogen/remote-builds``). A Dask cluster is reached through ``client``
    (an existing ``distributed.Client``), ``dask_scheduler_file`` or ``dask_address``; its workers
    need no shared disk (they return the bytes, or upload them), and must run the driver's
    versions of cogen, numpy, numba, pyarrow and polars (checked before any work).

    ``parquet_cdc`` writes the shards with content-defined chunking (for a dataset that is
    appended to: the Hub then deduplicates unchanged chunks); it costs about twice the encoding
    time, and the folder's manifests and shard stamps record it: it is one of the build's inputs.
    """
    _check_numbers(scale, seed, rows_per_shard)
    started = time.perf_counter()
    whole = load_spec(spec).scaled(scale).with_seed(seed)
    setting = whole.only(only)
    workers = _usable_workers(workers, executor, notify)
    store = open_store(folder, storage_options, state_dir)
    folder = _output_folder(store.state)
    formats = _format_fields(whole.family, parquet_cdc)
    job = _Build(store, spec, _inputs(whole, scale, rows_per_shard, formats), formats, rows_per_shard, workers, executor,
                 {"address": dask_address, "scheduler_file": dask_scheduler_file, "client": client}, progress, notify,
                 parquet_cdc, packaged_spec=packaged_spec_name(spec))
    with FolderLock(folder, "build") as lock:
        if lock.stale_pid is not None and notify:
            notify(f"an earlier build of {store.url} (pid {lock.stale_pid}) stopped before finishing (killed, or its "
                   "machine stopped; the out-of-memory killer ends a build without a word); resuming it")
        if isinstance(store, RemoteStore):
            _check_remote_card(store, force)
            store.pull_metadata()
        check_card_owner(folder, force)
        _check_inputs(job, force)
        _check_memory(setting, job, force)
        try:
            reports = _build_locked(setting, job)
        except KeyboardInterrupt:
            raise BuildInterrupted(job.tally.message(folder)) from None
    return BuildReport(store.url if store.remote else folder, reports, time.perf_counter() - started)


def _check_numbers(scale: float, seed: int | None, rows_per_shard: int) -> None:
    """One-line errors for numbers no build can use (they would fail deep inside, or never end)."""
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale) or scale <= 0:
        raise BuildError(f"--scale must be a positive finite number, got {scale}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED):
        raise BuildError(f"--seed must be an integer from 0 to {MAX_SEED}, got {seed}")
    if isinstance(rows_per_shard, bool) or not isinstance(rows_per_shard, int) or rows_per_shard < 1:
        raise BuildError(f"rows per shard must be a positive integer, got {rows_per_shard}")


def available_cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _usable_workers(workers: int, executor: str, notify: Notify | None) -> int:
    """``workers`` for a local pool, at most the cores available (more would only add memory)."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise BuildError(f"--workers must be a positive integer, got {workers}")
    cores = available_cores()
    if executor == "local" and workers > cores:
        if notify:
            notify(f"--workers {workers} is more than the {cores} cores available; using {cores}")
        return cores
    return workers


def _inputs(setting: Setting, scale: float, rows_per_shard: int, formats: dict) -> dict[str, dict]:
    """Config -> what it is built from (:mod:`cogen.folder.inputs`), for every config of the spec."""
    builder = builder_for(setting, rows_per_shard)
    fingerprints = builder.fingerprints()
    shared = {"scale": scale, "rows_per_shard": rows_per_shard, "versions": environment_versions(),
              "code": code_digest()}
    inputs = {}
    for config in setting.configs:
        described = {key: value for key, value in builder.info(config).items()
                     if key != "description" and (value is None or isinstance(value, (str, int, float, bool)))}
        inputs[config.name] = {**described, "fingerprint": fingerprints[config.name], **shared, **formats}
    return inputs


def _format_fields(family_name: str, cdc: bool) -> dict:
    """The file-format fields every shard's stamp records (``parquet_format``, ``cdc``, ...), named as
    the manifest names them (``parquet_*``): every manifest records them, and a change of format
    is a change of inputs."""
    probe = ShardTask(family=family_name, config="probe", split="train", index=0, count=1, start=0, stop=0,
                      fingerprint="", columns=())
    probe = ConfigPlan("probe", "", (), {}, [probe], {}).with_cdc(cdc).tasks[0]
    return {key if key.startswith("parquet_") else f"parquet_{key}": value
            for key, value in probe.stamp().items() if key not in _SHARD_STAMP_KEYS}


def _check_inputs(job: _Build, force: bool) -> None:
    """Refuse a folder that holds another build (unless ``force``, which empties it first)."""
    found = differences(folder_inputs(job.folder), job.inputs)
    if not found:
        return
    _refuse_foreign_files(job, found)
    if not force:
        raise BuildError(f"{job.store.url} holds a build with other inputs: {'; '.join(found)}. A folder holds one "
                         "build: build into another folder (`cogen merge` combines folders), or pass --force to "
                         "replace this folder's content")
    if job.notify:
        job.notify(f"--force: replacing the content of {job.store.url} ({'; '.join(found)})")
    _empty_folder(job.store)


def _refuse_foreign_files(job: _Build, found: list[str]) -> None:
    """Refuse, with or without ``--force``, a folder holding another build and files cogen did not write
    under ``data/``, ``manifests/`` or ``previews/`` (``--force`` deletes only what cogen wrote)."""
    foreign = foreign_files(job.folder)
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise BuildError(f"{job.store.url} holds a build with other inputs ({'; '.join(found)}) and files cogen did not "
                         f"write: {shown}. cogen deletes only its own files, even with --force: move these out of the "
                         "folder (or build into another folder), then run again")


def _empty_folder(store: LocalStore | RemoteStore) -> None:
    """Delete every file cogen keeps in the folder (data, manifests, previews, card, build state but the lock);
    :func:`_refuse_foreign_files` has made sure they hold nothing else."""
    folder = store.state
    state = folder / STATE_DIR
    doomed = [folder / name for name in (DATA_DIR, MANIFEST_DIR, PREVIEW_DIR, CARD_FILE, CROISSANT_FILE)]
    doomed += [path for path in (sorted(state.iterdir()) if state.is_dir() else ()) if is_state_name(path.name)]
    try:
        for path in doomed:
            _remove(path)
    except OSError as error:
        raise BuildError(f"cannot empty {folder} for --force: {os_error_text(error)}") from None
    if isinstance(store, RemoteStore):
        store.clear()


def estimate_memory(rows: int, workers: int, rows_per_shard: int) -> int:
    """A rough upper estimate, in bytes, of the memory a build of ``rows`` rows takes at its peak:
    each process, the driver's per-row state, and each worker's shard in progress."""
    return PROCESS_BYTES * (1 + workers) + DRIVER_ROW_BYTES * rows + \
        workers * WORKER_ROW_BYTES * min(rows, rows_per_shard)


def _check_memory(setting: Setting, job: _Build, force: bool) -> None:
    """Refuse, before anything is sampled, a build that will not fit in the machine's memory."""
    rows = builder_for(setting, job.rows_per_shard).rows()
    workers = job.workers if job.executor == "local" else 0
    needed, available = estimate_memory(rows, workers, job.rows_per_shard), machine_memory()
    if available is None or needed <= available or force:
        return
    raise BuildError(f"this build makes {rows:,} rows and needs about {_gib(needed)} of memory, more than the "
                     f"{_gib(available)} this process may use (the machine's memory, or its cgroup's limit if lower); "
                     "lower --scale or --workers, build some configs with --only, or pass --force to try anyway")


def _gib(count: float) -> str:
    """Bytes as GiB, or a larger unit when there are more than 1,024 of them."""
    count /= 2**30
    for unit in ("GiB", "TiB", "PiB"):
        if count < 1024 or unit == "PiB":
            return f"{count:,.1f} {unit}"
        count /= 1024
    return f"{count:,.1f} PiB"


def _check_remote_card(store: RemoteStore, force: bool) -> None:
    text = store.remote_card()
    if text is not None and not force and not is_cogen_card(text):
        raise BuildError(f"{store.url}/README.md was not written by cogen, and cogen would replace it with the dataset "
                         "card; build into another prefix, move the file away, or pass --force to replace it")


def _build_locked(setting: Setting, job: _Build) -> list[ConfigReport]:
    builder = builder_for(setting, job.rows_per_shard)
    names = list(builder.fingerprints())
    _sweep_temporaries(job.store, names)  # left by a build killed while writing (under the lock: nobody writes now)
    trusted = _trusted_manifests(job, names)
    reports = {name: _kept_report(m) for name, m in trusted.items() if _files_match(job.store, m)}
    reports.update(_finished_from_plans(job, [name for name in names if name not in reports]))
    job.tally.finished = list(reports)
    _remove_scratch(scratch_path(job.folder))  # a build killed before its end may have left files there
    todo = [name for name in names if name not in reports]
    _refuse_unknown_files(job, todo)  # before the key pass: a file no plan can want stops the build at once
    if todo:
        if reports:
            builder = builder_for(setting.only(todo), job.rows_per_shard)
        reports.update(_build_configs(builder, todo, trusted, job))
    _publish_card(job.store)
    _clear_state(job.folder, names)
    return [reports[name] for name in names]


def _build_configs(builder: Builder, todo: list[str], trusted: dict[str, dict], job: _Build) -> dict[str, ConfigReport]:
    """Plan and write the configs ``todo``, then their manifests."""
    folder, store = job.folder, job.store
    if job.executor == "local":
        start_method()  # a wrong COGEN_WORKER_START is refused before any work, however small the build
    if job.progress:
        job.progress("compile", 0, 0)
    builder.pilot()  # fails fast on hopeless specs, and compiles the kernels before workers start
    elsewhere = store.remote or job.executor != "local"  # no disk shared with the workers is assumed
    scratch = None if elsewhere else scratch_path(folder)
    keys = key_pass_folder(folder, {name: job.key(name) for name in todo})
    remove_key_passes(folder, keep=keys)
    workers = _pool_workers(builder, job)
    in_driver = job.executor == "local" and workers == 1 and scratch is not None
    try:
        with make_executor(job.executor, workers, job.dask["address"], scheduler_file=job.dask["scheduler_file"],
                           client=job.dask["client"]) as pool, holding(HELD_BYTES if in_driver else 0):
            job.tally.phase = "sampling keys"
            cached = job.tally.keys = KeyPassCache(pool, keys) if job.executor == "local" else None
            plans = builder.prepare(cached or pool, _announcing(job.progress, "keys", builder.key_rows()),
                                    scratch=scratch)
            plans = [plan.with_cdc(job.cdc) for plan in plans]
            drafts = {plan.config: _draft(plan, job.key(plan.config)) for plan in plans}
            write_record(folder, {name: job.inputs[name] for name in todo})  # before anything is written in data/
            for plan in plans:
                write_json_atomic(plan_path(folder, plan.config), drafts[plan.config])
            recorded = {plan.config: _recorded(job, plan, trusted.get(plan.config)) for plan in plans}
            for plan in plans:
                _clear_stale(job, plan, recorded[plan.config])
            job.tally.phase, job.tally.shards = "writing shards", sum(len(plan.tasks) for plan in plans)
            results = _write_shards(pool, plans, job, recorded, elsewhere)
    finally:  # the workers have stopped: nothing writes there any more
        _remove_scratch(scratch)
        _sweep_temporaries(store, todo)
    reports = {}
    job.tally.phase = "writing manifests"
    for plan in plans:
        shard_results = [r for r in results if r.config == plan.config]
        _write_manifest(job, drafts[plan.config], {r.relpath: (r.record, r.stats) for r in shard_results})
        reports[plan.config] = _report(plan, shard_results)
        job.tally.finished.append(plan.config)
    job.tally.phase = "writing the card"
    return reports


def _pool_workers(builder: Builder, job: _Build) -> int:
    """The workers of the build's pool: 1 (the build runs in this process) for a local build of fewer than
    :data:`TINY_BUILD_ROWS` rows, whose workers would cost more than they save."""
    if job.executor == "local" and builder.rows() < TINY_BUILD_ROWS:
        return 1
    return job.workers


def _draft(plan: ConfigPlan, key: str) -> dict:
    """What the manifest of ``plan`` says before its shards exist (saved as ``.cogen/<config>.plan.json``)."""
    files = {split: [task.relpath for task in plan.tasks if task.split == split] for split in plan.splits}
    return {"key": key, "config": plan.config, "fingerprint": plan.fingerprint, "columns": dict(plan.columns),
            "splits": dict(plan.splits), "files": files, "info": plan.info,
            "regenerations": {split: [list(pair) for pair in pairs] for split, pairs in plan.regenerations.items()}}


def _finished_from_plans(job: _Build, names: list[str]) -> dict[str, ConfigReport]:
    """Configs whose every shard an earlier run of this build wrote and journaled (it stopped before
    or while writing manifests and card): their manifests are written from the saved plans, with
    nothing sampled again."""
    reports = {}
    for name in names:
        draft = _read_json(plan_path(job.folder, name))
        if not isinstance(draft, dict) or draft.get("key") != job.key(name) or draft.get("config") != name:
            continue
        records = read_journal(job.folder, name, job.key(name))
        files = [f for split_files in draft["files"].values() for f in split_files]
        if not files or any(f not in records or job.store.problem(f, records[f]) is not None for f in files) or \
                job.store.files(name) != set(files):
            continue
        shards = {f: (records[f], job.store.footer(f)[1]) for f in files}
        manifest = _write_manifest(job, draft, shards)
        reports[name] = _kept_report(manifest)
    return reports


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def _write_manifest(job: _Build, draft: dict, shards: dict[str, tuple[dict, dict]]) -> dict:
    manifest = _manifest(draft, shards, job)
    write_json_atomic(manifest_path(job.folder, draft["config"]), manifest)
    return manifest


def _clear_state(folder: Path, names: list[str]) -> None:
    """Forget the journals, plans and saved key passes of a finished build (the manifests hold the records)."""
    for name in names:
        clear_journal(folder, name)
        plan_path(folder, name).unlink(missing_ok=True)
    record_path(folder).unlink(missing_ok=True)
    remove_key_passes(folder)


def _sweep_temporaries(store: LocalStore | RemoteStore, configs: list[str]) -> None:
    """Delete the hidden temporary files a stopped worker or write left behind (best effort; cogen's
    temporaries only, :func:`cogen.folder.ownership.is_temporary`)."""
    folder = store.state
    places = [folder, folder / MANIFEST_DIR, folder / PREVIEW_DIR]
    places += [folder / DATA_DIR / name for name in configs] if not store.remote else []
    for place in places:
        for path in (p for p in place.glob(".*.tmp") if is_temporary(p.name)) if place.is_dir() else ():
            try:
                _remove(path)
            except OSError:
                pass


def _remove(path: Path) -> None:
    """Delete a file or a folder (nothing if it is not there)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


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
    for name in (DATA_DIR, MANIFEST_DIR, PREVIEW_DIR, STATE_DIR):
        if (folder / name).exists() and not (folder / name).is_dir():
            raise BuildError(f"{folder / name} is a file where cogen keeps a folder; move it away, or choose "
                             "another --out")
    return folder


def _trusted_manifests(job: _Build, names: list[str]) -> dict[str, dict]:
    """The manifests of this build's configs that can be trusted: this build's inputs, and the SHA-256
    that the card lists for them (so an edited manifest is not)."""
    listed = folder_card_checksums(job.folder) or {}
    trusted = {}
    for name in names:
        path = manifest_path(job.folder, name)
        try:
            if listed.get(name) != file_sha256(path):
                continue
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(manifest, dict) and manifest.get("inputs") == job.inputs[name] and shard_records(manifest):
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


def _recorded(job: _Build, plan: ConfigPlan, trusted: dict | None) -> dict[str, dict]:
    """Path -> record of every shard of ``plan`` written before: from its trusted manifest and the journal."""
    records = shard_records(trusted) if trusted else {}
    records.update(read_journal(job.folder, plan.config, job.key(plan.config)))
    return records


def _clear_stale(job: _Build, plan: ConfigPlan, recorded: dict[str, dict]) -> None:
    """Take down the config's old manifest (its records move to the journal) and delete the files of
    ``data/<config>/`` that the plan does not write: cogen's temporaries, and shards that a manifest,
    plan or journal lists. Any other file there is the user's: the build stops, naming it."""
    folder, store = job.folder, job.store
    path = manifest_path(folder, plan.config)
    wanted = {task.relpath for task in plan.tasks}
    listed = listed_shards(folder, plan.config)
    _refuse_unknown_files(job, [plan.config], wanted | listed)
    try:
        if path.exists():
            journaled = read_journal(folder, plan.config, job.key(plan.config))
            for relpath, record in recorded.items():
                if relpath not in journaled:
                    append_journal(folder, plan.config, job.key(plan.config), relpath, record)
            path.unlink()
            _publish_card(store)  # the card must not list a config that is being rewritten
        for relpath in sorted(store.files(plan.config) - wanted):
            store.remove(relpath)
    except OSError as error:
        raise BuildError(f"cannot update {folder}: {os_error_text(error)} ({error.filename})") from None


def _refuse_unknown_files(job: _Build, configs: list[str], known: set[str] | None = None) -> None:
    """Stop (naming it) at a file in ``data/<config>/`` that cogen will not delete: one whose name is not a
    shard's or a temporary's, or, given the ``known`` paths (wanted or listed), a shard that is not among them."""
    for config in configs:
        unknown = sorted(f for f in job.store.files(config) if not is_temporary(f.rpartition("/")[2]) and
                         (f not in known if known is not None else not SHARD_NAME.fullmatch(f.rpartition("/")[2])))
        if unknown:
            raise BuildError(f"{job.store.url}/{unknown[0]} is not a file cogen wrote (no manifest, plan or journal of "
                             f"the folder lists it), and cogen deletes only its own files: move it out of "
                             f"{DATA_DIR}/{config}/, then run the same command again")


def _write_shards(pool, plans: list[ConfigPlan], job: _Build, recorded: dict[str, dict[str, dict]],
                  elsewhere: bool = False) -> list[ShardResult]:
    """Run every shard task; each finished shard is journaled at once, so a stopped build keeps it.

    ``elsewhere``: the workers may not see the driver's disk. The driver then decides which
    shards to keep, and the workers return the bytes (a local folder) or upload them (a URL).
    """
    folder, store, progress, notify, tally = job.folder, job.store, job.progress, job.notify, job.tally
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
            append_journal(folder, task.config, job.key(task.config), result.relpath, result.record)
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


def _manifest(draft: dict, shards: dict[str, tuple[dict, dict]], job: _Build) -> dict:
    """The manifest of a config: its plan (``draft``) and every shard's record and statistics."""
    splits = {}
    config = draft["config"]
    for split, rows in draft["splits"].items():
        files = draft["files"][split]
        metadata = [job.store.metadata(f) for f in files]
        splits[split] = {
            "rows": rows,
            "files": files,
            "shards": {f: shards[f][0] for f in files},
            "num_bytes": sum(m.row_group(i).total_byte_size for m in metadata for i in range(m.num_row_groups)),
            "download_bytes": sum(shards[f][0]["bytes"] for f in files),
            "stats": _sum_stats(shards[f][1] for f in files),
            "regenerated": draft["regenerations"].get(split, []),
        }
        if sum(shards[f][0]["rows"] for f in files) != rows:
            raise BuildError(f"{config} {split}: the shards hold {sum(m.num_rows for m in metadata)} rows, "
                             f"expected {rows}; delete {job.store.url}/data/{config} and rebuild")
    inputs = job.inputs[config]
    return {"config": config, "manifest_format": MANIFEST_FORMAT, "fingerprint": draft["fingerprint"],
            "spec_file": Path(str(job.spec)).name, "packaged_spec": job.packaged_spec, **draft["info"], "versions": inputs["versions"],
            "rows_per_shard": job.rows_per_shard, **job.formats, "columns": draft["columns"], "splits": splits,
            "inputs": inputs}


def _sum_stats(stats_list) -> dict[str, int]:
    """Statistics summed over shards, by name in sorted order (so a resumed build, which reads some from
    shard footers, writes the manifest a clean build writes)."""
    total: dict[str, int] = {}
    for stats in stats_list:
        for name, count in stats.items():
            total[name] = total.get(name, 0) + count
    return dict(sorted(total.items()))


def _report(plan: ConfigPlan, results: list[ShardResult]) -> ConfigReport:
    return ConfigReport(plan.config, dict(plan.splits), written=sum(not r.skipped for r in results),
                        skipped=sum(r.skipped for r in results),
                        stats={s: _sum_stats(r.stats for r in results if r.split == s) for s in plan.splits},
                        rebuilt=[f"{r.relpath}: {r.rewritten}" for r in results if r.rewritten])
