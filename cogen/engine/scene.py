"""Plain-Python API of the engine: validate, convert, call the kernels of :mod:`cogen.engine._kernels`.

An object is a :class:`PlacedObject` (top-left row, top-left column, tight int8 box with 0 as
background). These functions are for convenience and tests; the generator calls
:func:`cogen.engine._kernels.run_scene` from its own Numba code.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np

from cogen.engine import _kernels
from cogen.engine.registry import Transform, resolve, sequence_tokens
from cogen.errors import PlacementError, TransformError

__all__ = ["PlacedObject", "SceneResult", "apply", "apply_sequence", "pack", "render", "replay_frames", "replay_objects",
           "replay_scenes", "unpack"]


class PlacedObject(NamedTuple):
    """An object on a grid: anchor (top-left) ``row`` and ``col``, and its tight int8 ``grid``."""

    row: int
    col: int
    grid: np.ndarray


class SceneResult(NamedTuple):
    """Outcome of :func:`apply_sequence`.

    ``ok``: every step applied and every frame was valid. ``cause``: None, or why the first
    failing step failed (``"cannot_apply"``, ``"out_of_grid"``, ``"overlap"``). ``objects``: the
    final objects, or on failure the objects of the last valid frame. ``grid``: the final
    frame (int8, height x width), None on failure.
    """

    ok: bool
    cause: str | None
    objects: tuple[PlacedObject, ...]
    grid: np.ndarray | None


def _tight_grid(obj) -> np.ndarray:
    """The object's box as a C-contiguous int8 array, after checking it is a valid tight box."""
    grid = np.ascontiguousarray(obj[2], dtype=np.int8)
    if grid.ndim != 2 or grid.size == 0:
        raise TransformError(f"an object's grid must be a non-empty 2-D array, got shape {grid.shape}")
    if grid.min() < 0 or grid.max() > 9:
        raise TransformError("an object's colours must lie in 0..9")
    if not (grid[0].any() and grid[-1].any() and grid[:, 0].any() and grid[:, -1].any()):
        raise TransformError("an object's grid must be its tight box (no empty outer row or column)")
    return grid


