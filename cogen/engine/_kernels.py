"""Numba kernels of the transformation engine: one object step, whole scenes, rendering.

All kernels live in this one module on purpose: Numba's on-disk cache only notices edits to a
kernel's own file, so kernels that call each other must share it. Every kernel is compiled
with :func:`cogen.jit.kernel`. Kernels take arrays and scalars only; the plain-Python API
(validation, names) is :mod:`cogen.engine.scene`.

Object layout, shared by every kernel:

* ``box``    int32[4] = (row, col, h, w): the top-left anchor and size of the *tight* box;
* ``pixels`` int8 row of length >= h*w holding the box row-major (0 = background);
* a transformation writes its result into a 2-D int8 ``scratch`` (cells [:h', :w']), is then
  re-tightened if it is a crop, and copied back into ``pixels``. ``run_scene`` uses its output
  grid as scratch, so the hot path allocates nothing.

Each writer has exactly one call site and is never passed a constant argument: Numba compiles a
separate specialisation for every literal argument, and the whole call tree is re-optimised at
every level, so both would multiply the cold compile time.

Token ids come from :data:`cogen.engine.registry.TRANSFORMS` (they are compiled in as
constants; they never change). Token 0 is the identity. How each token's result is written
(``TOKEN_WRITER``) and whether it re-tightens (``TOKEN_RETIGHTENS``) are tables built from the
registry's records (:attr:`~cogen.engine.registry.Transform.writer`, ``retightens``), so this
module pins the registry's digest (``KERNELS_SHA256``, see :mod:`cogen.pins`).
"""

from __future__ import annotations

import numpy as np

from cogen.engine.registry import IDENTITY_TOKEN, TRANSFORMS, WRITERS
from cogen.jit import kernel

KERNELS_SHA256 = "bba47c1d48cb903e9625e34d10cfb44125582e84a464a7766d0039b5f8a22fe3"

__all__ = [
    "CANNOT_APPLY",
    "OK",
    "OUT_OF_GRID",
    "OVERLAP",
    "STATUS_NAMES",
    "apply_batch",
    "render_scene",
    "run_scene",
    "transform_object",
]

OK = 0
CANNOT_APPLY = 1
OUT_OF_GRID = 2
OVERLAP = 3
STATUS_NAMES = (None, "cannot_apply", "out_of_grid", "overlap")
"""Cause string of each status code (``None`` for OK), as used by ``SceneResult.cause``."""

_T = {name: record.token for name, record in TRANSFORMS.items()}
IDENTITY = IDENTITY_TOKEN
UP, DOWN, LEFT, RIGHT = _T["translate_up"], _T["translate_down"], _T["translate_left"], _T["translate_right"]
ROT90, FLIP_ROWS, FLIP_COLS = _T["rot90"], _T["mirror_horizontal"], _T["mirror_vertical"]
CROP_TOP, CROP_BOTTOM = _T["crop_top_side"], _T["crop_bottom_side"]
CROP_LEFT, CROP_RIGHT, CROP_CONTOURS = _T["crop_left_side"], _T["crop_right_side"], _T["crop_contours"]
RECOLOR, FILL_SAME, FILL_OTHER = _T["change_shape_color"], _T["fill_holes_same_color"], _T["fill_holes_different_color"]
EMPTY, EXTEND_SAME, EXTEND_OTHER = _T["empty_inside_pixels"], _T["extend_contours_same_color"], _T["extend_contours_different_color"]
PAD_TOP, PAD_BOTTOM, PAD_LEFT, PAD_RIGHT, PAD_RING = (
    _T["pad_top"], _T["pad_bottom"], _T["pad_left"], _T["pad_right"], _T["pad_shape"])
DOUBLE_RIGHT, DOUBLE_LEFT, DOUBLE_DOWN, DOUBLE_UP, QUADRUPLE = (
    _T["double_right"], _T["double_left"], _T["double_down"], _T["double_up"], _T["quadruple_shape"])
N_TOKENS = len(_T) + 1
del _T
W_MOVE, W_STRIDED, W_RECOLOR, W_FILL, W_EMPTY, W_EXTEND, W_PAD, W_TILE = (WRITERS.index(name) for name in (
    "move", "strided", "recolor", "fill", "empty", "extend", "pad", "tile"))
