"""The fast way to train with PyTorch: a split held as padded tensors, fetched a batch at a time.

>>> from cogen.io import GridDataset                                         # doctest: +SKIP
>>> data = GridDataset("org/benchmark", "C3-1", split="train", size=30)       # doctest: +SKIP
>>> for batch in data.loader(batch_size=64, shuffle=True, seed=0): ...      # doctest: +SKIP
>>> batch["input"].dtype, batch["input"].shape                             # doctest: +SKIP
(torch.int8, torch.Size([64, 30, 30]))

The split is decoded once into the arrays of :func:`cogen.io.split_arrays` (grids int8, shapes
and tokens as they are: no widening), and a batch is one fancy-index per array
(``__getitems__``), not a Python dict per row stacked afterwards. ``DataLoader(data,
batch_size=64, collate_fn=data.collate)`` works too (``loader`` builds exactly that). torch is
imported only when tensors are made.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cogen.errors import DataError
from cogen.io.arrays import DEPTH, PAD_VALUE, split_arrays

__all__ = ["GridDataset"]


def _torch():
    from cogen.errors import optional_import

    return optional_import("torch", "GridDataset (cogen.io.split_arrays gives NumPy arrays without it)")


class GridDataset:
    """A map-style torch dataset over one split's padded arrays (keys as :func:`split_arrays`).

    ``source`` and the options are :func:`split_arrays`'; ``arrays`` instead gives the arrays
    directly. ``data[i]`` is one row (a dict of tensors), ``data.__getitems__(indices)`` a batch.
    Picklable, so ``num_workers > 0`` works (each worker gets a copy of the arrays).
    """

    def __init__(self, source=None, config: str | None = None, split: str = "train", *, size=None,
                 pad_value: int = PAD_VALUE, depth: int | None = DEPTH, tokens: bool | None = None,
                 columns: Sequence[str] | None = None, arrays: dict[str, np.ndarray] | None = None):
        if arrays is None:
            if source is None:
                raise DataError("GridDataset needs a source (folder, repo id, Dataset, table) or arrays=")
            arrays = split_arrays(source, config, split, size=size, pad_value=pad_value, depth=depth, tokens=tokens,
                                  columns=columns)
        lengths = {len(value) for value in arrays.values()}
        if len(lengths) != 1:
            raise DataError(f"arrays of different lengths: {({k: len(v) for k, v in arrays.items()})}")
        _torch()  # a clear error now, not at the first batch, when torch is missing
        self.arrays = {name: np.ascontiguousarray(value) for name, value in arrays.items()}
        self._length = lengths.pop()

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: int) -> dict:
        torch = _torch()
        return {name: torch.from_numpy(np.array(array[index])) for name, array in self.arrays.items()}

    def __getitems__(self, indices: Sequence[int]) -> dict:
        """A whole batch at once: one NumPy gather per array (single-threaded, a fresh writable array, so
        no copy warning), wrapped as tensors without a copy. ``DataLoader`` calls it when it exists."""
        torch = _torch()
        positions = np.asarray(indices, dtype=np.intp)
        return {name: torch.from_numpy(array[positions]) for name, array in self.arrays.items()}

    @staticmethod
    def collate(batch: dict) -> dict:
        """The ``collate_fn`` to pair with this dataset: the batch is already made."""
        return batch

    def loader(self, batch_size: int = 64, shuffle: bool = False, seed: int | None = None, **options):
        """A ``torch.utils.data.DataLoader`` of batches; ``seed`` fixes the shuffling order."""
        torch = _torch()
        generator = torch.Generator().manual_seed(seed) if seed is not None else None
        return torch.utils.data.DataLoader(self, batch_size=batch_size, shuffle=shuffle, generator=generator,
                                           collate_fn=self.collate, **options)
