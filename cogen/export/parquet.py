"""``cogen export --format parquet``: one Parquet file per split, under a column view.

``--columns cogen`` (the default) writes the rows as built; ``--columns cogitao-release`` writes
them as the official COGITAO release lays them out (:mod:`cogen.io.views`): files
``train.parquet``, ``val.parquet``, ``test.parquet``, ``val_ood.parquet``, ``test_ood.parquet``
with ``input``/``output`` as int64 grids and ``transformation_suite``.
"""

from __future__ import annotations

from pathlib import Path

from cogen.export import ExportedFile, ExportReport, require_family

__all__ = ["write_parquet"]


def write_parquet(data: str | Path, config: str, folder: Path, columns: str = "cogen") -> ExportReport:
    """Write every split of ``config`` as ``folder/<split>.parquet`` under the column view ``columns``."""
    import pyarrow.parquet as pq

    from cogen.folder import read_split
    from cogen.io.views import RELEASE_SPLITS, column_view

    view = column_view(columns)
    first = read_split(data, config, "train")
    if columns == "cogitao-release":
        require_family(first.manifest, ("cogitao",), "parquet --columns cogitao-release")
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for split in first.manifest["splits"]:
        table = view(first.table if split == "train" else read_split(data, config, split).table)
        name = RELEASE_SPLITS.get(split, split) if columns == "cogitao-release" else split
        path = folder / f"{name}.parquet"
        pq.write_table(table, path)
        files.append(ExportedFile(path, table.num_rows))
    return ExportReport("parquet", config, folder, files)
