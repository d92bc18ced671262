"""Object statistics of bank objects, and the reference generator's figures to compare them with.

:data:`REFERENCE` holds the figures of cogen's fidelity review (the COGITAO reference generator run
with cogen's own spec parameters on a bank rebuilt with the authors' scripts; "Object-level
quantities" table), for the three pools the experiments draw from: C3 training objects (fully
connected, at most 5x5), G4 out of domain (asymmetric, multi-coloured, at most 5x5) and G5 out of
domain (the same, 6x6 to 10x10). The review measured objects as the generator drew them, except
``square box``, which it measured on the pool. :func:`object_statistics` measures the same
things on any list of object ids (repeats count, so the ids of a build's rows give the drawn
distribution); :func:`tvd` compares two distributions over the bins the reference gives.

``benchmarks/bank_fidelity.py`` prints the whole comparison.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = ["REFERENCE", "STATISTICS", "object_statistics", "tvd"]

STATISTICS = {
    "height": "box height (rows), share per value",
    "pixels": "pixels per object (mean)",
    "colours": "distinct colours per object",
    "square box": "box has as many rows as columns",
    "transpose": "mask equals its transpose",
    "point only": "mask unchanged by a 180-degree turn, with no mirror or transpose symmetry",
    "4-connected": "mask is one 4-connected component",
    "hollow": "is_shape_hollow",
}
"""Every statistic :func:`object_statistics` returns, with what it measures."""

Distribution = Mapping[str, float]

REFERENCE: Mapping[str, Mapping[str, Distribution]] = {
    "C3 train": {
        "height": {"1": 0.028, "3": 0.317, "5": 0.260}, "pixels": {"mean": 8.8},
        "colours": {"1": 0.167, "2": 0.708, ">=3": 0.125}, "square box": {"yes": 0.76},
        "transpose": {"yes": 0.521}, "point only": {"yes": 0.004}, "4-connected": {"yes": 0.692},
        "hollow": {"yes": 0.157},
    },
    "G4 out of domain": {
        "height": {}, "pixels": {"mean": 9.1}, "colours": {"2": 0.854}, "square box": {"yes": 0.92},
        "transpose": {"yes": 0.483}, "point only": {"yes": 0.008}, "4-connected": {"yes": 0.647},
        "hollow": {"yes": 0.164},
    },
    "G5 out of domain": {
        "height": {"6": 0.403, "8": 0.171, "10": 0.050}, "pixels": {"mean": 29.0}, "colours": {"2": 0.841},
        "square box": {"yes": 0.87}, "transpose": {"yes": 0.425}, "point only": {"yes": 0.0},
        "4-connected": {"yes": 0.494}, "hollow": {"yes": 0.664},
    },
}
"""The review's reference figures per pool and statistic (shares in 0..1; the review gives some
bins only, and no height bins for G4)."""


def _components4(mask: np.ndarray) -> int:
    """Number of 4-connected components of ``mask`` (depth-first search)."""
    todo = set(zip(*np.nonzero(mask), strict=True))
    count = 0
    while todo:
        count += 1
        stack = [todo.pop()]
        while stack:
            r, c = stack.pop()
            for cell in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                if cell in todo:
                    todo.remove(cell)
                    stack.append(cell)
    return count


def _features(grid: np.ndarray, hollow: bool) -> tuple:
    """(height, pixels, colours, square, transpose, point only, 4-connected, hollow) of one object."""
    mask = grid != 0
    h, w = mask.shape
    mirror = (mask == mask[::-1]).all() or (mask == mask[:, ::-1]).all()
    transpose = h == w and (mask == mask.T).all()
    antitranspose = h == w and (mask == mask[::-1, ::-1].T).all()
    half_turn = (mask == mask[::-1, ::-1]).all()
    point_only = half_turn and not (mirror or transpose or antitranspose)
    return (h, int(mask.sum()), len(np.unique(grid[mask])), h == w, bool(transpose), bool(point_only),
            _components4(mask) == 1, hollow)


def object_statistics(bank, ids) -> dict[str, dict[str, float]]:
    """Every statistic of :data:`STATISTICS` over the objects ``ids`` of ``bank`` (repeats count)."""
    unique, counts = np.unique(np.asarray(ids, np.int64), return_counts=True)
    if not len(unique):
        raise ValueError("no object ids to measure")
    hollow = bank.column("is_shape_hollow")
    table = np.array([_features(bank.object(int(i)), bool(hollow[i])) for i in unique], np.int64)
    weights = counts / counts.sum()

    def share(selected) -> float:
        return float(weights[selected].sum())

    height, pixels, colours = table[:, 0], table[:, 1], table[:, 2]
    stats = {
        "height": {str(k): share(height == k) for k in np.unique(height).tolist()},
        "pixels": {"mean": float(weights @ pixels)},
        "colours": {"1": share(colours == 1), "2": share(colours == 2), ">=3": share(colours >= 3)},
    }
    for column, name in enumerate(("square box", "transpose", "point only", "4-connected", "hollow"), 3):
        stats[name] = {"yes": share(table[:, column] == 1)}
    return stats


def tvd(ours: Distribution, reference: Distribution) -> float | None:
    """Total-variation distance over the reference's bins, the rest of each distribution lumped
    into one bin; ``None`` when the reference gives no bin (or only a mean)."""
    bins = [name for name in reference if name != "mean"]
    if not bins:
        return None
    gaps = [abs(ours.get(name, 0.0) - reference[name]) for name in bins]
    rest = abs((1 - sum(ours.get(name, 0.0) for name in bins)) - (1 - sum(reference[name] for name in bins)))
    return (sum(gaps) + rest) / 2
