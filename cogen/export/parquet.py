"""``cogen export --format parquet``: one Parquet file per split, under a column view.

``--columns cogen`` (the default) writes the rows as built; the other views are declared by the
families (:mod:`cogen.io.views`), such as a family's official release layout (its file names,
column names and cell types). Rows are converted and written a batch at a time.
"""

from __future__ import annotations

from pathlib import Path

from cogen.export import ExportSource, Written

__all__ = ["PARQUET_BATCH_ROWS", "describe", "write_parquet"]

#: Rows per batch, and so per row group of the written files (int64 views make a batch 8x its int8 size).
PARQUET_BATCH_ROWS = 2_048


def describe() -> str:
    """The column views ``--columns`` offers."""
    from cogen.io.views import column_views

    return ", ".join(f"{view.name} ({view.description})" for view in column_views().values())


def write_parquet(source: ExportSource, folder: Path, columns: str = "cogen") -> Written:
    """Write every split as ``folder/<file stem>.parquet`` under the column view ``columns``."""
    import pyarrow.parquet as pq

    from cogen.io.views import column_view

    view = column_view(columns)
    view.check_family(source.family, source.config)
    files = {}
    for split in source.splits:
        name = f"{view.file_stem(split)}.parquet"
        with pq.ParquetWriter(folder / name, view.convert(source.schema(split).empty_table()).schema) as writer:
            for batch in source.batches(split, rows=PARQUET_BATCH_ROWS):
                writer.write_batch(view.convert(batch))
        files[name] = source.rows(split)
    return Written(files)
