"""The shard file format: how every shard is encoded as Parquet, and the stamp in its footer.

One module owns the format so that every writer (a worker's shard, the key pass's encoded file, a
shard made in memory for a remote store) gives the same bytes, and every reader agrees on the
stamp: :func:`write_parquet`, row groups of :func:`row_group_rows`, and :func:`read_stamp`.
:data:`PARQUET_FORMAT` names the encoding.

Grids stay ``list<list<int8>>``; what is chosen by measurement is the library that encodes them
(``benchmarks/bench_build.py writer``). polars' Rust writer encodes the nested grid columns 2.5x
faster than pyarrow's with the same size, so it writes every shard whose first row group holds
at least :data:`POLARS_MIN_ROWS` rows. Smaller shards, where importing polars (a quarter of a
CPU-second) would cost more than it saves, and every shard of a build with content-defined
chunking (which only pyarrow writes) go through pyarrow. Both give files that every reader
sees alike: the same Arrow schema (``list``, not polars' ``large_list``, and ``string``), the
same key-value metadata (the stamp, the statistics, the features ``datasets`` reads), row groups
of the same sizes, and an offset index (the page index ``datasets`` writes); neither writes
statistics or dictionaries. The bytes are a pure function of the rows and the library versions
(recorded in every manifest), whatever the number of workers or polars threads.
"""

from __future__ import annotations

import base64
import functools
import io
import itertools
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from cogen.pipeline.stages import stage

__all__ = ["PARQUET_FORMAT", "POLARS_MIN_ROWS", "ROW_GROUP_BYTES", "ROW_GROUP_ROWS", "encoder", "parquet_layout_options",
           "read_stamp", "row_group_rows", "stamped_schema", "write_parquet", "writer_options"]

#: Rows per Parquet row group: bounds the memory a worker holds, whatever the shard size.
ROW_GROUP_ROWS = 10_000
#: Uncompressed bytes per row group at most, as ``datasets`` writes (100 MB): big rows (whole
#: episodes of grids) get fewer rows per group.
ROW_GROUP_BYTES = 100 * 1000 * 1000
#: A shard whose first row group holds at least this many rows is encoded by polars (unless the
#: build asks for content-defined chunking); smaller ones by pyarrow (see the module docstring).
POLARS_MIN_ROWS = 2_000
#: Version of how shard files are encoded (not their rows), in every shard's stamp and every
#: manifest, so a resumed build never keeps a shard (or a whole config) encoded another way next to
#: new ones. 3: polars encodes the shards of :data:`POLARS_MIN_ROWS` rows and more, and
#: content-defined chunking is off unless asked for (the stamp's ``cdc``). 2: the page index,
#: content-defined chunking and the byte bound on row groups, no dictionaries, zstd level 1.
PARQUET_FORMAT = 3
#: zstd level of every shard: as fast as any codec, within 1 % of level 3's size.
ZSTD_LEVEL = 1
#: Options of polars' allocator (jemalloc, ``_RJEM_MALLOC_CONF`` when polars loads, unless already
#: set; polars appends it to its own defaults, 0.5 s dirty and 1 s muzzy): hand freed pages back to
#: the system after 0.1 s. With polars' defaults a build of large rows (about 50 grids each) kept
#: about 40 MB of freed row groups; giving them back at once (0 ms) saves 30-40 MB more but costs a
#: quarter more CPU time, in page faults.
POLARS_MALLOC_CONF = "dirty_decay_ms:100,muzzy_decay_ms:0"
#: Threads of polars' pool (``POLARS_MAX_THREADS`` when polars loads, unless already set). A build's
#: parallelism is its worker processes (``--workers``): polars' own threads, one per core in every
#: worker, would oversubscribe the cores and each hold row-group buffers of its own. One thread costs
#: the same CPU time and about 30 MB less at the peak of a build of large rows; a ``--workers 1``
#: build takes longer on the wall clock (encoding no longer overlaps sampling).
POLARS_THREADS = 1
#: glibc's mmap threshold in a process that loads polars: arrays of 1 MB and more are mapped and
#: unmapped, not kept in malloc's arenas. glibc raises the threshold (up to 32 MB) each time such an
#: array is freed, and the row groups that polars pulls on threads of its own (each with its own
#: arena) then left 25-45 MB of holes in those arenas.
MMAP_THRESHOLD = 1 << 20


