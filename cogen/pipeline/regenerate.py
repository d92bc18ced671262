"""``cogen verify --regenerate``: rebuild every shard in memory and compare it, row for row, with the stored one.

A build is a pure function of its spec, seed and versions, so the strongest check of a folder is
to build it again and compare: no re-signed hash, edited count or consistent forgery of manifest
and card survives it (as ``restic check --read-data`` or ``borg check --verify-data`` for backups).
For every config, from its manifest alone:

1. the family rebuilds the setting (:meth:`~cogen.families.Builder.settings_from_manifests`); its
   fingerprint must be the manifest's (same spec, seed, generator version, object bank);
2. :meth:`~cogen.families.Builder.prepare` plans it again, key pass and dedup included, so the
   split sizes, file list, regenerated samples and what the manifest says of the config are
   compared with a fresh plan (rows dropped with their counts "fixed" are caught here);
3. every shard is generated again in the workers, one row group at a time, and encoded as a build
   encodes it. When this environment has the versions the manifest records, a fresh file with the
   stored file's SHA-256 is equal in every byte (rows, ids, order, footer stamp and statistics);
   any other shard, or every shard under other versions, is generated again and compared with the
   stored rows (every row, id and order; the first differing rows are reported), its footer stamp
   and statistics.

The installed object bank is compared with the bank ``cogen objects build`` makes
(:func:`cogen.bank.check_rebuilt`). It costs about what the build cost.
"""

from __future__ import annotations

import hashlib
import io
import json
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from cogen.errors import CogenError
from cogen.family import family
from cogen.folder import arrow_schema, environment_versions, file_sha256
from cogen.pipeline.check import Check
from cogen.pipeline.executors import make_executor
from cogen.pipeline.parquet import read_stamp, write_parquet
from cogen.pipeline.shards import ConfigPlan, ShardTask

__all__ = ["ShardComparison", "compare_shard", "regenerate_checks", "settings_by_spec"]

#: Differing rows reported per shard.
SHOWN_ROWS = 3
#: progress(phase, advance, total), as :mod:`cogen.pipeline.verify` calls it; phase "regenerate" counts rows.
Progress = Callable[[str, int, int], None]


@dataclass
class ShardComparison:
    """What a worker found comparing one regenerated shard with the stored file."""

    relpath: str
    rows: int = 0
    problems: list[str] = field(default_factory=list)
    sha256: str | None = None
    stats: dict[str, int] = field(default_factory=dict)


def settings_by_spec(manifests: list[dict], from_dict: Callable[[dict], object]) -> list:
    """One setting per distinct ``spec`` of ``manifests`` (``from_dict(spec)``), restricted to their configs."""
    groups: dict[str, tuple[dict, list[str]]] = {}
    for manifest in manifests:  # grouped by content; each setting made from its spec as written (order matters)
        key = json.dumps(manifest["spec"], sort_keys=True)
        groups.setdefault(key, (manifest["spec"], []))[1].append(manifest["config"])
    return [from_dict(spec).only(names) for spec, names in groups.values()]


def regenerate_checks(folder: Path, manifests: dict[str, dict], workers: int = 1,
                      progress: Progress | None = None) -> list[Check]:
    """The ``regenerated`` check of every config of ``folder`` and, when a config was built on the object
    bank, the ``object bank`` check (see the module docstring)."""
    checks = []
    if any("bank_sha256" in manifest for manifest in manifests.values()):
        checks.append(_bank_check())
    if progress:
        progress("regenerate", 0, sum(info["rows"] for m in manifests.values() for info in m["splits"].values()))
    results: dict[str, Check] = {}
    with make_executor("local", workers) as pool, tempfile.TemporaryDirectory(prefix="cogen-regenerate-") as scratch:
        for group, rows_per_shard in _groups(manifests):
            results.update(_regenerate_group(folder, group, rows_per_shard, pool, Path(scratch), progress))
    return checks + [results[name] for name in manifests]


def _bank_check() -> Check:
    from cogen.bank import check_rebuilt

    try:
        problem = check_rebuilt()
    except CogenError as error:
        problem = str(error)
    return Check("", "object bank", problem is None,
                 problem or "the installed bank is the one `cogen objects build` makes, byte for byte")


