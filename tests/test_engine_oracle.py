"""The kernels agree with the NumPy oracle on every transformation, object by object."""

from __future__ import annotations

import numpy as np
import oracle
import pytest

from cogen.engine import TRANSFORMS, PlacedObject, apply, pack
from cogen.engine._kernels import OK, apply_batch

N_OBJECTS = 2000


def kernel_results(token: int, objects: list[np.ndarray], anchors: np.ndarray) -> list:
    """apply_batch on all objects at once: per object (row, col, grid) or None."""
    side = max(max(g.shape) for g in objects)
    boxes, pixels = pack([(r, c, g) for (r, c), g in zip(anchors, objects, strict=True)], (2 * side + 2) ** 2)
    status = np.zeros(len(objects), dtype=np.int64)
    apply_batch(token, boxes, pixels, np.zeros((2 * side + 2, 2 * side + 2), np.int8), status)
    return [(int(r), int(c), pixels[i, : h * w].reshape(h, w)) if status[i] == OK else None
            for i, (r, c, h, w) in enumerate(boxes)]


def _same(expected, got) -> bool:
    if expected is None or got is None:
        return expected is None and got is None
    return expected[:2] == got[:2] and np.array_equal(expected[2], got[2])


@pytest.fixture(scope="module", params=["random", "bank"])
def objects(request):
    assert oracle.bank_available(), "objects/manifest.json is missing: the object bank ships with the repository"
    objects = oracle.sample_objects(N_OBJECTS, seed=3, source=request.param)
    anchors = np.random.default_rng(4).integers(-20, 21, size=(len(objects), 2))
    return objects, anchors


@pytest.mark.parametrize("name", TRANSFORMS)
def test_kernel_matches_oracle(name, objects):
    grids, anchors = objects
    got = kernel_results(TRANSFORMS[name].token, grids, anchors)
    for (row, col), grid, result in zip(anchors, grids, got, strict=True):
        expected = oracle.transform(name, int(row), int(col), grid)
        assert _same(expected, result), f"{name} on {grid.tolist()} at ({row}, {col}): {expected} != {result}"


@pytest.mark.parametrize("name", TRANSFORMS)
def test_python_wrapper_matches_oracle_on_edge_cases(name):
    for grid in oracle.EDGE_CASES:
        result = apply(name, PlacedObject(0, 0, grid))
        assert _same(oracle.transform(name, 0, 0, grid), result), f"{name} on {grid.tolist()}"


def test_crop_contours_on_empty_interior_cannot_apply():
    ring = np.array([[1, 1, 1, 1], [1, 0, 0, 1], [1, 1, 1, 1]], np.int8)
    assert apply("crop_contours", PlacedObject(0, 0, ring)) is None
    assert apply("crop_contours", PlacedObject(0, 0, np.array([[1, 2]], np.int8))) is None


def test_wrapper_rejects_loose_boxes_and_bad_colours():
    from cogen.errors import TransformError

    with pytest.raises(TransformError):
        apply("rot90", PlacedObject(0, 0, np.array([[0, 0], [0, 1]], np.int8)))
    with pytest.raises(TransformError):
        apply("rot90", PlacedObject(0, 0, np.array([[10]])))