def read_stamp(path: Path) -> tuple[dict | None, dict[str, int]]:
    """The ``cogen`` stamp and generation statistics of a shard file (``None`` stamp if unreadable)."""
    import pyarrow.parquet as pq

    try:
        metadata = pq.read_metadata(path).metadata or {}
        return json.loads(metadata[b"cogen"]), json.loads(metadata.get(b"cogen_stats", b"{}"))
    except Exception:  # a foreign or damaged file is simply not a finished shard
        return None, {}


def writer_options() -> dict:
    """Encoding options of pyarrow's :class:`pyarrow.parquet.ParquetWriter` for shards (the layout
    options are :func:`parquet_layout_options`); polars' writer is given the same choices.

    Chosen by measurement (``benchmarks/bench_build.py writer``): the nested grid columns cost
    most, in Arrow's level encoding more than in compression, and a large write batch (values
    handed to the encoder at once) cuts that by a quarter; zstd level 1 is as fast as any codec and
    within 1 % of level 3's size; dictionaries cost time on every column (a third more on the grids,
    for a third fewer bytes) and saved nothing on ``id`` and ``transformations``.
    """
    return {"compression": "zstd", "compression_level": ZSTD_LEVEL, "use_dictionary": False,
            "write_statistics": False, "write_batch_size": 1 << 20}


def parquet_layout_options(cdc: bool = False) -> dict:
    """pyarrow's layout options: a page index (readers skip pages), and with ``cdc``
    content-defined chunking (pyarrow >= 21; lets the Hub deduplicate re-uploads of a dataset
    that is appended to, and costs about twice the encoding time)."""
    options = {"write_page_index": True}
    if cdc:
        if not _has_writer_option("use_content_defined_chunking"):
            import pyarrow

            from cogen.errors import BuildError

            raise BuildError(f"--parquet-cdc needs pyarrow >= 21 (installed: {pyarrow.__version__}); "
                             "pip install -U pyarrow, or build without --parquet-cdc")
        options["use_content_defined_chunking"] = True
    return options


def encoder(first_rows: int, cdc: bool = False) -> str:
    """The library that encodes a shard whose first row group holds ``first_rows`` rows."""
    return "polars" if not cdc and first_rows >= POLARS_MIN_ROWS else "pyarrow"


def stamped_schema(schema, stamp: dict):
    """``schema`` with the ``cogen`` stamp added to its metadata (what every shard's footer holds)."""
    return schema.with_metadata({**(schema.metadata or {}), b"cogen": json.dumps(stamp, sort_keys=True).encode()})


def write_parquet(where, schema, tables: Iterator, stamp: dict, stats: dict | None = None, *, cdc: bool = False) -> int:
    """Write ``tables`` as one Parquet file to ``where`` (a path or a binary file object); returns
    the row count. Every shard goes through here, so a shard's bytes never depend on where it lands.

    ``stats`` (filled while ``tables`` is consumed) is stored in the footer next to ``stamp``;
    ``cdc`` turns content-defined chunking on. The encoder is chosen by :func:`encoder`.
    """
    schema = stamped_schema(schema, stamp)
    tables = iter(tables)
    first = next(tables, None)
    if first is None or encoder(first.num_rows, cdc) == "pyarrow":
        return _write_pyarrow(where, schema, [] if first is None else itertools.chain([first], tables), stats, cdc)
    tables, group_rows = itertools.chain([first], tables), min(first.num_rows, row_group_rows(first))
    if not isinstance(where, (str, Path)):
        return _write_polars(where, schema, tables, stats, group_rows)
    with open(where, "wb") as target:  # Python's file: a full disk raises OSError, as with pyarrow
        return _write_polars(target, schema, tables, stats, group_rows)


def _write_pyarrow(where, schema, tables, stats: dict | None, cdc: bool) -> int:
    import pyarrow.parquet as pq

    rows = 0
    with pq.ParquetWriter(where, schema, **writer_options(), **parquet_layout_options(cdc)) as writer:
        for table in tables:
            with stage("parquet encoding", threads=True):
                table = table.cast(schema) if table.schema != schema else table
                writer.write_table(table, row_group_size=row_group_rows(table))
            rows += table.num_rows
        writer.add_key_value_metadata({"cogen_stats": json.dumps(stats or {}, sort_keys=True)})
        with stage("file i/o"):
            writer.close()  # writes the footer (closing twice is harmless)
    return rows