def _groups(manifests: dict[str, dict]) -> Iterator[tuple[list[dict], int]]:
    """Manifests by family and rows per shard (each group is rebuilt by one builder class)."""
    groups: dict[tuple, list[dict]] = {}
    for manifest in manifests.values():
        groups.setdefault((manifest.get("family"), manifest.get("rows_per_shard")), []).append(manifest)
    for (_, rows_per_shard), group in groups.items():
        yield group, rows_per_shard


def _regenerate_group(folder: Path, manifests: list[dict], rows_per_shard, pool, scratch: Path,
                      progress: Progress | None) -> dict[str, Check]:
    names = [m["config"] for m in manifests]
    try:
        record = family(manifests[0].get("family"))
        settings = record.load("builder").settings_from_manifests(manifests)
        builders = [record.make_builder(setting, int(rows_per_shard)) for setting in settings]
    except (CogenError, KeyError, TypeError, ValueError, AttributeError) as error:
        return {name: _failed(name, f"the manifest does not describe a build cogen can make again ({_reason(error)})")
                for name in names}
    by_name = {m["config"]: m for m in manifests}
    results = {}
    for builder in builders:
        try:
            results.update(_regenerate_builder(folder, builder, by_name, pool, scratch, progress))
        except CogenError as error:  # e.g. an installed object bank that cannot be read
            results.update({name: _failed(name, f"cannot be built again: {error}")
                            for name in builder.config_names() if name not in results})
    return results


def _regenerate_builder(folder: Path, builder, manifests: dict[str, dict], pool, scratch: Path,
                        progress: Progress | None) -> dict[str, Check]:
    names = builder.config_names()
    held = sum(info.get("rows", 0) for name in names for info in manifests[name]["splits"].values())
    if builder.rows() > 2 * held + 10_000:  # a hostile manifest must not make verify build without end
        return {name: _failed(name, f"the spec in its manifest makes {builder.rows():,} rows, the folder holds "
                                    f"{held:,}: the manifest was changed, so it is not rebuilt") for name in names}
    results, good = {}, []
    for name, fingerprint in builder.fingerprints().items():
        recorded = manifests[name].get("fingerprint")
        if fingerprint != recorded:
            results[name] = _failed(name, f"the spec, seed, generator version and object bank in its manifest give the "
                                          f"fingerprint {fingerprint[:12]}..., the manifest records {str(recorded)[:12]}... "
                                          "(the manifest or the installed object bank was changed)")
        else:
            good.append(name)
    if good:
        if len(good) < len(results) + len(good):
            builder = family(builder.family).make_builder(builder.setting.only(good), builder.rows_per_shard)
        try:
            plans = [plan.with_cdc(bool(manifests[plan.config].get("parquet_cdc", False)))
                     for plan in builder.prepare(pool, scratch=scratch)]
        except CogenError as error:
            return {**results, **{name: _failed(name, f"cannot be planned again: {error}") for name in good}}
        for plan in plans:
            results[plan.config] = _compare_config(folder, plan, manifests[plan.config], pool, progress)
    return results


def _compare_config(folder: Path, plan: ConfigPlan, manifest: dict, pool, progress: Progress | None) -> Check:
    problems = _plan_problems(plan, manifest)
    records = {f: r for info in manifest["splits"].values() for f, r in info.get("shards", {}).items()}
    same_versions = manifest.get("versions") == environment_versions()
    futures = [pool.submit(compare_shard, task, str(folder), records.get(task.relpath), same_versions)
               for task in plan.tasks if not problems]
    comparisons = []
    for future in futures:
        comparison = future.result()
        comparisons.append(comparison)
        problems += comparison.problems
        if progress:
            progress("regenerate", comparison.rows, 0)
    problems += _stats_problems(plan, manifest, comparisons)
    if problems:
        shown = "; ".join(problems[:6]) + (f"; and {len(problems) - 6} more" if len(problems) > 6 else "")
        return _failed(plan.config, shown)
    rows = sum(c.rows for c in comparisons)
    how = "files byte-identical" if same_versions else \
        "bytes not compared (the manifest records other library versions than this environment's)"
    return Check(plan.config, "regenerated", True, f"{len(comparisons)} shards, {rows:,} rows rebuilt from the spec: "
                                                   f"every row, id and order equal; {how}")


