"""Numba kernel that replays stored COGITAO scenes with the engine (``cogen verify``'s re-derivation).

A stored row says which bank objects sit where on its input grid and which sequence turns it
into its output. :func:`replay` redraws the input from the bank objects and applies the sequence
with :func:`cogen.engine._kernels.run_scene`, independently of the sampler that made the row,
and compares both grids with the stored ones. It calls the engine's kernels, so this module pins
their file's digest (``KERNELS_SHA256``, see :mod:`cogen.pins`).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from cogen.engine._kernels import OK, render_scene, run_scene
from cogen.jit import kernel

KERNELS_SHA256 = "ceb448c6606419826ce5ccac4105b2620173d9b3fb5e6acbc63ac7dd18e876a4"

__all__ = ["BAD_OBJECT", "CANNOT_REPLAY", "INPUT_DIFFERS", "OUTPUT_DIFFERS", "REPLAYED", "StoredObjects", "replay",
           "replay_frames", "replay_objects"]

#: Outcome of each row: replayed and equal, input not drawn by its objects, sequence fails,
#: output differs from the engine's, an object id or position that cannot be.
REPLAYED, INPUT_DIFFERS, CANNOT_REPLAY, OUTPUT_DIFFERS, BAD_OBJECT = range(5)
#: Stored object frames as :func:`replay_objects` reads them (see there).
StoredObjects = namedtuple("StoredObjects", ("objects", "steps", "boxes", "cells", "cell_starts"))
#: A grid, object boxes and object pixels big enough for every replayed row.
Scratch = namedtuple("Scratch", ("grid", "boxes", "pixels"))


@kernel
def _load_objects(s, sizes, ids, positions, object_starts, bank, boxes, pixels):
    """Put row ``s``'s bank objects into ``boxes``/``pixels`` (cleared first); False when an id or
    position cannot be."""
    bank_pixels, bank_offsets, bank_shapes = bank
    height, width = sizes[s, 0], sizes[s, 1]
    pixels[: object_starts[s + 1] - object_starts[s]] = 0
    for i in range(object_starts[s + 1] - object_starts[s]):
        k = object_starts[s] + i
        bank_id = ids[k]
        if bank_id < 0 or bank_id >= bank_shapes.shape[0]:
            return False
        h, w = bank_shapes[bank_id, 0], bank_shapes[bank_id, 1]
        row, col = positions[k, 0], positions[k, 1]
        if row < 0 or col < 0 or row + h > height or col + w > width or h * w > pixels.shape[1]:
            return False
        boxes[i, 0], boxes[i, 1], boxes[i, 2], boxes[i, 3] = row, col, h, w
        start = bank_offsets[bank_id]
        pixels[i, : h * w] = bank_pixels[start: start + h * w]
    return True


@kernel
def _row(rows, j, sizes, object_starts):
    """Stored row ``rows[j]``: its index, grid height and width, and number of objects."""
    s = rows[j]
    return s, sizes[s, 0], sizes[s, 1], object_starts[s + 1] - object_starts[s]


@kernel
def _scratch(rows, sizes, object_starts):
    """A grid, object boxes and object pixels big enough for every row of ``rows``."""
    max_h, max_w, max_n = 1, 1, 1
    for s in rows:
        max_h, max_w = max(max_h, sizes[s, 0]), max(max_w, sizes[s, 1])
        max_n = max(max_n, object_starts[s + 1] - object_starts[s])
    return Scratch(grid=np.zeros((max_h, max_w), np.int8), boxes=np.zeros((max_n, 4), np.int32),
                   pixels=np.zeros((max_n, max_h * max_w), np.int8))


@kernel
def _same(grid, cells, start, height, width):
    """True when ``grid[:height, :width]`` holds the row-major ``cells[start:]``."""
    for r in range(height):
        for c in range(width):
            if grid[r, c] != cells[start + r * width + c]:
                return False
    return True


@kernel
def replay(rows, sizes, inputs, input_starts, outputs, output_starts, tokens, token_starts, ids, positions,
           object_starts, bank, status):
    """Replay the stored rows ``rows``; ``status[j]`` gets the outcome of row ``rows[j]`` (``REPLAYED``, ...).

    Per stored row ``s``: ``sizes[s]`` (height, width) of both grids; its cells row-major in
    ``inputs[input_starts[s]:]`` and ``outputs[output_starts[s]:]`` (int8); its sequence (int64
    tokens) in ``tokens[token_starts[s]:token_starts[s + 1]]``; its objects' bank ids and top-left
    positions ((m, 2) int64) at ``object_starts[s]:object_starts[s + 1]``. ``bank`` = (pixels,
    offsets, shapes) of the object bank.
    """
    scratch = _scratch(rows, sizes, object_starts)
    grid, boxes, pixels = scratch.grid, scratch.boxes, scratch.pixels
    for j in range(rows.shape[0]):
        s, height, width, n = _row(rows, j, sizes, object_starts)
        if not _load_objects(s, sizes, ids, positions, object_starts, bank, boxes, pixels):
            status[j] = BAD_OBJECT
            continue
        render_scene(boxes, pixels, n, height, width, grid)
        if not _same(grid, inputs, input_starts[s], height, width):
            status[j] = INPUT_DIFFERS
            continue
        if run_scene(tokens[token_starts[s]: token_starts[s + 1]], height, width, boxes[:n], pixels[:n], grid) != OK:
            status[j] = CANNOT_REPLAY
        elif not _same(grid, outputs, output_starts[s], height, width):
            status[j] = OUTPUT_DIFFERS
        else:
            status[j] = REPLAYED


@kernel
def replay_frames(rows, sizes, tokens, token_starts, ids, positions, object_starts, frames, frame_starts,
                  frame_offsets, bank, status):
    """Re-derive the stored frames of ``rows`` step by step; ``status[j]`` as :func:`replay` (input
    for frame 0, output for a later frame that differs; ``CANNOT_REPLAY`` also when a row holds
    another number of frames than steps + 1).

    Row ``s``'s frames are the stored grids ``frame_offsets[s]`` to ``frame_offsets[s + 1]``; grid
    ``f``'s cells row-major at ``frames[frame_starts[f]:]``, each of the row's ``sizes[s]``; the
    other arrays as :func:`replay`.
    """
    scratch = _scratch(rows, sizes, object_starts)
    grid, boxes, pixels = scratch.grid, scratch.boxes, scratch.pixels
    for j in range(rows.shape[0]):
        s, height, width, n = _row(rows, j, sizes, object_starts)
        first, depth = frame_offsets[s], token_starts[s + 1] - token_starts[s]
        if frame_offsets[s + 1] - first != depth + 1:
            status[j] = CANNOT_REPLAY
            continue
        if not _load_objects(s, sizes, ids, positions, object_starts, bank, boxes, pixels):
            status[j] = BAD_OBJECT
            continue
        render_scene(boxes, pixels, n, height, width, grid)
        if not _same(grid, frames, frame_starts[first], height, width):
            status[j] = INPUT_DIFFERS
            continue
        status[j] = REPLAYED
        for step in range(depth):
            start = token_starts[s] + step
            if run_scene(tokens[start: start + 1], height, width, boxes[:n], pixels[:n], grid) != OK:
                status[j] = CANNOT_REPLAY
                break
            if not _same(grid, frames, frame_starts[first + 1 + step], height, width):
                status[j] = OUTPUT_DIFFERS
                break


@kernel
def _same_objects(boxes, pixels, n, stored, s, step):
    """True when objects ``0..n-1`` hold the boxes and tight pixels of :data:`StoredObjects` ``stored`` for
    row ``s``'s step ``step``."""
    objects, steps, object_boxes, cells, cell_starts = (stored.objects, stored.steps, stored.boxes, stored.cells,
                                                        stored.cell_starts)
    for i in range(n):
        e = steps[objects[s] + i] + step
        h, w = boxes[i, 2], boxes[i, 3]
        for c in range(4):
            if boxes[i, c] != object_boxes[e, c]:
                return False
        start = cell_starts[e]
        for x in range(h * w):
            if pixels[i, x] != cells[start + x]:
                return False
    return True


