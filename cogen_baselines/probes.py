"""Device-agnostic probes of a training step: live tensor memory, host syncs, floating-point work.

Each is a ``TorchDispatchMode``: it sees every ATen operation run while it is active, forward,
backward and optimiser alike, on any device, so a CPU can measure what a GPU step would hold and
do. :class:`LiveMemory` counts the bytes of tensor storage alive at once (what a GPU's caching
allocator reports as allocated, before its rounding and fragmentation); :class:`HostSyncs` counts
the operations that make a GPU wait for the host to read a value (``.item()``, ``bool(tensor)``,
``nonzero``, indexing with a boolean mask); ``torch.utils.flop_counter.FlopCounterMode`` counts the
work.
"""

from __future__ import annotations

import weakref
from collections import Counter

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

__all__ = ["SYNC_OPS", "HostSyncs", "LiveMemory"]

#: ATen operations whose result the host must read (or whose output size depends on data): each
#: is a device-to-host synchronisation on a GPU.
SYNC_OPS = frozenset({"_local_scalar_dense", "is_nonzero", "nonzero", "masked_select", "equal", "unique",
                      "_unique2", "unique_consecutive", "item"})
#: Indexing operations that sync when an index is a boolean mask (they count its true entries).
_MASK_INDEXING = frozenset({"index", "index_put", "index_put_", "_index_put_impl_"})


def _has_mask(args) -> bool:
    return any(isinstance(index, torch.Tensor) and index.dtype == torch.bool for index in tree_flatten(args[1:2])[0])


class LiveMemory(TorchDispatchMode):
    """Peak bytes of tensor storage alive at once while active (``peak``), counting ``tracked`` first.

    A storage is counted once, from the operation that made it until the last tensor (or autograd's
    saved copy) using it is gone.
    """

    def __init__(self, tracked=()):
        super().__init__()
        self._live: dict[int, tuple[int, weakref.ref]] = {}
        self.current = self.peak = 0
        for tensor in tracked:
            self._add(tensor)

    def _add(self, tensor) -> None:
        if not isinstance(tensor, torch.Tensor) or tensor.device.type == "meta":
            return
        storage = tensor.untyped_storage()
        key = id(storage)
        if key in self._live:
            return
        size = storage.nbytes()
        self._live[key] = (size, weakref.ref(storage, lambda _, key=key: self._free(key)))
        self.current += size
        self.peak = max(self.peak, self.current)

    def _free(self, key: int) -> None:
        size, _ = self._live.pop(key, (0, None))
        self.current -= size

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for tensor in tree_flatten(out)[0]:
            self._add(tensor)
        return out


class HostSyncs(TorchDispatchMode):
    """Counts the operations of :data:`SYNC_OPS` run while active (``count``, and ``ops`` by name)."""

    def __init__(self):
        super().__init__()
        self.ops: Counter[str] = Counter()

    @property
    def count(self) -> int:
        return sum(self.ops.values())

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        if name in SYNC_OPS:
            self.ops[name] += 1
        elif name in _MASK_INDEXING and _has_mask(args):
            self.ops[f"{name} (boolean mask)"] += 1
        return func(*args, **(kwargs or {}))
