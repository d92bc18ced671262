"""Turn the sampler's padded NumPy buffers into Arrow columns without Python lists."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

__all__ = ["grids_column", "padded_rows_column", "names_column", "pairs_column"]


def _offsets(lengths: np.ndarray) -> pa.Array:
    offsets = np.zeros(len(lengths) + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.array(offsets)


def grids_column(grids: np.ndarray, sizes: np.ndarray) -> pa.Array:
    """``list<list<int8>>`` of the true ``sizes[i] = (H, W)`` corner of each padded ``grids[i]``."""
    k, max_h, max_w = grids.shape
    heights, widths = sizes[:, 0].astype(np.int64), sizes[:, 1].astype(np.int64)
    inside = (np.arange(max_h)[None, :, None] < heights[:, None, None]) & \
             (np.arange(max_w)[None, None, :] < widths[:, None, None])
    cells = pa.array(np.ascontiguousarray(grids)[inside], pa.int8())
    rows = pa.ListArray.from_arrays(_offsets(np.repeat(widths, heights)), cells)
    return pa.ListArray.from_arrays(_offsets(heights), rows)


def padded_rows_column(values: np.ndarray, lengths: np.ndarray, type_: pa.DataType) -> pa.Array:
    """``list<type>`` of the first ``lengths[i]`` entries of each row of ``values``."""
    keep = np.arange(values.shape[1])[None, :] < lengths[:, None]
    return pa.ListArray.from_arrays(_offsets(lengths), pa.array(values[keep], type_))


def pairs_column(values: np.ndarray, lengths: np.ndarray, type_: pa.DataType) -> pa.Array:
    """``list<list<type>>`` of the first ``lengths[i]`` pairs of ``values[i]`` (shape ``(k, m, 2)``)."""
    keep = np.arange(values.shape[1])[None, :] < lengths[:, None]
    flat = values[keep].reshape(-1)
    inner = pa.ListArray.from_arrays(pa.array(np.arange(0, flat.size + 1, 2, dtype=np.int32)), pa.array(flat, type_))
    return pa.ListArray.from_arrays(_offsets(lengths), inner)


def names_column(tokens: np.ndarray, names: np.ndarray) -> pa.Array:
    """``list<string>``: each row of ``tokens`` (``-1`` padded) mapped through ``names[token]``."""
    keep = tokens >= 0
    return pa.ListArray.from_arrays(_offsets(keep.sum(axis=1)), pa.array(names[tokens[keep]], pa.string()))