def _plan_problems(plan: ConfigPlan, manifest: dict) -> list[str]:
    """What the manifest says that a fresh plan of its spec does not."""
    splits = manifest.get("splits", {})
    problems = []
    recorded_rows = {s: info.get("rows") for s, info in splits.items()}
    if recorded_rows != dict(plan.splits):
        problems.append(f"the spec makes splits of {_sizes(plan.splits)} rows, the manifest records "
                        f"{_sizes(recorded_rows)}")
    files = {s: [t.relpath for t in plan.tasks if t.split == s] for s in plan.splits}
    if {s: info.get("files") for s, info in splits.items()} != files:
        problems.append("the manifest lists other shard files than a fresh build writes")
    regenerated = {s: [list(p) for p in plan.regenerations.get(s, [])] for s in plan.splits}
    if {s: info.get("regenerated", []) for s, info in splits.items()} != regenerated:
        problems.append("the manifest lists other regenerated samples than a fresh dedup plan")
    if manifest.get("columns") != dict(plan.columns):
        problems.append("the manifest lists other columns than the spec makes")
    info = json.loads(json.dumps(plan.info))
    problems += [f"manifest field {key!r} differs from a fresh build's" for key in info
                 if key != "description" and manifest.get(key) != info[key]]
    return problems


def _sizes(splits: dict) -> str:
    return ", ".join(f"{split} {rows}" for split, rows in splits.items())


def _stats_problems(plan: ConfigPlan, manifest: dict, comparisons: list[ShardComparison]) -> list[str]:
    if not comparisons:
        return []
    problems = []
    for split in plan.splits:
        fresh: dict[str, int] = {}
        for comparison in comparisons:
            if comparison.relpath.split("/")[-1].startswith(f"{split}-"):
                for name, count in comparison.stats.items():
                    fresh[name] = fresh.get(name, 0) + count
        if manifest["splits"].get(split, {}).get("stats") != dict(sorted(fresh.items())):
            problems.append(f"the manifest's statistics of {split} differ from a fresh build's")
    return problems


def _failed(config: str, detail: str) -> Check:
    return Check(config, "regenerated", False, detail)


def _reason(error: BaseException) -> str:
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {text[:200]}" if text else type(error).__name__


def compare_shard(task: ShardTask, folder: str, record: dict | None, compare_bytes: bool) -> ShardComparison:
    """Generate ``task``'s shard again and compare it with the stored file (worker entry point)."""
    comparison = ShardComparison(task.relpath)
    path = Path(folder) / task.relpath
    try:
        if compare_bytes:  # the same versions: a fresh file with the stored file's SHA-256 is equal in every byte
            fresh = _fresh_sha256(task, comparison)
            if fresh == file_sha256(path):
                comparison.sha256 = fresh
                return comparison
            comparison.rows, comparison.stats = 0, {}  # not equal: find out where, row by row
        stored = _StoredRows(path)
        comparison.sha256 = _regenerate(task, stored, comparison)
        if stored.remaining():
            comparison.problems.append(f"{task.relpath}: {stored.remaining()} rows more than a fresh build writes")
    except Exception as error:  # a damaged file or an impossible task is a finding, never a traceback
        comparison.problems.append(f"{task.relpath}: {_reason(error)}")
        return comparison
    stamp, stats = read_stamp(path)
    if stamp != task.stamp():
        comparison.problems.append(f"{task.relpath}: its footer stamp is not a fresh build's")
    if stats != comparison.stats:
        comparison.problems.append(f"{task.relpath}: its footer statistics are not a fresh build's")
    if compare_bytes and not comparison.problems and record and comparison.sha256 != record.get("sha256"):
        comparison.problems.append(f"{task.relpath}: its bytes differ from a fresh build's although every row is "
                                   "equal (footer or encoding changed)")
    return comparison


def _fresh_sha256(task: ShardTask, comparison: ShardComparison) -> str:
    """The SHA-256 of ``task``'s file made again (encoded into a hash, never held), as a build makes it."""

    comparison.rows = task.stop - task.start
    if task.encoded is not None:
        data, stats = task.encoded
        comparison.stats = dict(stats)
        return hashlib.sha256(data).hexdigest()
    sink = _HashSink()
    tables = family(task.family).load("shard_writer")(task, comparison.stats)
    write_parquet(sink, arrow_schema(dict(task.columns)), tables, task.stamp(), comparison.stats, cdc=task.cdc)
    return sink.hexdigest()


