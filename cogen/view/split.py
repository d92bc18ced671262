"""One split's rows, read a row group at a time: a page never loads the whole split.

A manifest lists the split's shards with their row counts, so a row position is mapped to its
file without opening it; the file's footer then maps it to a row group, which is decoded (only
the columns asked for) and kept in a small least-recently-used cache. Whole-split reads are
limited to the few small columns the filters need (:meth:`SplitRows.columns`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from cogen.errors import DataError

__all__ = ["SplitRows"]

#: Decoded row groups kept per split (a page rarely spans more than two).
CACHED_GROUPS = 6


class SplitRows:
    """The rows of ``split`` of one config of a source (see the module docstring)."""

    def __init__(self, source, manifest: dict, split: str):
        splits = manifest.get("splits", {})
        if split not in splits:
            raise DataError(f"config {manifest.get('config')} has no split {split!r} (it has {', '.join(splits)})")
        info = splits[split]
        self.source, self.split, self.files = source, split, list(info["files"])
        self._handles: dict[int, object] = {}
        self._groups: dict[int, np.ndarray] = {}
        self._cache: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        records = info.get("shards", {})
        counts = [records.get(name, {}).get("rows") for name in self.files]
        if any(count is None for count in counts):  # a legacy manifest: read every footer
            counts = [self._parquet(k).metadata.num_rows for k in range(len(self.files))]
        self.starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

    def __len__(self) -> int:
        return int(self.starts[-1])

    def _parquet(self, k: int):
        import pyarrow as pa
        import pyarrow.parquet as pq

        if k not in self._handles:
            path = self.source.path(self.files[k])
            try:
                self._handles[k] = pq.ParquetFile(path)
            except (OSError, pa.ArrowException) as error:
                raise DataError(f"{path}: cannot read this shard ({error})") from None
        return self._handles[k]

    def _group_starts(self, k: int) -> np.ndarray:
        if k not in self._groups:
            meta = self._parquet(k).metadata
            sizes = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
            self._groups[k] = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        return self._groups[k]

    def _group(self, k: int, g: int, columns: tuple[str, ...]):
        key = (k, g, columns)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        table = self._parquet(k).read_row_group(g, columns=list(columns))
        self._cache[key] = table
        while len(self._cache) > CACHED_GROUPS:
            self._cache.popitem(last=False)
        return table

    def rows(self, positions, columns: list[str]) -> list[dict]:
        """The rows at ``positions`` (split row numbers), as dicts of the ``columns`` the split has."""
        with self._lock:
            present = self._parquet(0).schema_arrow.names if self.files else []
            wanted = tuple(name for name in columns if name in present)
            out = []
            for position in np.asarray(positions, np.int64):
                if not 0 <= position < len(self):
                    raise DataError(f"row {position} is outside the split ({len(self)} rows)")
                k = int(np.searchsorted(self.starts, position, side="right") - 1)
                local = int(position - self.starts[k])
                groups = self._group_starts(k)
                g = int(np.searchsorted(groups, local, side="right") - 1)
                table = self._group(k, g, wanted)
                out.append(table.slice(local - int(groups[g]), 1).to_pylist()[0])
            return out

    def columns(self, names: list[str]):
        """Whole-split Arrow table of ``names`` (those the split has): small columns only, for filters."""
        import pyarrow as pa

        with self._lock:
            present = self._parquet(0).schema_arrow.names if self.files else []
            wanted = [name for name in names if name in present]
            tables = [self._parquet(k).read(columns=wanted) for k in range(len(self.files))]
        if not tables:
            return pa.table({name: pa.array([], pa.string()) for name in wanted})
        return pa.concat_tables(tables).replace_schema_metadata(None)
