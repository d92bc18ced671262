"""The ``frames`` column of sequential COGITAO rows: each row's input and the grid after every step;
and the ``object_boxes`` / ``object_grids`` columns: each object's box and tight array at every step.

Frames are written from the sampler's padded ``(n, max depth + 1, H, W)`` frames (``generate_rows``
with ``SplitJob.frames``) as ``list<list<list<int8>>>`` (depth + 1 grids of the row's true H x W);
object frames from its ``object_boxes`` and flat ``object_cells`` (``SplitJob.object_frames``) as
``list<list<list<int16>>>`` (object, step, (row, col, height, width)) and
``list<list<list<list<int8>>>>`` (object, step, the object's height x width array). Both are read
back for ``cogen verify`` without Python lists.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cogen.kit.arrow import Grids, grids_column, numpy_array, read_grids, read_lists

__all__ = ["ObjectFrames", "frames_column", "object_frames_columns", "read_frames", "read_object_frames"]


def frames_column(frames: np.ndarray, sizes: np.ndarray, depths: np.ndarray):
    """``list<list<list<int8>>>``: the first ``depths[i] + 1`` grids of ``frames[i]``, each ``sizes[i]``."""
    import pyarrow as pa

    counts = depths.astype(np.int64) + 1
    keep = np.arange(frames.shape[1])[None, :] < counts[:, None]
    grids = grids_column(frames[keep], np.repeat(sizes, counts, axis=0))
    offsets = np.zeros(len(counts) + 1, np.int32)
    np.cumsum(counts, out=offsets[1:])
    return pa.ListArray.from_arrays(numpy_array(offsets, pa.int32()), grids)


def read_frames(column) -> tuple[Grids, np.ndarray]:
    """The frames of a ``frames`` column: every frame's grid (:class:`Grids`, rows in order) and the
    offsets of each row's frames into them."""
    grids, offsets = read_lists(column)
    return read_grids(grids), offsets


def _offsets(lengths: np.ndarray):
    import pyarrow as pa

    offsets = np.zeros(len(lengths) + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return numpy_array(offsets, pa.int32())


def object_frames_columns(boxes: np.ndarray, cells: np.ndarray, counts: np.ndarray, depths: np.ndarray):
    """``(object_boxes, object_grids)`` of rows with ``counts[i]`` objects and ``depths[i]`` steps, from the
    sampler's ``object_boxes`` ``(n, max objects, max depth + 1, 4)`` and ``object_cells`` (every object's
    tight pixels, row by row, object by object, step by step, row-major)."""
    import pyarrow as pa

    counts, steps = counts.astype(np.int64), depths.astype(np.int64) + 1
    keep = (np.arange(boxes.shape[1])[None, :, None] < counts[:, None, None]) & \
           (np.arange(boxes.shape[2])[None, None, :] < steps[:, None, None])
    kept = boxes[keep].astype(np.int64)  # (entries, 4): row by row, object by object, step by step
    heights, widths = kept[:, 2], kept[:, 3]
    if int((heights * widths).sum()) != len(cells):
        raise ValueError(f"object cells: {len(cells)} for boxes of {int((heights * widths).sum())} cells")
    per_object = np.repeat(steps, counts)

    def nested(leaf):
        return pa.ListArray.from_arrays(_offsets(counts), pa.ListArray.from_arrays(_offsets(per_object), leaf))

    box_lists = pa.ListArray.from_arrays(_offsets(np.full(len(kept), 4)), numpy_array(kept, pa.int16()))
    lines = pa.ListArray.from_arrays(_offsets(np.repeat(widths, heights)), numpy_array(cells, pa.int8()))
    return nested(box_lists), nested(pa.ListArray.from_arrays(_offsets(heights), lines))


@dataclass(frozen=True)
class ObjectFrames:
    """Object frames read back: every (row, object, step) entry's ``boxes`` ``(entries, 4)`` and its
    array's cells row-major at ``cells[starts[e]:]``; row ``r``'s objects are ``objects[r]`` to
    ``objects[r + 1]``, object ``o``'s entries ``steps[o]`` to ``steps[o + 1]``. ``sound[r]`` is False
    when row ``r``'s two columns disagree (object or step counts, a box that is not 4 numbers, an
    array that is not its box's height x width)."""

    boxes: np.ndarray
    cells: np.ndarray
    starts: np.ndarray
    objects: np.ndarray
    steps: np.ndarray
    sound: np.ndarray


def read_object_frames(boxes_column, grids_column) -> ObjectFrames:
    """The object frames of a table's ``object_boxes`` and ``object_grids`` columns."""
    box_objects, objects = read_lists(boxes_column)
    box_steps, steps = read_lists(box_objects)
    numbers, number_offsets = read_lists(box_steps)
    grid_objects, grid_object_offsets = read_lists(grids_column)
    grid_steps, grid_step_offsets = read_lists(grid_objects)
    grids = read_grids(grid_steps)
    rows = len(objects) - 1
    sound = np.ones(rows, bool)
    if not np.array_equal(objects, grid_object_offsets) or not np.array_equal(steps, grid_step_offsets):
        return ObjectFrames(np.zeros((0, 4), np.int64), grids.cells, grids.starts, objects, steps, ~sound)
    entries = np.diff(number_offsets) == 4
    boxes = np.zeros((len(entries), 4), np.int64)
    boxes[entries] = np.asarray(numbers, np.int64).reshape(-1, 4) if entries.all() else \
        np.asarray(numbers, np.int64)[np.repeat(entries, np.diff(number_offsets))].reshape(-1, 4)
    fits = entries & grids.regular & np.all(grids.sizes == boxes[:, 2:], axis=1)
    owner = np.repeat(np.repeat(np.arange(rows), np.diff(objects)), np.diff(steps))
    np.logical_and.at(sound, owner, fits)
    return ObjectFrames(boxes, grids.cells, grids.starts, objects, steps, sound)