#: Per token: its writer (an index of ``WRITERS``) and whether the result re-tightens (crops).
TOKEN_WRITER = np.full(N_TOKENS, -1, np.int64)
TOKEN_RETIGHTENS = np.zeros(N_TOKENS, np.bool_)
for _record in TRANSFORMS.values():
    TOKEN_WRITER[_record.token] = WRITERS.index(_record.writer)
    TOKEN_RETIGHTENS[_record.token] = _record.retightens
del _record


# ----------------------------------------------------------------------------- geometry

@kernel
def _out_box(token, row, col, h, w):
    """Nominal (row, col, h, w) of the result, before crops re-tighten; h or w <= 0: impossible."""
    if token == UP:
        return row - 1, col, h, w
    if token == DOWN:
        return row + 1, col, h, w
    if token == LEFT:
        return row, col - 1, h, w
    if token == RIGHT:
        return row, col + 1, h, w
    if token == ROT90:
        return row, col, w, h
    if token == CROP_TOP:
        return row + h // 2, col, h - h // 2, w
    if token == CROP_BOTTOM:
        return row, col, (h + 1) // 2, w
    if token == CROP_LEFT:
        return row, col + w // 2, h, w - w // 2
    if token == CROP_RIGHT:
        return row, col, h, (w + 1) // 2
    if token == CROP_CONTOURS:
        return row + 1, col + 1, h - 2, w - 2
    if token == EXTEND_SAME or token == EXTEND_OTHER or token == PAD_RING:
        return row - 1, col - 1, h + 2, w + 2
    if token == PAD_TOP:
        return row - 1, col, h + 1, w
    if token == PAD_BOTTOM:
        return row, col, h + 1, w
    if token == PAD_LEFT:
        return row, col - 1, h, w + 1
    if token == PAD_RIGHT:
        return row, col, h, w + 1
    if token == DOUBLE_RIGHT:
        return row, col, h, 2 * w
    if token == DOUBLE_LEFT:
        return row, col - w, h, 2 * w
    if token == DOUBLE_DOWN:
        return row, col, 2 * h, w
    if token == DOUBLE_UP:
        return row - h, col, 2 * h, w
    if token == QUADRUPLE:
        return row - h, col - w, 2 * h, 2 * w
    if 0 < token < N_TOKENS:  # mirrors, colour, fills, empty: same box
        return row, col, h, w
    return row, col, 0, 0  # unknown token: cannot apply


# ----------------------------------------------------------------------------- colour helpers

@kernel
def _most_frequent_color(src, size):
    """Most frequent non-zero colour of ``src[:size]``; ties go to the smallest colour (0 if none)."""
    best, best_count = 0, 0
    for color in range(1, 10):
        count = 0
        for k in range(size):
            if src[k] == color:
                count += 1
        if count > best_count:
            best, best_count = color, count
    return best


@kernel
def _next_color(color):
    """The colour shift c -> (c mod 9) + 1."""
    return color % 9 + 1


# ----------------------------------------------------------------------------- pixel writers

@kernel
def _strides(token, h, w, top, left):
    """(start, step_row, step_col) of rot90, the mirrors and the crops for _write_strided.

    ``top`` and ``left`` locate a crop's kept window in the box.
    """
    if token == ROT90:
        return w - 1, -1, w
    if token == FLIP_ROWS:
        return (h - 1) * w, -w, 1
    if token == FLIP_COLS:
        return w - 1, w, -1
    return top * w + left, w, 1


@kernel
def _write_strided(src, start, step_row, step_col, scratch, out_h, out_w):
    """scratch[i, j] = src[start + i*step_row + j*step_col] for i < out_h, j < out_w.

    See :func:`_strides` for the parameters of each transformation.
    """
    for i in range(out_h):
        for j in range(out_w):
            scratch[i, j] = src[start + i * step_row + j * step_col]


@kernel
def _write_recolor(src, h, w, scratch):
    """scratch[:h, :w] = the box with every colour shifted by one."""
    for i in range(h):
        for j in range(w):
            value = src[i * w + j]
            scratch[i, j] = _next_color(value) if value != 0 else 0