@kernel
def replay_objects(rows, sizes, tokens, token_starts, ids, positions, object_starts, stored, bank, status):
    """Re-derive the stored object frames of ``rows`` step by step; ``status[j]`` as :func:`replay`
    (``INPUT_DIFFERS`` when step 0 is not the objects placed from the bank, ``OUTPUT_DIFFERS`` when a
    later step is not the engine's step from the one before).

    ``stored`` is a :data:`StoredObjects` (objects, steps, boxes, cells, cell_starts): stored object ``k`` (row ``s``'s are
    ``objects[s]`` to ``objects[s + 1]``, as many as the row's bank objects) has entries ``steps[k]`` (its step 0) to
    ``steps[k + 1]``, one per step; entry ``e``'s box (row, col, height, width) is ``boxes[e]``, its
    tight pixels row-major at ``cells[cell_starts[e]:]``. Every object of a row must hold depth + 1
    entries whose arrays match their boxes (checked by the caller). Other arrays as :func:`replay`.
    """
    scratch = _scratch(rows, sizes, object_starts)
    grid, boxes, pixels = scratch.grid, scratch.boxes, scratch.pixels
    for j in range(rows.shape[0]):
        s, height, width, n = _row(rows, j, sizes, object_starts)
        if not _load_objects(s, sizes, ids, positions, object_starts, bank, boxes, pixels):
            status[j] = BAD_OBJECT
            continue
        if not _same_objects(boxes, pixels, n, stored, s, 0):
            status[j] = INPUT_DIFFERS
            continue
        status[j] = REPLAYED
        for step in range(token_starts[s + 1] - token_starts[s]):
            start = token_starts[s] + step
            if run_scene(tokens[start: start + 1], height, width, boxes[:n], pixels[:n], grid) != OK:
                status[j] = CANNOT_REPLAY
                break
            if not _same_objects(boxes, pixels, n, stored, s, 1 + step):
                status[j] = OUTPUT_DIFFERS
                break
