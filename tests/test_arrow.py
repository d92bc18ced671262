"""Arrow columns from the sampler's padded buffers: each row is its grid's true corner."""

import numpy as np
import pytest

from cogen.pipeline.arrow import grids_column


@pytest.mark.parametrize("full", [True, False])
def test_grids_column_keeps_each_grids_own_size(full):
    rng = np.random.default_rng(7)
    for _ in range(50):
        k, h, w = rng.integers(1, 6, 3)
        grids = rng.integers(-1, 10, (k, h, w)).astype(np.int8)  # -1 stands for padding
        heights = np.full(k, h) if full else rng.integers(1, h + 1, k)
        widths = np.full(k, w) if full else rng.integers(1, w + 1, k)
        column = grids_column(grids, np.stack([heights, widths], axis=1))
        assert column.to_pylist() == [grids[i, :heights[i], :widths[i]].tolist() for i in range(k)]
