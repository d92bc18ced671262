"""Loaders for training: a split as padded NumPy arrays, task-code tokens, a DataLoader collate.

NumPy only at import; pyarrow and ``datasets`` are imported when a split is read, torch only
when :class:`Collate` makes tensors.

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

from cogen.io.arrays import DEPTH, PAD_VALUE, pad_grids, split_arrays, table_arrays, task_tokens
from cogen.io.collate import Collate
from cogen.io.source import load_configs, load_split, split_table
from cogen.io.torch_data import GridDataset
from cogen.io.views import ColumnView, column_view
from cogen.io.visual import VISUAL_CLASSES, visual_tokens

__all__ = ["DEPTH", "PAD_VALUE", "VISUAL_CLASSES", "Collate", "ColumnView", "GridDataset", "column_view", "load_configs",
           "load_split", "pad_grids", "split_arrays", "split_table", "table_arrays", "task_tokens", "visual_tokens"]