def pack(objects: Sequence, cap: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Objects ((row, col, tight grid) each) as the kernels' arrays.

    Returns ``boxes`` (n, 4) int32 rows (row, col, h, w) and ``pixels`` (n, cap) int8 with
    object i's box row-major in ``pixels[i, :h*w]``. ``cap`` defaults to the largest box size;
    :func:`cogen.engine.run_scene` needs ``cap >= height * width``.
    """
    if cap is None:
        cap = max([1] + [np.size(obj[2]) for obj in objects])
    boxes = np.zeros((len(objects), 4), dtype=np.int32)
    pixels = np.zeros((len(objects), cap), dtype=np.int8)
    for i, obj in enumerate(objects):
        grid = _tight_grid(obj)
        boxes[i] = (obj[0], obj[1], *grid.shape)
        pixels[i, : grid.size] = grid.ravel()
    return boxes, pixels


def unpack(boxes: np.ndarray, pixels: np.ndarray) -> tuple[PlacedObject, ...]:
    """The inverse of :func:`pack`: one :class:`PlacedObject` (copied arrays) per box."""
    return tuple(PlacedObject(int(r), int(c), pixels[i, : h * w].reshape(h, w).copy())
                 for i, (r, c, h, w) in enumerate(boxes))


def apply(transform: str | Transform, obj) -> PlacedObject | None:
    """Apply one transformation (name, alias or record) to one object on an unbounded plane.

    Returns the new :class:`PlacedObject`, or None when the transformation cannot apply
    (``crop_contours`` with an empty interior).

    >>> apply("rot90", PlacedObject(5, 5, np.array([[1, 2, 3]], np.int8))).grid.tolist()
    [[3], [2], [1]]
    """
    token = resolve(transform).token
    grid = _tight_grid(obj)
    side = 2 * max(grid.shape) + 2
    boxes, pixels = pack([obj], side * side)
    status = np.empty(1, dtype=np.int64)
    _kernels.apply_batch(token, boxes, pixels, np.empty((side, side), dtype=np.int8), status)
    if status[0] != _kernels.OK:
        return None
    return unpack(boxes, pixels)[0]


def _check_inside(boxes: np.ndarray, height: int, width: int) -> None:
    """Raise PlacementError unless every object's box is inside the grid."""
    for i, (r, c, h, w) in enumerate(boxes):
        if r < 0 or c < 0 or r + h > height or c + w > width:
            raise PlacementError(f"object {i} (box {h}x{w} at {r},{c}) is not inside the {height}x{width} grid")


def _check_frame(boxes: np.ndarray, pixels: np.ndarray, height: int, width: int) -> None:
    """Raise PlacementError unless every object is inside the grid and none overlaps another."""
    _check_inside(boxes, height, width)
    counts = np.zeros((height, width), dtype=np.int32)
    for i, (r, c, h, w) in enumerate(boxes):
        counts[r : r + h, c : c + w] += pixels[i, : h * w].reshape(h, w) != 0
    if counts.max(initial=0) > 1:
        raise PlacementError("the input objects overlap")


def apply_sequence(sequence: Iterable[str | Transform], objects: Sequence, height: int,
                   width: int) -> SceneResult:
    """Apply a sequence of transformations to every object of a height x width scene.

    At each step all objects are transformed, then the frame is checked: every object inside
    the grid, no two objects on the same cell (contact allowed). The input frame must be valid
    (:class:`cogen.errors.PlacementError` otherwise). See :class:`SceneResult`.
    """
    tokens = sequence_tokens(sequence)
    cap = max([height * width] + [np.size(obj[2]) for obj in objects])
    boxes, pixels = pack(objects, cap)
    _check_frame(boxes, pixels, height, width)
    grid = np.zeros((height, width), dtype=np.int8)
    final_boxes, final_pixels = boxes.copy(), pixels.copy()
    status = _kernels.run_scene(tokens, height, width, final_boxes, final_pixels, grid)
    if status == _kernels.OK:
        return SceneResult(True, None, unpack(final_boxes, final_pixels), grid)
    for k in range(len(tokens)):  # replay step by step to report the last valid frame
        next_boxes, next_pixels = boxes.copy(), pixels.copy()
        if _kernels.run_scene(tokens[k : k + 1], height, width, next_boxes, next_pixels, grid):
            break
        boxes, pixels = next_boxes, next_pixels
    return SceneResult(False, _kernels.STATUS_NAMES[status], unpack(boxes, pixels), None)


def render(objects: Sequence, height: int, width: int) -> np.ndarray:
    """Draw objects on a zero height x width int8 grid (later objects over earlier ones).

    Raises :class:`cogen.errors.PlacementError` if an object is not inside the grid.
    """
    boxes, pixels = pack(objects)
    _check_inside(boxes, height, width)
    grid = np.zeros((height, width), dtype=np.int8)
    _kernels.render_scene(boxes, pixels, len(objects), height, width, grid)
    return grid


def replay_scenes(rows, sizes, inputs, input_starts, outputs, output_starts, tokens, token_starts, ids, positions,
                  object_starts, bank) -> np.ndarray:
    """Replay stored scenes with the engine: the outcome of each row of ``rows`` (0: input drawn by
    its objects and output equal to the engine's; see :mod:`cogen.engine._replay` for the arrays)."""
    from cogen.engine import _replay

    def ints(array, dtype=np.int64):
        return np.ascontiguousarray(array, dtype)

    status = np.zeros(len(rows), np.int64)
    _replay.replay(ints(rows), ints(sizes), ints(inputs, np.int8), ints(input_starts), ints(outputs, np.int8),
                   ints(output_starts), ints(tokens), ints(token_starts), ints(ids), ints(positions).reshape(-1, 2),
                   ints(object_starts), tuple(ints(a, a.dtype) for a in bank), status)
    return status


def replay_frames(rows, sizes, tokens, token_starts, ids, positions, object_starts, frames, frame_starts,
                  frame_offsets, bank) -> np.ndarray:
    """Re-derive stored frames step by step with the engine: the outcome of each row of ``rows``
    (0: every frame equal to the engine's; see :func:`cogen.engine._replay.replay_frames`)."""
    from cogen.engine import _replay

    def ints(array, dtype=np.int64):
        return np.ascontiguousarray(array, dtype)

    status = np.zeros(len(rows), np.int64)
    _replay.replay_frames(ints(rows), ints(sizes), ints(tokens), ints(token_starts), ints(ids),
                          ints(positions).reshape(-1, 2), ints(object_starts), ints(frames, np.int8),
                          ints(frame_starts), ints(frame_offsets), tuple(ints(a, a.dtype) for a in bank), status)
    return status


def replay_objects(rows, sizes, tokens, token_starts, ids, positions, object_starts, stored, bank) -> np.ndarray:
    """Re-derive stored object frames step by step with the engine: the outcome of each row of ``rows``
    (0: every object's box and array at every step equal to the engine's; ``stored`` = (objects, steps,
    boxes, cells, cell_starts), see :func:`cogen.engine._replay.replay_objects`)."""
    from cogen.engine import _replay

    def ints(array, dtype=np.int64):
        return np.ascontiguousarray(array, dtype)

    objects, steps, boxes, cells, cell_starts = stored
    arrays = _replay.StoredObjects(objects=ints(objects), steps=ints(steps), boxes=ints(boxes).reshape(-1, 4),
                                   cells=ints(cells, np.int8), cell_starts=ints(cell_starts))
    status = np.zeros(len(rows), np.int64)
    _replay.replay_objects(ints(rows), ints(sizes), ints(tokens), ints(token_starts), ints(ids),
                           ints(positions).reshape(-1, 2), ints(object_starts), arrays,
                           tuple(ints(a, a.dtype) for a in bank), status)
    return status