@kernel
def _write_empty(src, h, w, scratch):
    """scratch[:h, :w] = the box without pixels whose 4 neighbours are all non-zero."""
    for i in range(h):
        for j in range(w):
            k = i * w + j
            inner = (0 < i < h - 1 and 0 < j < w - 1 and src[k - w] != 0 and src[k + w] != 0
                     and src[k - 1] != 0 and src[k + 1] != 0)
            scratch[i, j] = 0 if inner else src[k]


@kernel
def _mark_outside(src, h, w, scratch):
    """Copy the box into scratch with every 0 that is 4-connected to the outside set to -1.

    Returns the number of hole cells (zeros left). Sweeps alternate direction until nothing
    changes, so no stack is needed.
    """
    for i in range(h):
        for j in range(w):
            value = src[i * w + j]
            scratch[i, j] = -1 if value == 0 and (i == 0 or j == 0 or i == h - 1 or j == w - 1) else value
    changed, forward = True, True
    while changed:
        changed = False
        for a in range(1, h - 1):
            i = a if forward else h - 1 - a
            for b in range(1, w - 1):
                j = b if forward else w - 1 - b
                if scratch[i, j] == 0 and (scratch[i - 1, j] == -1 or scratch[i + 1, j] == -1
                                           or scratch[i, j - 1] == -1 or scratch[i, j + 1] == -1):
                    scratch[i, j] = -1
                    changed = True
        forward = not forward
    holes = 0
    for i in range(h):
        for j in range(w):
            holes += scratch[i, j] == 0
    return holes


@kernel
def _write_fill(src, h, w, scratch, same_color):
    """Fill holes, if any (else identity): repaint all in the most frequent colour, or holes in the next one."""
    hollow = _mark_outside(src, h, w, scratch) > 0
    color = _most_frequent_color(src, h * w)
    hole_color = color if same_color else _next_color(color)
    for i in range(h):
        for j in range(w):
            value = scratch[i, j]
            if value == -1:
                scratch[i, j] = 0
            elif value == 0:
                scratch[i, j] = hole_color
            elif same_color and hollow:
                scratch[i, j] = color


@kernel
def _write_extend(src, h, w, scratch, color):
    """scratch[:h+2, :w+2] = box with its edge rows/columns replicated outwards, corners empty.

    ``color`` 0 copies the edge colours; otherwise every added pixel gets ``color``.
    """
    for i in range(h + 2):
        for j in range(w + 2):
            y = min(max(i - 1, 0), h - 1)
            x = min(max(j - 1, 0), w - 1)
            corner = (i == 0 or i == h + 1) and (j == 0 or j == w + 1)
            value = 0 if corner else src[y * w + x]
            added = i == 0 or i == h + 1 or j == 0 or j == w + 1
            scratch[i, j] = color if (added and value != 0 and color != 0) else value


@kernel
def _write_pad(src, h, w, scratch, top, bottom, left, right):
    """Box with 0 or 1 pad row/column on each side: top 8, bottom 9, left 7, right 6.

    Side columns win at the corners (7 left, 6 right), as if painted after the rows.
    """
    for i in range(h + top + bottom):
        for j in range(w + left + right):
            y, x = i - top, j - left
            if x < 0:
                value = 7
            elif x >= w:
                value = 6
            elif y < 0:
                value = 8
            elif y >= h:
                value = 9
            else:
                value = src[y * w + x]
            scratch[i, j] = value


@kernel
def _write_tile(src, h, w, scratch, copies_down, copies_right):
    """scratch = the box tiled copies_down x copies_right times, no gaps."""
    for i in range(h * copies_down):
        y = i % h
        for copy in range(copies_right):
            for x in range(w):
                scratch[i, copy * w + x] = src[y * w + x]


# ----------------------------------------------------------------------------- one object

