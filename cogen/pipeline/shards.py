"""Shards: the unit of parallel work, written atomically and recognised on resume.

A shard file is ``data/<config>/<split>-XXXXX-of-YYYYY.parquet``. It is written under a hidden
temporary name and renamed into place when complete, so a file with the final name is always
whole. Its footer carries a ``cogen`` stamp (config fingerprint, split, row range). A resumed
build keeps a shard only when its stamp matches *and* its bytes match the SHA-256 recorded when it
was written (in the config's manifest, or the journal of an unfinished build); it rewrites any
other, saying why when the file was damaged or its record is lost.
"""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cogen.errors import BuildError, os_error_text
from cogen.family import DEFAULT_FAMILY, family
from cogen.folder import arrow_schema, file_sha256, shard_record, shard_relpath
from cogen.folder.atomic import atomic_write
from cogen.pipeline.parquet import PARQUET_FORMAT, read_stamp, write_parquet
from cogen.pipeline.stages import stage

__all__ = ["ConfigPlan", "ShardResult", "ShardTask", "encode_shard", "run_shard", "run_shard_elsewhere", "shard_ranges",
           "task_table", "write_bytes_atomic", "write_parquet_atomic"]

@dataclass(frozen=True, kw_only=True)
class ShardTask:
    """Everything a worker needs to write one shard (picklable, small), built by keyword.

    ``payload`` is the family's own description of the rows (e.g. the split's compiled domain
    and the sample indices); only the family's shard writer reads it.
    Shard ``index`` of ``count`` holds rows ``[start, stop)`` of ``split``.
    """

    family: str
    config: str
    split: str
    index: int
    count: int
    start: int
    stop: int
    fingerprint: str
    columns: tuple[tuple[str, str], ...]
    payload: Any = field(default=None, compare=False)
    #: The shard's finished file bytes and statistics, when the family's first pass already
    #: encoded exactly these rows (:func:`encode_shard`); :func:`run_shard` then writes them as they are.
    encoded: tuple[bytes, dict] | None = field(default=None, compare=False, repr=False)
    #: Content-defined chunking (``cogen build --parquet-cdc``): part of the stamp, so a resumed
    #: build never keeps a shard written with the other setting.
    cdc: bool = False
    #: A folder in the build's scratch where the family's first pass saved this shard's rows, for
    #: its shard writer to read back instead of generating them again (None: nothing saved).
    saved: str | None = field(default=None, compare=False)

    @classmethod
    def rows_of(cls, manifest: dict, split: str, start: int, stop: int, payload: Any) -> ShardTask:
        """A task for rows ``[start, stop)`` of ``split`` of a built config, described by its manifest
        (``cogen verify`` regenerates rows so, with :func:`task_table`)."""
        return cls(family=manifest.get("family", DEFAULT_FAMILY), config=manifest["config"], split=split, index=0,
                   count=1, start=start, stop=stop, fingerprint=manifest["fingerprint"],
                   columns=tuple(manifest["columns"].items()), payload=payload)

    def ids(self, start: int, count: int):
        """The ``id`` column (an Arrow ``string`` array) of rows ``start`` to ``start + count - 1`` of the
        task's split: ``{config}-{split}-{index}``, the one id rule of every family."""
        from cogen.pipeline.arrow import numbered_strings

        return numbered_strings(f"{self.config}-{self.split}-", start, count)

    @property
    def relpath(self) -> str:
        """Path of the shard inside the output folder."""
        return shard_relpath(self.config, self.split, self.index, self.count)

    def stamp(self) -> dict:
        """What the shard's footer records about how it was made."""
        return {"fingerprint": self.fingerprint, "config": self.config, "split": self.split,
                "start": self.start, "stop": self.stop, "parquet_format": PARQUET_FORMAT, "cdc": self.cdc}


@dataclass
class ConfigPlan:
    """One config ready to write: its shard tasks and what the manifest and card must record.

    ``regenerations`` lists, per split, the ``(index, retry)`` pairs that dedup regenerated, so
    ``cogen verify`` can regenerate any shard from the manifest alone.
    """

    config: str
    fingerprint: str
    columns: tuple[tuple[str, str], ...]
    splits: dict[str, int]
    tasks: list[ShardTask]
    info: dict
    regenerations: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    def with_cdc(self, cdc: bool) -> ConfigPlan:
        """This plan with content-defined chunking on (``cdc``) or as it is; a file the key pass
        encoded without it is dropped (the shard is written again, with it)."""
        if not cdc:
            return self
        return replace(self, tasks=[replace(task, cdc=True, encoded=None) for task in self.tasks])


@dataclass
class ShardResult:
    """What a worker reports back: rows written, statistics, time, whether it was skipped.

    ``record`` is the shard's record for the manifest (SHA-256, bytes, rows, row groups);
    ``rewritten`` says why an existing file with the shard's stamp was written again (or None);
    ``data`` holds the file's bytes when the worker returned them instead of writing them
    (:func:`run_shard_elsewhere`).
    """

    relpath: str
    config: str
    split: str
    rows: int
    stats: dict[str, int]
    seconds: float
    skipped: bool = False
    record: dict = field(default_factory=dict)
    rewritten: str | None = None
    data: bytes | None = field(default=None, repr=False)


