"""The ``frames`` column of sequential COGITAO rows: each row's input and the grid after every step.

Written from the sampler's padded ``(n, max depth + 1, H, W)`` frames (``generate_rows`` with
``SplitJob.frames``) as ``list<list<list<int8>>>`` (depth + 1 grids of the row's true H x W), and
read back for ``cogen verify`` without Python lists.
"""

from __future__ import annotations

import numpy as np

from cogen.pipeline.arrow import Grids, grids_column, read_grids, read_lists

__all__ = ["frames_column", "read_frames"]


def frames_column(frames: np.ndarray, sizes: np.ndarray, depths: np.ndarray):
    """``list<list<list<int8>>>``: the first ``depths[i] + 1`` grids of ``frames[i]``, each ``sizes[i]``."""
    import pyarrow as pa

    counts = depths.astype(np.int64) + 1
    keep = np.arange(frames.shape[1])[None, :] < counts[:, None]
    grids = grids_column(frames[keep], np.repeat(sizes, counts, axis=0))
    offsets = np.zeros(len(counts) + 1, np.int32)
    np.cumsum(counts, out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), grids)


def read_frames(column) -> tuple[Grids, np.ndarray]:
    """The frames of a ``frames`` column: every frame's grid (:class:`Grids`, rows in order) and the
    offsets of each row's frames into them."""
    grids, offsets = read_lists(column)
    return read_grids(grids), offsets
