"""Numba kernel of stubbornness: every in-domain sequence applied to every scene, compared with
the prediction and the target of that scene.

This module calls the engine's ``run_scene`` and ``render_scene``. Numba's cache only notices edits
to *this* file, so ``KERNELS_SHA256`` pins the engine kernels the cache was compiled against; while
the pin is stale the kernels compile without the cache (see :mod:`cogen.pins`; refresh with
``python -m cogen.pins``).
"""

from __future__ import annotations

import numpy as np

from cogen.engine._kernels import OK, render_scene, run_scene
from cogen.jit import kernel

KERNELS_SHA256 = "ceb448c6606419826ce5ccac4105b2620173d9b3fb5e6acbc63ac7dd18e876a4"

# Columns of the int64 ``wanted`` array: compare with the prediction, with the target, check the input.
WANT_PREDICTION, WANT_TARGET, CHECK_INPUT = 0, 1, 2


@kernel
def _same(grid, canvas, height, width):
    """True when grid[:height, :width] equals canvas[:height, :width]."""
    for r in range(height):
        for c in range(width):
            if grid[r, c] != canvas[r, c]:
                return False
    return True


@kernel
def match_sequences(tokens, starts, boxes, pixels, first, sizes, inputs, predictions, targets, wanted,
                    matched, reachable, verified):
    """For every scene ``k``: whether its objects draw ``inputs[k]`` (``verified``), the first
    sequence whose output equals ``predictions[k]`` (``matched``, -1 if none) and whether one
    equals ``targets[k]`` (``reachable``).

    * ``tokens`` int64[::1]: every sequence's tokens; sequence j is ``tokens[starts[j]:starts[j + 1]]``;
    * ``boxes`` int32 (objects, 4) and ``pixels`` int8 (objects, cap >= every height * width): all
      scenes' objects, scene k's in rows ``first[k]:first[k + 1]``; every object inside its grid;
    * ``sizes`` int64 (n, 2): height and width; ``inputs``, ``predictions``, ``targets`` int8
      (n, H, W) canvases; ``wanted`` int64 (n, 3): see ``WANT_PREDICTION`` ...
    """
    n = sizes.shape[0]
    most = 1
    for k in range(n):
        most = max(most, first[k + 1] - first[k])
    work_boxes = np.empty((most, 4), np.int32)
    work_pixels = np.empty((most, pixels.shape[1]), np.int8)
    grid = np.zeros((inputs.shape[1], inputs.shape[2]), np.int8)
    for k in range(n):
        a, b, height, width = first[k], first[k + 1], sizes[k, 0], sizes[k, 1]
        if wanted[k, CHECK_INPUT]:
            render_scene(boxes[a:b], pixels[a:b], b - a, height, width, grid)
            if not _same(grid, inputs[k], height, width):
                continue
        verified[k] = True
        want_prediction, want_target = wanted[k, WANT_PREDICTION] != 0, wanted[k, WANT_TARGET] != 0
        for j in range(starts.shape[0] - 1):
            if not (want_prediction or want_target):
                break
            work_boxes[: b - a] = boxes[a:b]
            work_pixels[: b - a] = pixels[a:b]
            if run_scene(tokens[starts[j]: starts[j + 1]], height, width, work_boxes[: b - a],
                         work_pixels[: b - a], grid) != OK:
                continue
            if want_prediction and _same(grid, predictions[k], height, width):
                matched[k] = j
                want_prediction = False
            if want_target and _same(grid, targets[k], height, width):
                reachable[k] = True
                want_target = False
