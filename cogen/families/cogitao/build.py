"""The COGITAO family: turn a :class:`~cogen.specs.Setting` into shard tasks and shard tables.

Building one experiment takes two passes over the same pure sample function:

1. *keys*: every sample's 128-bit (input grid, sequence) key, in parallel shards; the Parquet
   file of a shard that repeats none of its own keys is encoded on the way, and the rows of one
   that does are saved in the build's scratch folder when the workers share the driver's disk
   (up to :data:`ENCODED_ROWS` samples a build);
2. the driver plans regenerations so no key repeats anywhere in the experiment
   (:func:`cogen.pipeline.dedup.plan_retries`), then every shard with a regeneration (or not
   encoded in pass 1) is written to Parquet: from its saved rows with only the regenerated
   samples generated, or generated again whole when nothing was saved; the others are written
   from pass 1's bytes, which are the same bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import asdict, replace
from functools import lru_cache
from pathlib import Path

import numpy as np

from cogen.errors import GenerationError
from cogen.families.cogitao.generate.program import DEFAULT_MAX_ATTEMPTS
from cogen.families.cogitao.generate.sampler import (
    CAUSES,
    SplitJob,
    generate_rows,
    rejection_fix,
    rejection_text,
    require_ok,
)
from cogen.families.cogitao.schema import Experiment, Setting
from cogen.kit.build import (
    ROW_GROUP_ROWS,
    ConfigPlan,
    ShardTask,
    duplicates,
    encode_shard,
    keep_in_memory,
    kept_in_memory,
    plan_retries,
    shard_ranges,
    stage,
    task_table,
)

__all__ = ["COLUMNS", "FRAME_COLUMNS", "GENERATOR_VERSION", "IMAGE_COLUMNS", "OBJECT_FRAME_COLUMNS", "CogitaoBuilder",
           "columns",
           "regenerate_table", "shard_keys", "shard_keys_and_file", "shard_tables"]

#: Bump when the sampling algorithm changes what a (spec, seed, index) produces.
#: 2: degenerate samples rejected and difficulty balanced by default (``degenerate: keep`` with
#: ``balance: none`` gives version 1's rows).
GENERATOR_VERSION = 2
COLUMNS = (
    ("id", "string"),
    ("input", "list<list<int8>>"),
    ("output", "list<list<int8>>"),
    ("transformations", "list<string>"),
    ("n_objects", "int16"),
    ("object_ids", "list<int32>"),
    ("object_positions", "list<list<int16>>"),
)
#: Added by ``output: {frames: true}``: the input and the grid after each step, and each step's transformation.
FRAME_COLUMNS = (
    ("frames", "list<list<list<int8>>>"),
    ("actions", "list<string>"),
)
#: Added by ``output: {object_frames: true}`` (with ``actions``): per object (in ``object_ids`` order), per step
#: (0 = input, ..., depth = output), its box (row, col, height, width) and its tight array (0 = background, so the
#: object's mask is ``!= 0``). Two list columns, not one ``list<struct<...>>``: column types are nested lists of a
#: scalar (:mod:`cogen.folder.features`), which every ``datasets`` >= 4 loads as plain nested lists and the Hub's
#: viewer shows; ``object_boxes[i][t]`` and ``object_grids[i][t]`` are object ``i`` at step ``t``.
OBJECT_FRAME_COLUMNS = (
    ("object_boxes", "list<list<list<int16>>>"),
    ("object_grids", "list<list<list<list<int8>>>>"),
)
#: Added by ``render:``: ``input`` and ``output`` drawn as images (PNG or JPEG bytes, ``datasets.Image``).
IMAGE_COLUMNS = (
    ("input_image", "image"),
    ("output_image", "image"),
)
PILOT_SAMPLES = 32
#: The key pass also encodes the shard files of the first this many samples of a build (about
#: 50-100 bytes a sample) when a shard repeats none of its own keys: a shard that dedup then
#: leaves alone is written without sampling it again. Beyond it, shards are sampled twice and the
#: driver holds only keys.
ENCODED_ROWS = 2_000_000
#: Below this share of accepted attempts (measured on the pilot) a spec is called hopeless: 2,000
#: attempts per sample, a tenth of the per-sample budget (balanced difficulty makes the hard draws
#: of a split, e.g. four extended objects on G5-5's grids, cost what they cost).
MIN_ACCEPTANCE = 5e-4


@lru_cache(maxsize=1)
def _names_by_token() -> np.ndarray:
    from cogen.engine import TRANSFORMS

    names = np.array([""] * (max(t.token for t in TRANSFORMS.values()) + 1), dtype=object)
    for transform in TRANSFORMS.values():
        names[transform.token] = transform.name
    return names


def columns(experiment: Experiment) -> tuple[tuple[str, str], ...]:
    """The columns ``experiment``'s rows carry: :data:`COLUMNS`, plus :data:`FRAME_COLUMNS` when sequential
    (only ``actions`` of them for object frames alone), :data:`OBJECT_FRAME_COLUMNS` with object frames and
    :data:`IMAGE_COLUMNS` when rendered."""
    sequential = FRAME_COLUMNS if experiment.frames else FRAME_COLUMNS[1:] if experiment.object_frames else ()
    return COLUMNS + sequential + (OBJECT_FRAME_COLUMNS if experiment.object_frames else ()) + \
        (IMAGE_COLUMNS if experiment.render else ())


def _table(task: ShardTask, start: int, rows: dict):
    import pyarrow as pa

    from cogen.kit.arrow import grids_column, names_column, numpy_array, padded_rows_column, pairs_column

    names = _names_by_token()
    n = len(rows["ok"])
    counts = rows["n_objects"].astype(np.int64)
    table = pa.table({
        "id": task.ids(start, n),
        "input": grids_column(rows["inputs"], rows["sizes"]),
        "output": grids_column(rows["outputs"], rows["sizes"]),
        "transformations": names_column(rows["sequences"].astype(np.int64), names),
        "n_objects": numpy_array(rows["n_objects"], pa.int16()),
        "object_ids": padded_rows_column(rows["object_ids"], counts, pa.int32()),
        "object_positions": pairs_column(rows["positions"], counts, pa.int16()),
    })
    job: SplitJob = task.payload
    if job.frames or job.object_frames:
        from cogen.families.cogitao.frames import frames_column, object_frames_columns

        sequences = rows["sequences"].astype(np.int64)
        depths = (sequences >= 0).sum(axis=1)
        if job.frames:
            table = table.append_column("frames", frames_column(rows["frames"], rows["sizes"], depths))
        table = table.append_column("actions", names_column(sequences, names))
        if job.object_frames:
            boxes, grids = object_frames_columns(rows["object_boxes"], rows["object_cells"], counts, depths)
            table = table.append_column("object_boxes", boxes).append_column("object_grids", grids)
    if task.payload.render is not None:
        for name in ("input", "output"):
            ids = task.ids(start, n).to_pylist()
            table = table.append_column(f"{name}_image", _images(rows[f"{name}s"], rows["sizes"], ids, name,
                                                                 task.payload.render))
    return table


def _images(grids: np.ndarray, sizes: np.ndarray, ids: list[str], name: str, settings):
    """``struct<bytes, path>`` (``datasets.Image``'s storage) of the grids drawn under ``settings``."""
    import pyarrow as pa

    from cogen.render import FORMATS, encode_grids

    suffix = FORMATS[settings.format]
    return pa.StructArray.from_arrays([pa.array(encode_grids(grids, sizes.astype(np.int64), settings), pa.binary()),
                                       pa.array([f"{i}_{name}.{suffix}" for i in ids], pa.string())],
                                      names=["bytes", "path"])


def _row_group(task: ShardTask, start: int, rows: dict, retries: np.ndarray, stats: dict[str, int]):
    """The Arrow table of one row group's ``rows``; adds their statistics to ``stats``."""
    require_ok(rows, task.config, task.split, start)
    counts = dict(zip(CAUSES, rows["causes"].sum(axis=0).tolist(), strict=True))
    counts["regenerated"] = int(np.count_nonzero(retries))
    counts["noops"] = int(np.count_nonzero(rows["noop"]))
    counts["size_redraws"] = int(rows["size_redraws"].sum())
    for name, count in counts.items():
        stats[name] = stats.get(name, 0) + count
    with stage("arrow conversion"):
        return _table(task, start, rows)


def shard_tables(task: ShardTask, stats: dict[str, int]) -> Iterator:
    """Arrow tables (one per row group) of a COGITAO shard; fills ``stats`` with rejection counts,
    regenerations, ``noops`` (samples whose first valid attempt left the grid unchanged) and
    ``size_redraws`` (see :mod:`cogen.folder.stats`). Rows the key pass saved (``task.saved``) are
    read back, and only the samples dedup regenerated are generated."""
    job: SplitJob = task.payload
    for start in range(task.start, task.stop, ROW_GROUP_ROWS):
        stop = min(start + ROW_GROUP_ROWS, task.stop)
        retries = job.retries_between(start, stop)
        with stage("sampling"):
            rows = _rows(job, _saved_rows(task.saved, start, stop - start), start, stop, retries)
        yield _row_group(task, start, rows, retries, stats)


def _rows(job: SplitJob, saved: dict | None, start: int, stop: int, retries: np.ndarray) -> dict:
    """Rows ``[start, stop)`` at ``retries``: ``saved`` (the same rows at retry 0) with the regenerated
    samples generated again, or all generated when nothing was saved. A sample is a pure function
    of (job, index, retry), so both give the same rows."""
    if saved is None:
        return generate_rows(job, np.arange(start, stop), retries)
    changed = np.flatnonzero(retries)
    if changed.size:
        fresh = generate_rows(job, start + changed, retries[changed])
        for name, values in saved.items():
            if values.ndim and len(values) == stop - start:  # a row per sample (not the offsets of object cells)
                values[changed] = fresh[name]
    return saved


def _save_rows(folder: str, groups: list[tuple[int, dict]]) -> str | None:
    """Save a shard's key-pass rows in ``folder`` (written whole or not at all); returns ``folder``,
    or None when it could not be written (the shard is then generated again). A row group is one
    file of ``.npy`` arrays one after the other: the names, then each array (no pickles). A build that
    runs in the driver's process keeps them in memory instead, within a bound (:func:`cogen.kit.build.keep_in_memory`)."""
    from cogen.errors import BuildError
    from cogen.kit.build import atomic_write

    if keep_in_memory(folder, dict(groups), sum(array.nbytes for _, rows in groups for array in rows.values())):
        return folder

    def write(temporary: Path) -> None:
        temporary.mkdir()
        for start, rows in groups:
            with open(temporary / f"{start}.npy", "wb") as out:
                np.save(out, np.array(sorted(rows)))
                for name in sorted(rows):
                    np.save(out, rows[name], allow_pickle=False)

    try:
        with stage("file i/o"):
            atomic_write(folder, write)
    except BuildError:
        return None
    return folder


def _saved_rows(folder: str | None, start: int, count: int) -> dict | None:
    """The rows of the row group at ``start`` that the key pass saved in ``folder`` (None: none, or unreadable)."""
    if folder is None:
        return None
    groups = kept_in_memory(folder)
    if isinstance(groups, dict):  # held in memory: handed over once (the second pass fills in regenerated rows)
        rows = groups.pop(start, None)
        return rows if rows is not None and len(rows.get("ok", ())) == count else None
    try:
        with stage("file i/o"), open(Path(folder) / f"{start}.npy", "rb") as source:
            names = np.load(source, allow_pickle=False)
            rows = {str(name): np.load(source, allow_pickle=False) for name in names.tolist()}
    except (OSError, ValueError, EOFError, TypeError):
        return None
    return rows if len(rows.get("ok", ())) == count else None


def _first_pass(task: ShardTask, frames: bool = True) -> Iterator[tuple[int, dict]]:
    """``(start, rows)`` of each row group of a shard at retry 0 (``frames=False``: without the
    frames and object frames a sequential spec records, when only the keys are wanted)."""
    job: SplitJob = task.payload if frames else replace(task.payload, frames=False, object_frames=False)
    for start in range(task.start, task.stop, ROW_GROUP_ROWS):
        with stage("key pass"):
            rows = generate_rows(job, np.arange(start, min(start + ROW_GROUP_ROWS, task.stop)))
        require_ok(rows, task.config, task.split, start)
        yield start, rows


def shard_keys(task: ShardTask) -> np.ndarray:
    """Keys of a shard's samples at retry 0 (first build pass)."""
    parts = [rows["keys"] for _, rows in _first_pass(task, frames=False)]  # keys only: no frames to record
    return np.concatenate(parts) if parts else np.zeros((0, 2), np.uint64)


def shard_keys_and_file(task: ShardTask, encode: bool,
                        save: str | None = None) -> tuple[np.ndarray, tuple[bytes, dict] | None, str | None]:
    """Keys of a shard's samples at retry 0 (first build pass), its finished file and where its rows
    were saved.

    With ``encode``, a shard that repeats none of its own keys is encoded (bytes and statistics, as
    the file is when dedup regenerates none of its samples). A shard that repeats a key will have
    samples regenerated: with ``save`` (a folder in the build's scratch), its rows are saved there
    instead, so the second pass generates only the regenerated samples (:func:`shard_tables`).
    Object frames (a flat column of cells) are not saved: such a shard is generated again.
    """
    if not encode:
        return shard_keys(task), None, None
    groups = list(_first_pass(task))  # a shard's rows, held until its keys are known (rows_per_shard bounds them)
    keys = np.concatenate([rows["keys"] for _, rows in groups]) if groups else np.zeros((0, 2), np.uint64)
    if duplicates([keys]):
        kept = save is not None and not task.payload.object_frames
        return keys, None, _save_rows(save, groups) if kept else None
    stats: dict[str, int] = {}
    tables = (_row_group(task, start, rows, np.zeros(len(rows["ok"]), np.int64), stats) for start, rows in groups)
    try:
        return keys, (encode_shard(task, tables, stats), stats), None
    except OSError:  # the second pass writes the shard, and says what went wrong if it happens again
        return keys, None, None


class CogitaoBuilder:
    """Plans the shards of every experiment of a COGITAO setting."""

    family = "cogitao"

    def __init__(self, setting: Setting, rows_per_shard: int = 50_000, max_attempts: int = DEFAULT_MAX_ATTEMPTS):
        self.setting, self.rows_per_shard, self.max_attempts = setting, rows_per_shard, max_attempts

    @classmethod
    def settings_from_manifests(cls, manifests: list[dict]) -> list[Setting]:
        """The settings the built experiments of ``manifests`` came from: one per spec setting, version,
        seed and variant, holding those experiments (``cogen verify --regenerate`` rebuilds them)."""
        from cogen.families.cogitao.schema import experiment_from_dict

        groups: dict[tuple, list[dict]] = {}
        for manifest in manifests:
            key = (manifest["setting"], manifest["version"], manifest["seed"], manifest.get("variant", "custom"))
            groups.setdefault(key, []).append(manifest)
        return [Setting(name=name, family=cls.family, version=version, seed=seed, variant=variant, source="manifests",
                        experiments=tuple(experiment_from_dict(m["spec"]) for m in group))
                for (name, version, seed, variant), group in groups.items()]

    def config_names(self) -> list[str]:
        """Names of the configs this build writes."""
        return [e.name for e in self.setting.experiments]

    def rows(self) -> int:
        """Rows the build writes, all experiments and splits together."""
        return self.key_rows()

    def split_sizes(self, experiment: Experiment) -> dict[str, int]:
        """Rows of each split of ``experiment``, as its spec sets them."""
        return dict(experiment.sizes)

    def key_rows(self) -> int:
        """Samples the key pass of :meth:`prepare` visits (for progress bars)."""
        return sum(n for experiment in self.setting.experiments for _, n in experiment.sizes)

    def job(self, experiment: Experiment, split: str) -> SplitJob:
        """The payload of ``split`` of ``experiment`` (no regenerations yet)."""
        return SplitJob.of(experiment.domain(split), self.setting.seed, experiment.name, split, self.max_attempts,
                           frames=experiment.frames, render=experiment.render, object_frames=experiment.object_frames)

    def fingerprints(self) -> dict[str, str]:
        """Experiment name -> :meth:`fingerprint`, in spec order."""
        return {e.name: self.fingerprint(e) for e in self.setting.experiments}

    def fingerprint(self, experiment: Experiment) -> str:
        """Identity of everything that decides the experiment's bytes."""
        from cogen.bank import load_bank

        parts = (self.setting.fingerprint(experiment), str(GENERATOR_VERSION), load_bank().sha256)
        return hashlib.sha256("|".join(parts).encode()).hexdigest()

    def pilot(self) -> None:
        """Fail fast, with rejection counts, on a split whose acceptance rate is hopeless (and on
        renderings without Pillow to encode them)."""
        from cogen.errors import optional_import

        rendered = [e.name for e in self.setting.experiments if e.render is not None]
        if rendered:
            optional_import("PIL.Image", f"{', '.join(rendered)}: `render:` (or drop it)")
        for experiment in self.setting.experiments:
            for split in experiment.splits():
                rows = generate_rows(self.job(experiment, split), np.arange(min(PILOT_SAMPLES, experiment.size(split))))
                require_ok(rows, experiment.name, split, 0)
                causes = rows["causes"].sum(axis=0)
                if causes[0] < MIN_ACCEPTANCE * causes.sum():
                    raise GenerationError(f"{experiment.name} {split}: acceptance rate {causes[0] / causes.sum():.2g} is "
                                          f"hopeless ({rejection_text(causes)}); {rejection_fix(causes)}")

    def _tasks(self, experiment: Experiment, fingerprint: str, plans: dict[str, dict[int, int]] | None,
               encoded: dict[str, tuple[bytes, dict] | None] | None = None,
               saved: dict[str, str | None] | None = None) -> list[ShardTask]:
        """Shard tasks of ``experiment``; a shard that dedup leaves alone takes its file from ``encoded``
        (path -> the key pass's file), which holds exactly its rows; one whose rows the key pass saved
        reads them from ``saved`` (path -> folder)."""
        tasks = []
        for split in experiment.splits():
            job = self.job(experiment, split)
            if plans is not None:
                job = replace(job, retries=tuple(sorted(plans[split].items())))
            ranges = shard_ranges(experiment.size(split), self.rows_per_shard)
            for index, (start, stop) in enumerate(ranges):
                task = ShardTask(family=self.family, config=experiment.name, split=split, index=index,
                                 count=len(ranges), start=start, stop=stop, fingerprint=fingerprint,
                                 columns=columns(experiment), payload=job)
                file = (encoded or {}).get(task.relpath)
                if file is not None and not job.retries_between(start, stop).any():
                    task = replace(task, encoded=file)
                task = replace(task, saved=(saved or {}).get(task.relpath))
                tasks.append(task)
        return tasks

    def prepare(self, executor, progress=None, scratch=None) -> list[ConfigPlan]:
        """Key pass over every shard (in parallel), then a regeneration plan per experiment. With
        ``scratch``, the key pass saves there the rows of shards that dedup will partly regenerate."""
        experiments = self.setting.experiments
        fingerprints = {e.name: self.fingerprint(e) for e in experiments}
        key_tasks = [t for e in experiments for t in self._tasks(e, fingerprints[e.name], None)]
        held = np.cumsum([t.stop - t.start for t in key_tasks])
        encode = [bool(rows <= ENCODED_ROWS) for rows in held]
        folders = [None if scratch is None else _rows_folder(scratch, t) for t in key_tasks]
        keys, encoded, saved = {}, {}, {}
        for task, (task_keys, file, folder) in zip(key_tasks, executor.map(shard_keys_and_file, key_tasks, encode,
                                                                             folders), strict=True):
            keys.setdefault((task.config, task.split), []).append(task_keys)
            encoded[task.relpath], saved[task.relpath] = file, folder
            if progress:
                progress(task.stop - task.start)
        plans = []
        for experiment in experiments:
            splits = experiment.splits()
            per_split = [np.concatenate(keys[(experiment.name, s)]) for s in splits]

            def rekey(part, indices, retries, experiment=experiment, splits=splits):
                rows = generate_rows(self.job(experiment, splits[part]), indices, retries)
                if not rows["ok"].all():
                    first = int(np.flatnonzero(~rows["ok"])[0])
                    require_ok({k: v[first:first + 1] for k, v in rows.items()}, experiment.name, splits[part],
                               int(indices[first]))
                return rows["keys"]

            with stage("dedup plan"):
                retry_plans = dict(zip(splits, plan_retries(per_split, rekey), strict=True))
            plans.append(ConfigPlan(experiment.name, fingerprints[experiment.name], columns(experiment),
                                    {s: experiment.size(s) for s in splits},
                                    self._tasks(experiment, fingerprints[experiment.name], retry_plans, encoded,
                                                saved),
                                    self.info(experiment),
                                    {s: sorted(retry_plans[s].items()) for s in splits}))
        return plans

    def info(self, experiment: Experiment) -> dict:
        """What the manifest and the dataset card say about the experiment."""
        from cogen.bank import load_bank

        return {"family": self.family, "setting": self.setting.name, "variant": self.setting.variant,
                "version": self.setting.version, "seed": self.setting.seed,
                "description": experiment.description or self.setting.description,
                "generator_version": GENERATOR_VERSION, "bank_sha256": load_bank().sha256, "spec": asdict(experiment)}


def _rows_folder(scratch, task: ShardTask) -> str:
    """Where the key pass saves ``task``'s rows: a folder of the build's scratch named by a digest of the shard's path."""
    return str(Path(scratch) / "cogitao-rows" / hashlib.sha256(task.relpath.encode()).hexdigest()[:20])


def regenerate_table(manifest: dict, split: str, start: int, stop: int):
    """Rows ``[start, stop)`` of ``split`` of a built config, regenerated from its manifest alone."""
    from cogen.families.cogitao.schema import experiment_from_dict

    experiment = experiment_from_dict(manifest["spec"])
    job = replace(SplitJob.of(experiment.domain(split), manifest["seed"], experiment.name, split,
                              frames=experiment.frames, render=experiment.render,
                              object_frames=experiment.object_frames),
                  retries=tuple(map(tuple, manifest["splits"][split].get("regenerated", []))))
    return task_table(ShardTask.rows_of(manifest, split, start, stop, job))