def shard_ranges(n: int, rows_per_shard: int) -> list[tuple[int, int]]:
    """Split ``range(n)`` into consecutive ``(start, stop)`` ranges of at most ``rows_per_shard``."""
    count = max(1, -(-n // rows_per_shard))
    bounds = [round(i * n / count) for i in range(count + 1)]
    return [(bounds[i], bounds[i + 1]) for i in range(count)]


def encode_shard(task: ShardTask, tables: Iterator, stats: dict) -> bytes:
    """The bytes of ``task``'s shard file made of ``tables``: the same bytes :func:`run_shard` writes."""
    sink = io.BytesIO()
    write_parquet(sink, arrow_schema(dict(task.columns)), tables, task.stamp(), stats, cdc=task.cdc)
    return sink.getvalue()


def write_parquet_atomic(path: Path, schema, tables: Iterator, stamp: dict, stats: dict | None = None, *,
                         cdc: bool = False) -> int:
    """Write ``tables`` as one Parquet file at ``path`` via a temporary name; returns the row count.

    ``stats`` (filled while ``tables`` is consumed) is stored in the footer next to ``stamp``.
    """
    return atomic_write(path, lambda temporary: write_parquet(temporary, schema, tables, stamp, stats, cdc=cdc))


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write a finished file's bytes (from :func:`encode_shard`) at ``path`` via a temporary name."""
    atomic_write(path, lambda temporary: temporary.write_bytes(data))


def run_shard(task: ShardTask, folder: str, recorded: dict | None = None) -> ShardResult:
    """Write one shard into ``folder`` (worker entry point for every executor).

    An existing file is kept when its stamp is the task's and its bytes match ``recorded`` (the
    record written when it was made); otherwise it is rewritten, and ``rewritten`` says why.
    """
    start = time.perf_counter()
    path = Path(folder) / task.relpath
    rewritten = None
    if path.is_file():
        stamp, stats = read_stamp(path)
        if stamp == task.stamp():
            rewritten = _damage(path, recorded)
            if rewritten is None:
                return ShardResult(task.relpath, task.config, task.split, task.stop - task.start, stats, 0.0,
                                   skipped=True, record=dict(recorded))
    elif path.exists():
        raise BuildError(f"{path} is a folder where a shard file belongs; move it away and run the build again")
    if task.encoded is not None:
        encoded, stats = task.encoded
        with stage("file i/o"):
            write_bytes_atomic(path, encoded)
        rows = task.stop - task.start
    else:
        shard_tables = family(task.family).load("shard_writer")
        stats = {}
        rows = write_parquet_atomic(path, arrow_schema(dict(task.columns)), shard_tables(task, stats), task.stamp(),
                                    stats, cdc=task.cdc)
    try:
        with stage("file i/o"):
            record = shard_record(path)
    except OSError as error:
        raise BuildError(f"cannot read back {path}: {os_error_text(error)}") from None
    return ShardResult(task.relpath, task.config, task.split, rows, stats, time.perf_counter() - start,
                       record=record, rewritten=rewritten)


def _damage(path: Path, recorded: dict | None) -> str | None:
    """Why a shard file with the right stamp cannot be kept (None: keep it)."""
    if not recorded:
        return "no SHA-256 was recorded for it (its build was cut short before it was journaled)"
    try:
        if path.stat().st_size != recorded["bytes"] or file_sha256(path) != recorded["sha256"]:
            return "its bytes differ from the SHA-256 recorded when it was written"
    except OSError as error:
        return f"it cannot be read ({os_error_text(error)})"
    return None


def task_table(task: ShardTask):
    """The rows of ``task`` as one Arrow table, without writing them (``cogen verify`` regenerates shards so)."""
    import pyarrow as pa

    tables = list(family(task.family).load("shard_writer")(task, {}))
    schema = arrow_schema(dict(task.columns)).remove_metadata()
    return pa.concat_tables([t.cast(schema) for t in tables]) if tables else schema.empty_table()


def run_shard_elsewhere(task: ShardTask, url: str | None = None, storage_options: dict | None = None) -> ShardResult:
    """Make one shard in memory, for a worker that shares no disk with the driver.

    With ``url`` (an fsspec URL of the output folder, e.g. ``s3://bucket/c3``) the worker writes
    the file there itself; without, the bytes come back in :attr:`ShardResult.data` for the driver
    to write. The bytes are those :func:`run_shard` writes. Keeping finished shards on resume is
    the driver's job here (it alone sees the records).
    """
    from cogen.folder import buffer_record

    start = time.perf_counter()
    if task.encoded is not None:  # made by the key pass: the bytes the tables below would give
        data, stats = task.encoded
        rows = task.stop - task.start
    else:
        stats = {}
        sink = io.BytesIO()
        shard_tables = family(task.family).load("shard_writer")
        rows = write_parquet(sink, arrow_schema(dict(task.columns)), shard_tables(task, stats), task.stamp(), stats,
                             cdc=task.cdc)
        data = sink.getvalue()
    result = ShardResult(task.relpath, task.config, task.split, rows, stats, 0.0, record=buffer_record(data))
    if url is None:
        result.data = data
    else:
        from cogen.pipeline.stores import put_file

        put_file(f"{url.rstrip('/')}/{task.relpath}", data, storage_options)
    result.seconds = time.perf_counter() - start
    return result
