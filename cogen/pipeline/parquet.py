"""The shard file format: how every shard is encoded as Parquet, and the stamp in its footer.

One module owns the format so that every writer (a worker's shard, the key pass's encoded file, a
shard made in memory for a remote store) gives the same bytes, and every reader agrees on the
stamp: :func:`write_parquet` with :func:`writer_options` and :func:`parquet_layout_options`, row
groups of :func:`row_group_rows`, and :func:`read_stamp`. :data:`PARQUET_FORMAT` names the encoding.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path

from cogen.pipeline.stages import stage

__all__ = ["PARQUET_FORMAT", "ROW_GROUP_BYTES", "ROW_GROUP_ROWS", "parquet_layout_options", "read_stamp",
           "row_group_rows", "write_parquet", "writer_options"]

#: Rows per Parquet row group: bounds the memory a worker holds, whatever the shard size.
ROW_GROUP_ROWS = 10_000
#: Uncompressed bytes per row group at most, as ``datasets`` writes (100 MB): big rows (whole
#: episodes of grids) get fewer rows per group.
ROW_GROUP_BYTES = 100 * 1000 * 1000
#: Version of how shard files are encoded (not their rows), in every shard's stamp and every
#: manifest, so a resumed build never keeps a shard (or a whole config) encoded another way next to
#: new ones. 2: the page index, content-defined chunking and the byte bound on row groups
#: (:func:`parquet_layout_options`), no dictionaries, zstd level 1 and large write batches
#: (:func:`writer_options`; same rows, fewer CPU seconds).
PARQUET_FORMAT = 2


def read_stamp(path: Path) -> tuple[dict | None, dict[str, int]]:
    """The ``cogen`` stamp and generation statistics of a shard file (``None`` stamp if unreadable)."""
    import pyarrow.parquet as pq

    try:
        metadata = pq.read_metadata(path).metadata or {}
        return json.loads(metadata[b"cogen"]), json.loads(metadata.get(b"cogen_stats", b"{}"))
    except Exception:  # a foreign or damaged file is simply not a finished shard
        return None, {}


def writer_options() -> dict:
    """Encoding options of every shard's :class:`pyarrow.parquet.ParquetWriter` (:data:`PARQUET_FORMAT`;
    the layout options are :func:`parquet_layout_options`).

    Chosen by measurement (``benchmarks/bench_build.py writer``): the nested grid columns cost
    most, in Arrow's level encoding more than in compression, and a large write batch (values
    handed to the encoder at once) cuts that by a quarter; zstd level 1 is as fast as any codec and
    within 1 % of level 3's size; dictionaries cost time on every column (a third more on the grids,
    for a third fewer bytes) and saved nothing on ``id`` and ``transformations``.
    """
    return {"compression": "zstd", "compression_level": 1, "use_dictionary": False, "write_statistics": False,
            "write_batch_size": 1 << 20}


def write_parquet(where, schema, tables: Iterator, stamp: dict, stats: dict | None = None) -> int:
    """Write ``tables`` as one Parquet file to ``where`` (a path or a pyarrow output stream); returns
    the row count. Every shard goes through here, so a shard's bytes never depend on where it lands."""
    import pyarrow.parquet as pq

    schema = schema.with_metadata({**(schema.metadata or {}), b"cogen": json.dumps(stamp, sort_keys=True).encode()})
    rows = 0
    with pq.ParquetWriter(where, schema, **writer_options(), **parquet_layout_options()) as writer:
        for table in tables:
            with stage("parquet encoding"):
                table = table.cast(schema) if table.schema != schema else table
                writer.write_table(table, row_group_size=row_group_rows(table))
            rows += table.num_rows
        writer.add_key_value_metadata({"cogen_stats": json.dumps(stats or {}, sort_keys=True)})
        with stage("file i/o"):
            writer.close()  # writes the footer (closing twice is harmless)
    return rows


def parquet_layout_options() -> dict:
    """Writer options of the layout ``datasets`` writes: a page index (readers skip pages), and
    content-defined chunking where the installed pyarrow has it (>= 21; the Hub deduplicates
    re-uploads by chunk). The shard bytes thus depend on the pyarrow version, which every
    manifest records and a Dask build checks on every worker."""
    options = {"write_page_index": True}
    if _has_writer_option("use_content_defined_chunking"):
        options["use_content_defined_chunking"] = True
    return options


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
