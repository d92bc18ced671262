"""One split's rows, read a row group at a time: a page never loads the whole split.

A manifest lists the split's shards with their row counts, so a row position is mapped to its
file without opening it; the file's footer then maps it to a row group, which is decoded from
its start in batches of :data:`BATCH` rows (only the columns asked for) just as far as the row,
each batch kept in a least-recently-used cache. The filters scan the whole split's few columns
they need batch by batch (:meth:`SplitRows.batches`), so memory stays that of one batch.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator

import numpy as np

from cogen.errors import DataError

__all__ = ["SplitRows"]

#: Rows decoded at a time when a page is read: a page's rows cost a few batches, not a whole row group.
BATCH = 64
#: Decoded batches kept per split (sequential paging decodes each batch once).
CACHED_BATCHES = 256
#: Rows decoded at a time when the filters scan the whole split.
SCAN_BATCH = 4096


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

    def _batch(self, k: int, g: int, b: int, columns: tuple[str, ...]):
        """Batch ``b`` (of :data:`BATCH` rows) of row group ``g`` of file ``k``: the row group is decoded
        from its start only as far as needed, one batch at a time, each batch kept in the cache."""
        key = (k, g, b, columns)
        if key not in self._cache:
            batches = self._parquet(k).iter_batches(batch_size=BATCH, row_groups=[g], columns=list(columns),
                                                    use_threads=False)
            for number, batch in enumerate(batches):
                self._remember((k, g, number, columns), batch)
                if number == b:
                    break
        self._cache.move_to_end(key)
        return self._cache[key]

    def _remember(self, key: tuple, batch) -> None:
        self._cache[key] = batch
        self._cache.move_to_end(key)
        while len(self._cache) > CACHED_BATCHES:
            self._cache.popitem(last=False)

    def _present(self, columns) -> tuple[str, ...]:
        present = self._parquet(0).schema_arrow.names if self.files else []
        return tuple(name for name in columns if name in present)

    def rows(self, positions, columns: list[str]) -> list[dict]:
        """The rows at ``positions`` (split row numbers), as dicts of the ``columns`` the split has."""
        with self._lock:
            wanted = self._present(columns)
            out = []
            for position in np.asarray(positions, np.int64):
                if not 0 <= position < len(self):
                    raise DataError(f"row {position} is outside the split ({len(self)} rows)")
                k = int(np.searchsorted(self.starts, position, side="right") - 1)
                local = int(position - self.starts[k])
                groups = self._group_starts(k)
                g = int(np.searchsorted(groups, local, side="right") - 1)
                b, row = divmod(local - int(groups[g]), BATCH)
                out.append(self._batch(k, g, b, wanted).slice(row, 1).to_pylist()[0])
            return out

    def batches(self, names: list[str]) -> Iterator:
        """The whole split's ``names`` columns (those it has), batch by batch: memory stays that of one batch."""
        with self._lock:
            wanted = list(self._present(names))
            handles = [self._parquet(k) for k in range(len(self.files))]
        for handle in handles:
            yield from handle.iter_batches(batch_size=SCAN_BATCH, columns=wanted, use_threads=False)
