"""Objects of a grid: 8-connected components of coloured cells (Moore neighbourhood).

Two readings exist in the papers' code, and both are here:

* colour-agnostic (``same_color=False``): touching cells of any colours form one object —
  COGITAO's reference ``_extract_objects`` and Compositional-ARC's code (``shape accuracy``);
* same-colour (``same_color=True``): only cells of one colour connect — the Compositional-ARC
  paper's definition of an object (App. D.1).

The work is done by Numba kernels, loaded on first call.
"""

from __future__ import annotations

import numpy as np

from cogen.metrics.grids import GridStack, as_stack

__all__ = ["components", "label_stack"]


def label_stack(cells: np.ndarray, same_color: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, counts)`` of a ``(n, height, width)`` int8 stack (PAD cells are never part of an object).

    ``labels[k]`` numbers grid ``k``'s objects 1, 2, ... in row-major order of their first cell
    (0 = no object); ``counts[k]`` is how many there are.
    """
    from cogen.metrics._kernels import label_components

    cells = np.ascontiguousarray(cells, np.int8)
    labels = np.zeros(cells.shape, np.int32)
    counts = np.zeros(len(cells), np.int32)
    label_components(cells, bool(same_color), labels, counts)
    return labels, counts


def components(grid, same_color: bool = False) -> list[np.ndarray]:
    """The objects of one grid, each as a full-size grid holding only that object's cells.

    >>> [c.tolist() for c in components([[1, 0, 0], [0, 2, 0], [0, 0, 0]])]
    [[[1, 0, 0], [0, 2, 0], [0, 0, 0]]]
    >>> len(components([[1, 0, 0], [0, 2, 0], [0, 0, 0]], same_color=True))
    2
    """
    stack: GridStack = as_stack([grid])
    labels, counts = label_stack(stack.cells, same_color)
    grid = stack.grid(0)
    shape = grid.shape
    return [np.where(labels[0, : shape[0], : shape[1]] == label, grid, 0).astype(np.int8)
            for label in range(1, int(counts[0]) + 1)]
