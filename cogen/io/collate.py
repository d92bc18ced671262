"""A ``collate_fn`` for PyTorch ``DataLoader`` users; torch is imported only when a batch is made.

``DataLoader(dataset, batch_size=64, collate_fn=Collate(size=30))`` turns the rows of a Hugging
Face split (dicts of nested lists) into a dict of tensors: padded grids, their true shapes, the
task-code tokens, and the other numeric columns. ``Collate(tensors=False)`` returns NumPy arrays
and needs no torch at all.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cogen.errors import DataError
from cogen.io.arrays import DEPTH, PAD_VALUE, table_arrays

__all__ = ["Collate"]


def _plain(value):
    """Nested lists from whatever a dataset row holds (lists, NumPy arrays, arrays of arrays)."""
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value] if value.dtype == object else value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _to_tensors(batch: dict) -> dict:
    from cogen.errors import optional_import

    torch = optional_import("torch", "Collate(tensors=True) (tensors=False gives NumPy arrays without it)")
    # writable arrays: torch.from_numpy warns on read-only memory (Arrow buffers)
    return {name: torch.from_numpy(np.require(value, requirements=["W"])) if isinstance(value, np.ndarray) else value
            for name, value in batch.items()}


@dataclass(frozen=True)
class Collate:
    """Batch rows into padded arrays (see :func:`cogen.io.split_arrays` for the keys and options).

    ``size=None`` pads each batch to its own largest grid. Numeric columns that are not grids
    (``n_objects``, ``episode``, ...) become arrays; other columns (``id``, names) stay lists.
    Picklable, so it works with ``num_workers > 0``.
    """

    size: int | tuple[int, int] | None = None
    pad_value: int = PAD_VALUE
    depth: int | None = DEPTH
    tokens: bool | None = None
    tensors: bool = True

    def __call__(self, rows: list[dict]) -> dict:
        import pyarrow as pa

        if not rows:
            raise DataError("cannot collate an empty batch")
        table = pa.Table.from_pylist([{name: _plain(value) for name, value in row.items()} for row in rows])
        batch = table_arrays(table, size=self.size, pad_value=self.pad_value, depth=self.depth, tokens=self.tokens)
        for name in table.column_names:
            if name in batch:
                continue
            type_ = table.schema.field(name).type
            numeric = pa.types.is_integer(type_) or pa.types.is_floating(type_) or pa.types.is_boolean(type_)
            batch[name] = table.column(name).to_numpy() if numeric else table.column(name).to_pylist()
        return _to_tensors(batch) if self.tensors else batch
