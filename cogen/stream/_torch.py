"""A :class:`~cogen.stream.SampleStream` as a PyTorch ``IterableDataset`` (imported only when asked for).

Batch ``b`` of the stream goes to the worker ``b mod (world_size * num_workers)`` (ranks first,
then DataLoader workers within a rank), so that across every rank and worker each batch is made
exactly once and none is skipped. Use it with ``DataLoader(dataset, batch_size=None)``: the
dataset already yields batches.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import torch
from torch.utils.data import IterableDataset, get_worker_info

from cogen.errors import DataError

__all__ = ["StreamDataset"]


class StreamDataset(IterableDataset):
    """Batches of a stream, shared among DataLoader workers and distributed ranks."""

    def __init__(self, stream, *, rank: int | None = None, world_size: int | None = None, limit: int | None = None,
                 tensors: bool = True):
        super().__init__()
        if (rank is None) != (world_size is None):
            raise DataError("pass both rank and world_size, or neither (then torch.distributed decides)")
        if rank is None and torch.distributed.is_available() and torch.distributed.is_initialized():
            rank, world_size = torch.distributed.get_rank(), torch.distributed.get_world_size()
        self.rank, self.world_size = (rank or 0), (world_size or 1)
        if not 0 <= self.rank < self.world_size:
            raise DataError(f"rank {self.rank} is not in 0..{self.world_size - 1}")
        if limit is not None and limit < 0:
            raise DataError(f"limit must be >= 0, got {limit}")
        self.stream, self.limit, self.tensors = stream, limit, tensors

    def slot(self) -> tuple[int, int]:
        """``(this worker's slot, number of slots)`` over all ranks and DataLoader workers."""
        info = get_worker_info()
        workers, worker = (info.num_workers, info.id) if info is not None else (1, 0)
        return self.rank * workers + worker, self.world_size * workers

    def __iter__(self) -> Iterator[dict]:
        slot, slots = self.slot()
        size = self.stream.batch_size
        batches = None if self.limit is None else -(-self.limit // size)
        for number in range(slot, batches if batches is not None else np.iinfo(np.int64).max, slots):
            stop = (number + 1) * size if self.limit is None else min((number + 1) * size, self.limit)
            batch = self.stream.samples(number * size, stop)
            yield {name: torch.from_numpy(values) for name, values in batch.items()} if self.tensors else batch