@kernel
def _tight_bounds(scratch, h, w):
    """(top, left, bottom, right) exclusive bounds of the non-zero cells of scratch[:h, :w].

    Returns (0, 0, 0, 0) when every cell is zero.
    """
    top, left, bottom, right = h, w, 0, 0
    for i in range(h):
        for j in range(w):
            if scratch[i, j] != 0:
                top, bottom = min(top, i), max(bottom, i + 1)
                left, right = min(left, j), max(right, j + 1)
    if bottom == 0:
        return 0, 0, 0, 0
    return top, left, bottom, right


@kernel
def _store(scratch, top, left, h, w, pixels):
    """pixels[:h*w] = scratch[top:top+h, left:left+w] row-major."""
    for i in range(h):
        for j in range(w):
            pixels[i * w + j] = scratch[top + i, left + j]


@kernel
def transform_object(token, box, pixels, scratch, height, width):
    """Apply ``token`` to one object in place; return OK, CANNOT_APPLY or OUT_OF_GRID.

    ``box`` int32[4] (row, col, h, w) and ``pixels`` (row-major box in ``pixels[:h*w]``) are
    updated only on OK. The result must fit in rows [0, height) and columns [0, width);
    ``scratch`` (2-D int8) must hold the nominal result, which is at most height x width.
    Crops re-tighten the box around what they keep; an empty result cannot apply.
    """
    row, col, h, w = np.int64(box[0]), np.int64(box[1]), np.int64(box[2]), np.int64(box[3])
    new_row, new_col, new_h, new_w = _out_box(token, row, col, h, w)
    if new_h <= 0 or new_w <= 0:
        return CANNOT_APPLY
    if new_row < 0 or new_col < 0 or new_row + new_h > height or new_col + new_w > width:
        return OUT_OF_GRID
    writer = TOKEN_WRITER[token]
    if writer == W_MOVE:  # translations only move the anchor
        box[0], box[1] = new_row, new_col
        return OK
    # write the nominal result into scratch[:new_h, :new_w]; one call site per writer
    if writer == W_RECOLOR:
        _write_recolor(pixels, h, w, scratch)
    elif writer == W_FILL:
        _write_fill(pixels, h, w, scratch, token == FILL_SAME)
    elif writer == W_EMPTY:
        _write_empty(pixels, h, w, scratch)
    elif writer == W_EXTEND:
        color = 0 if token == EXTEND_SAME else _next_color(_most_frequent_color(pixels, h * w))
        _write_extend(pixels, h, w, scratch, color)
    elif writer == W_PAD:  # the pad on each side is what the nominal box grew by there
        top, left = row - new_row, col - new_col
        _write_pad(pixels, h, w, scratch, top, new_h - h - top, left, new_w - w - left)
    elif writer == W_TILE:
        _write_tile(pixels, h, w, scratch, new_h // h, new_w // w)
    else:  # rot90, mirrors, crops: a strided read of the box
        start, step_row, step_col = _strides(token, h, w, new_row - row, new_col - col)
        _write_strided(pixels, start, step_row, step_col, scratch, new_h, new_w)
    top, left = 0, 0
    if TOKEN_RETIGHTENS[token]:
        top, left, bottom, right = _tight_bounds(scratch, new_h, new_w)
        if bottom == 0:
            return CANNOT_APPLY
        new_h, new_w = bottom - top, right - left
    _store(scratch, top, left, new_h, new_w, pixels)
    box[0], box[1], box[2], box[3] = new_row + top, new_col + left, new_h, new_w
    return OK


@kernel
def apply_batch(token, boxes, pixels, scratch, status):
    """Apply ``token`` to every object i of (boxes[i], pixels[i]) on an unbounded plane.

    status[i] gets OK or CANNOT_APPLY (never OUT_OF_GRID). With s the largest box side,
    ``pixels`` rows need length >= (2s+2)**2 and ``scratch`` at least (2s+2) x (2s+2): the
    largest box any transformation makes of an s x s box.
    """
    for i in range(boxes.shape[0]):
        box = boxes[i]
        row, col, side = box[0], box[1], max(box[2], box[3])
        box[0], box[1] = side + 1, side + 1  # room for any result inside a (3s+2)-square plane
        status[i] = transform_object(token, box, pixels[i], scratch, 3 * side + 2, 3 * side + 2)
        box[0] += row - (side + 1)
        box[1] += col - (side + 1)


# ----------------------------------------------------------------------------- scenes

@kernel
def _overlap(boxes, pixels, a, b):
    """True if objects a and b have a non-zero pixel on the same cell."""
    top = max(boxes[a, 0], boxes[b, 0])
    bottom = min(boxes[a, 0] + boxes[a, 2], boxes[b, 0] + boxes[b, 2])
    left = max(boxes[a, 1], boxes[b, 1])
    right = min(boxes[a, 1] + boxes[a, 3], boxes[b, 1] + boxes[b, 3])
    for r in range(top, bottom):
        for c in range(left, right):
            if (pixels[a, (r - boxes[a, 0]) * boxes[a, 3] + c - boxes[a, 1]] != 0
                    and pixels[b, (r - boxes[b, 0]) * boxes[b, 3] + c - boxes[b, 1]] != 0):
                return True
    return False


@kernel
def _any_overlap(boxes, pixels, count):
    """True if any two of the first ``count`` objects overlap."""
    for b in range(1, count):
        for a in range(b):
            if _overlap(boxes, pixels, a, b):
                return True
    return False


@kernel
def _clear(grid, height, width):
    """grid[:height, :width] = 0."""
    for r in range(height):
        for c in range(width):
            grid[r, c] = 0


@kernel
def render_scene(boxes, pixels, n, height, width, grid):
    """Zero grid[:height, :width] and draw the non-zero pixels of objects 0..n-1 into it.

    Arguments: ``boxes`` int32[:, ::1] rows (row, col, h, w); ``pixels`` int8[:, ::1] with
    object i's box row-major in pixels[i, :h*w]; ``grid`` int8[:, ::1] of at least
    height x width. Objects must lie inside the grid (not checked); later objects are drawn
    over earlier ones. Cells outside height x width are untouched.
    """
    _clear(grid, height, width)
    for i in range(n):
        row, col, h, w = boxes[i, 0], boxes[i, 1], boxes[i, 2], boxes[i, 3]
        for y in range(h):
            for x in range(w):
                value = pixels[i, y * w + x]
                if value != 0:
                    grid[row + y, col + x] = value


@kernel
def run_scene(sequence, height, width, boxes, pixels, grid):
    """Apply a token sequence to every object of a scene, checking every intermediate frame.

    Arguments:

    * ``sequence`` int64[::1]: token ids (``TRANSFORMS[name].token``); token 0 is the identity
      and is skipped; an unknown token cannot apply.
    * ``height``, ``width``: grid size.
    * ``boxes`` int32[:, ::1], shape (n, 4), rows (row, col, h, w) of the tight boxes; updated
      in place to the final boxes.
    * ``pixels`` int8[:, ::1], shape (n, cap) with cap >= height * width: object i's tight box
      row-major in pixels[i, :h*w]; updated in place.
    * ``grid`` int8[:, ::1], at least height x width: receives the final frame (0 elsewhere in
      [:height, :width]); cells outside height x width are never touched. It is also the
      scratch space of the transformations, so nothing is allocated.

    Each step transforms all objects in order, then checks the frame: every object inside the
    grid (objects are checked in order; an object that leaves the grid is rejected before it is
    stored) and no two objects on the same cell (contact is allowed). The input frame is the
    caller's and is not checked.

    Returns OK (0), CANNOT_APPLY (1), OUT_OF_GRID (2) or OVERLAP (3): the first failure in
    frame order. After a failure, boxes and pixels hold a partial state and
    grid[:height, :width] is zeroed.
    """
    n = boxes.shape[0]
    for s in range(sequence.shape[0]):
        token = sequence[s]
        if token == IDENTITY:
            continue
        for i in range(n):
            status = transform_object(token, boxes[i], pixels[i], grid, height, width)
            if status != OK:
                if status == OUT_OF_GRID and _any_overlap(boxes, pixels, i):
                    status = OVERLAP  # an earlier object of this frame already failed
                _clear(grid, height, width)
                return status
        if _any_overlap(boxes, pixels, n):
            _clear(grid, height, width)
            return OVERLAP
    render_scene(boxes, pixels, n, height, width, grid)
    return OK