def _write_polars(target, schema, tables: Iterator, stats: dict | None, group_rows: int) -> int:
    """Write ``tables`` encoded by polars to the binary file ``target``, streaming (a few row groups
    in memory at a time); returns the row count.

    polars would record its own Arrow types (``large_list``, ``string_view``) and no metadata of
    ours, so the footer gets the Arrow schema pyarrow writes for ``schema`` (``ARROW:schema``:
    ``schema`` serialised, base64) and ``schema``'s metadata, in pyarrow's order.
    """
    pl = _polars()
    from polars.io.plugins import register_io_source

    plain = schema.remove_metadata()
    rows = 0

    def frames(with_columns, predicate, n_rows, batch_size) -> Iterator:
        nonlocal rows
        for table in tables:
            table = table.cast(plain) if table.schema != plain else table
            rows += table.num_rows
            yield pl.from_arrow(table, rechunk=False)

    def footer(context) -> dict[str, str]:
        metadata = {"ARROW:schema": base64.b64encode(schema.serialize().to_pybytes()).decode()}
        metadata.update({key.decode(): value.decode() for key, value in schema.metadata.items()})
        metadata["cogen_stats"] = json.dumps(stats or {}, sort_keys=True)
        return dict(reversed(metadata.items()))  # polars writes them last first

    output = _Output(target)
    with stage("parquet encoding", threads=True):  # polars encodes on its threads, and calls back for row groups
        source = register_io_source(frames, schema=_polars_schema(plain))
        try:
            source.sink_parquet(output, compression="zstd", compression_level=ZSTD_LEVEL, statistics=False,
                                row_group_size=group_rows, metadata=footer)
        except Exception:
            if output.error is not None:  # polars reports a failed write as its own error: raise the OSError
                raise output.error from None
            raise
    return rows


class _Output(io.RawIOBase):
    """A binary file handed to polars that keeps the :class:`OSError` a write raised (a full disk),
    which polars would report as a ``ComputeError``."""

    def __init__(self, target):
        super().__init__()
        self.target, self.error = target, None

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        try:
            self.target.write(data)
        except OSError as error:
            self.error = error
            raise
        return len(data)


def _polars_schema(schema):
    return _polars().from_arrow(schema.empty_table()).schema


@functools.cache
def _polars():
    """polars, loaded with :data:`POLARS_THREADS` threads and the allocator settings of
    :data:`POLARS_MALLOC_CONF` and :data:`MMAP_THRESHOLD` (none changes a byte: the memory and the
    wall time only). A process that loaded polars before its first shard keeps polars' settings."""
    os.environ.setdefault("_RJEM_MALLOC_CONF", POLARS_MALLOC_CONF)
    os.environ.setdefault("POLARS_MAX_THREADS", str(POLARS_THREADS))
    if sys.platform.startswith("linux"):
        _set_mmap_threshold(MMAP_THRESHOLD)
    import polars

    return polars


def _set_mmap_threshold(size: int) -> None:
    """Fix glibc malloc's mmap threshold at ``size`` bytes (nothing happens on another C library)."""
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return
    mallopt(-3, size)  # M_MMAP_THRESHOLD


@functools.cache
def _has_writer_option(name: str) -> bool:
    """Whether the installed pyarrow's ParquetWriter takes ``name`` (asked once per process, not per shard)."""
    import inspect

    import pyarrow.parquet as pq

    try:
        return name in inspect.signature(pq.ParquetWriter.__init__).parameters or \
            name in (pq.ParquetWriter.__init__.__doc__ or "") or name in (pq.write_table.__doc__ or "")
    except (TypeError, ValueError):
        return False


def row_group_rows(table) -> int:
    """Rows per row group for ``table``: at most :data:`ROW_GROUP_ROWS`, and about
    :data:`ROW_GROUP_BYTES` uncompressed at most."""
    if table.num_rows == 0 or table.nbytes <= ROW_GROUP_BYTES:
        return ROW_GROUP_ROWS
    return max(1, min(ROW_GROUP_ROWS, ROW_GROUP_BYTES * table.num_rows // table.nbytes))
