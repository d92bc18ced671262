"""Loaders for training: a split as padded NumPy arrays, task-code tokens, a DataLoader collate.

Nothing heavy at import: each name below loads its module on first use (so ``cogen.io.views``, which
every command's option help reads, costs no NumPy); pyarrow and ``datasets`` are imported when a split
is read, torch only when :class:`Collate` makes tensors.

* :func:`split_arrays`  a split (``Dataset``, build folder, Hub repo) -> dict of padded arrays
* :func:`task_tokens`   transformation sequences -> ``(n, 4)`` token ids, identity-padded
* :func:`pad_grids`     a list of grids -> ``(n, H, W)`` int8 and their true shapes
* :class:`GridDataset`  the fast PyTorch path: a split as padded tensors, a batch per gather
* :class:`Collate`      ``collate_fn`` for ``torch.utils.data.DataLoader`` over ``datasets`` rows (slower)
* :func:`load_split`    a split as a ``datasets.Dataset`` from any of the sources above
* :func:`visual_tokens` padded grids -> canvases with border and end-of-row tokens (15 classes)
* :func:`load_configs`  every config of a build folder or Hub repo in one call, under a column view
* :func:`column_view`   a layout of a split (:mod:`cogen.io.views`): another tool's column and split names
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cogen.io.arrays import DEPTH, PAD_VALUE, pad_grids, split_arrays, table_arrays, task_tokens
    from cogen.io.collate import Collate
    from cogen.io.source import load_configs, load_split, split_table
    from cogen.io.torch_data import GridDataset
    from cogen.io.views import ColumnView, column_view
    from cogen.io.visual import VISUAL_CLASSES, visual_tokens

#: Each public name and the module that defines it.
_HOMES = {"DEPTH": "arrays", "PAD_VALUE": "arrays", "pad_grids": "arrays", "split_arrays": "arrays",
          "table_arrays": "arrays", "task_tokens": "arrays", "Collate": "collate", "load_configs": "source",
          "load_split": "source", "split_table": "source", "GridDataset": "torch_data", "ColumnView": "views",
          "column_view": "views", "VISUAL_CLASSES": "visual", "visual_tokens": "visual"}

__all__ = ["DEPTH", "PAD_VALUE", "VISUAL_CLASSES", "Collate", "ColumnView", "GridDataset", "column_view", "load_configs",
           "load_split", "pad_grids", "split_arrays", "split_table", "table_arrays", "task_tokens", "visual_tokens"]


def __getattr__(name: str):
    """Load the module of a public name on first use (PEP 562)."""
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
