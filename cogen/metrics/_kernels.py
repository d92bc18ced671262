"""Numba kernels of the metrics: 8-connected components, object matching, normalised shape masks.

Grids come as one ``(n, height, width)`` int8 stack in which cells outside a grid hold ``PAD``
(-1); colours are 1..9 and 0 is background, so "``> 0``" means "a coloured cell of the grid".
The kernels call nothing outside this file (Numba's cache only notices edits to a kernel's own
file), and they are loaded on first use, so ``import cogen.metrics`` needs NumPy only.
"""

from __future__ import annotations

import numpy as np

from cogen.jit import kernel

#: Side of the grids whose normalised shapes fit one 100-bit mask (Compositional-ARC's 10x10).
SHAPE_SIDE = 10


@kernel
def _flood(grid, labels, row, col, label, same_color, stack):
    """Give ``label`` to the 8-connected component of coloured cells around (row, col); its size."""
    height, width = grid.shape
    color = grid[row, col]
    labels[row, col] = label
    stack[0, 0], stack[0, 1] = row, col
    top, size = 1, 0
    while top > 0:
        top -= 1
        r, c = stack[top, 0], stack[top, 1]
        size += 1
        for dr in range(-1, 2):
            for dc in range(-1, 2):
                rr, cc = r + dr, c + dc
                if rr < 0 or rr >= height or cc < 0 or cc >= width or labels[rr, cc] != 0 or grid[rr, cc] <= 0:
                    continue
                if same_color and grid[rr, cc] != color:
                    continue
                labels[rr, cc] = label
                stack[top, 0], stack[top, 1] = rr, cc
                top += 1
    return size


@kernel
def label_components(grids, same_color, labels, counts):
    """Label the 8-connected components of coloured cells of every grid (1, 2, ... in row-major
    order of their first cell; 0 elsewhere). ``same_color``: only cells of one colour connect
    (the Compositional-ARC paper's objects); otherwise colours are ignored (COGITAO's reference,
    Compositional-ARC's code). ``labels`` (int32, same shape) and ``counts`` (int32, one per
    grid) are filled in place.
    """
    n, height, width = grids.shape
    stack = np.empty((height * width, 2), np.int64)
    for k in range(n):
        labels[k, :, :] = 0
        label = 0
        for r in range(height):
            for c in range(width):
                if grids[k, r, c] > 0 and labels[k, r, c] == 0:
                    label += 1
                    _flood(grids[k], labels[k], r, c, label, same_color, stack)
        counts[k] = label


@kernel
def _sizes(labels, count, out):
    out[: count + 1] = 0
    height, width = labels.shape
    for r in range(height):
        for c in range(width):
            out[labels[r, c]] += 1


@kernel
def count_found(targets, predictions, target_labels, prediction_labels, target_counts, prediction_counts, found):
    """Per grid, the number of target components that the prediction reproduces exactly: a
    predicted component with the same cells and the same colours (COGITAO reference's match).

    All arrays share the ``(n, height, width)`` canvas; ``found`` (int32, one per grid) is filled.
    """
    n, height, width = targets.shape
    cap = height * width + 1
    target_size = np.zeros(cap, np.int64)
    prediction_size = np.zeros(cap, np.int64)
    partner = np.zeros(cap, np.int64)
    for k in range(n):
        _sizes(target_labels[k], target_counts[k], target_size)
        _sizes(prediction_labels[k], prediction_counts[k], prediction_size)
        partner[: target_counts[k] + 1] = 0
        for r in range(height):
            for c in range(width):
                a = target_labels[k, r, c]
                if a == 0 or partner[a] < 0:
                    continue
                b = prediction_labels[k, r, c]
                if b == 0 or predictions[k, r, c] != targets[k, r, c] or (partner[a] != 0 and partner[a] != b):
                    partner[a] = -1
                else:
                    partner[a] = b
        total = 0
        for a in range(1, target_counts[k] + 1):
            if partner[a] > 0 and prediction_size[partner[a]] == target_size[a]:
                total += 1
        found[k] = total


@kernel
def component_shapes(grids, labels, counts, masks, colors):
    """Normalised shape of every component as a 100-bit mask of cells (row - min row) * 10 +
    (col - min col) in two uint64 words (``masks[k, i]``: hi, lo), and the colour of its first cell.

    Grids must be at most 10x10; ``masks`` is ``(n, 100, 2)`` uint64, ``colors`` ``(n, 100)`` int8.
    """
    n, height, width = grids.shape
    rmin = np.empty(height * width + 1, np.int64)
    cmin = np.empty(height * width + 1, np.int64)
    for k in range(n):
        m = counts[k]
        rmin[: m + 1] = height
        cmin[: m + 1] = width
        for r in range(height):
            for c in range(width):
                a = labels[k, r, c]
                if a > 0:
                    if rmin[a] == height:
                        colors[k, a - 1] = grids[k, r, c]
                    rmin[a] = min(rmin[a], r)
                    cmin[a] = min(cmin[a], c)
        masks[k, :m, :] = 0
        for r in range(height):
            for c in range(width):
                a = labels[k, r, c]
                if a > 0:
                    bit = (r - rmin[a]) * SHAPE_SIDE + (c - cmin[a])
                    if bit >= 64:
                        masks[k, a - 1, 0] |= np.uint64(1) << np.uint64(bit - 64)
                    else:
                        masks[k, a - 1, 1] |= np.uint64(1) << np.uint64(bit)
