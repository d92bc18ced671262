"""The config an export reads: its manifest, and its splits a batch of rows at a time.

An export never holds a split in memory: :meth:`ExportSource.batches` reads the split's Parquet
files row group by row group (:func:`cogen.folder.split_files` says which files, downloading them
from the Hub for a repo id), so memory stays flat whatever the split's size, and it reports every
batch it hands out to the progress callback.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cogen.errors import DataError

__all__ = ["BATCH_ROWS", "ExportSource", "open_source"]

#: Rows per batch: a few MB of grids, whatever the split's size.
BATCH_ROWS = 1_000


def _ignore(rows: int) -> None:
    """The default progress callback."""


@dataclass(frozen=True)
class ExportSource:
    """One config of a dataset folder or Hub repo, read in batches; ``progress(rows)`` hears of each batch."""

    data: str | Path
    config: str
    manifest: dict
    progress: Callable[[int], None] = field(default=_ignore, compare=False)

    @property
    def family(self) -> str:
        """The family name of the config (a manifest without one is the default family's)."""
        from cogen.family import DEFAULT_FAMILY

        return self.manifest.get("family", DEFAULT_FAMILY)

    @property
    def splits(self) -> list[str]:
        """The config's splits, in the manifest's order."""
        return list(self.manifest["splits"])

    def rows(self, split: str | None = None) -> int:
        """Rows of ``split`` (of every split when ``None``), from the manifest."""
        names = self.splits if split is None else [split]
        return sum(int(self.manifest["splits"][name]["rows"]) for name in names)

    def relative_data(self, folder: Path) -> str:
        """Where the data came from, as an export in ``folder`` records it: a Hub repo id as it is, a local
        folder relative to ``folder`` (an export and its data moved together still match)."""
        import os

        from cogen.folder import is_repo_id

        if is_repo_id(str(self.data)):
            return str(self.data)
        return Path(os.path.relpath(Path(self.data).expanduser().resolve(), Path(folder).resolve())).as_posix()

    def files(self, split: str) -> list[Path]:
        """The local Parquet files of ``split``."""
        from cogen.folder import split_files

        return split_files(self.data, self.config, split)[1]

    def schema(self, split: str):
        """The Arrow schema of ``split``'s rows (without the shards' metadata)."""
        import pyarrow.parquet as pq

        file = self.files(split)[0]
        return _reading(file, lambda: pq.read_schema(file)).remove_metadata()

    def batches(self, split: str, columns: Sequence[str] | None = None, rows: int = BATCH_ROWS,
                count: bool = True) -> Iterator:
        """``split``'s rows as ``pyarrow.RecordBatch`` es of at most ``rows`` rows, in order (only
        ``columns`` when given); each batch is counted as progress (unless ``count`` is false) once
        the caller asks for the next one."""
        import pyarrow.parquet as pq

        for file in self.files(split):
            parquet = _reading(file, lambda file=file: pq.ParquetFile(file))
            batches = parquet.iter_batches(batch_size=rows, columns=list(columns) if columns else None)
            while (batch := _reading(file, lambda batches=batches: next(batches, None))) is not None:
                yield batch.replace_schema_metadata(None)
                if count:
                    self.progress(batch.num_rows)


def _reading(file: Path, read):
    """``read()``, with a Parquet or file-system error said in one line that names ``file``."""
    import pyarrow as pa

    try:
        return read()
    except (OSError, pa.ArrowException) as error:
        raise DataError(f"{file}: cannot read the split's Parquet file ({error})") from None


def open_source(data: str | Path, config: str, progress: Callable[[int], None] | None = None) -> ExportSource:
    """The :class:`ExportSource` of ``config`` in ``data`` (a dataset folder or a Hub repo id)."""
    from cogen.folder import split_files

    manifest = split_files(data, config, None)[0]
    return ExportSource(data, config, manifest, progress or _ignore)