def _regenerate(task: ShardTask, stored: _StoredRows, comparison: ShardComparison) -> str:
    """Make ``task``'s file again, one row group at a time, comparing each with the stored rows as it
    goes; returns the fresh file's SHA-256 (the file itself is only hashed, never held)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if task.encoded is not None:  # the key pass made the file: its bytes are the fresh file
        data, stats = task.encoded
        comparison.stats = dict(stats)
        parquet = pq.ParquetFile(pa.BufferReader(data))
        for group in range(parquet.num_row_groups):
            _compare_rows(parquet.read_row_group(group), stored, task, comparison)
        return hashlib.sha256(data).hexdigest()
    sink = _HashSink()
    tables = family(task.family).load("shard_writer")(task, comparison.stats)
    write_parquet(sink, arrow_schema(dict(task.columns)), _compared(tables, stored, task, comparison), task.stamp(),
                  comparison.stats, cdc=task.cdc)
    return sink.hexdigest()


def _compared(tables, stored: _StoredRows, task: ShardTask, comparison: ShardComparison) -> Iterator:
    for table in tables:
        _compare_rows(table, stored, task, comparison)
        yield table


def _compare_rows(table, stored: _StoredRows, task: ShardTask, comparison: ShardComparison) -> None:
    """Compare the fresh ``table`` with as many next stored rows; note the first rows that differ."""
    schema = arrow_schema(dict(task.columns)).remove_metadata()
    start = comparison.rows
    comparison.rows += table.num_rows
    fresh = table.replace_schema_metadata(None).cast(schema)
    old = stored.take(table.num_rows)
    if old is None or old.num_rows < fresh.num_rows:
        have = 0 if old is None else old.num_rows
        comparison.problems.append(f"{task.relpath}: {fresh.num_rows - have} rows fewer than a fresh build writes "
                                   f"(from row {start + have})")
        return
    old = old.cast(schema)
    if fresh.equals(old) or len(comparison.problems) >= SHOWN_ROWS:
        return
    comparison.problems += _differing_rows(fresh, old, start, task.relpath)[:SHOWN_ROWS - len(comparison.problems)]


def _differing_rows(fresh, old, start: int, relpath: str) -> list[str]:
    """``row N (id X): columns a, b differ`` for the rows of two equal-length tables that differ."""
    columns = fresh.column_names
    fresh_rows, old_rows = fresh.to_pylist(), old.to_pylist()
    found = []
    for i, (new, was) in enumerate(zip(fresh_rows, old_rows, strict=True)):
        if new != was:
            names = [c for c in columns if new[c] != was[c]]
            shown = str(was.get("id", ""))[:60]
            found.append(f"{relpath}: row {start + i} (id {shown!r} in the folder) differs from a fresh build's "
                         f"in {', '.join(names)}")
            if len(found) >= SHOWN_ROWS:
                break
    return found


class _HashSink(io.RawIOBase):
    """A writable binary file that only hashes what is written to it (a shard's bytes, never held)."""

    def __init__(self):
        super().__init__()
        self.digest, self.size = hashlib.sha256(), 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.digest.update(data)
        self.size += len(data)
        return len(data)

    def tell(self) -> int:
        return self.size

    def hexdigest(self) -> str:
        return self.digest.hexdigest()


class _StoredRows:
    """The rows of a stored shard, handed out in consecutive slices, one row group read at a time."""

    def __init__(self, path: Path):
        import pyarrow.parquet as pq

        self.file = pq.ParquetFile(path)
        self.group, self.buffer = 0, None

    def take(self, count: int):
        """The next ``count`` rows (fewer at the end of the file)."""
        import pyarrow as pa

        parts, needed = [], count
        while needed:
            if self.buffer is None or self.buffer.num_rows == 0:
                if self.group >= self.file.num_row_groups:
                    break
                self.buffer = self.file.read_row_group(self.group).replace_schema_metadata(None)
                self.group += 1
            part = self.buffer.slice(0, needed)
            self.buffer = self.buffer.slice(part.num_rows)
            parts.append(part)
            needed -= part.num_rows
        return pa.concat_tables(parts) if parts else None

    def remaining(self) -> int:
        rest = self.buffer.num_rows if self.buffer is not None else 0
        return rest + sum(self.file.metadata.row_group(i).num_rows for i in range(self.group, self.file.num_row_groups))
