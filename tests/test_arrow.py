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


def test_numbered_strings_are_the_formatted_strings_byte_for_byte():
    """The digit-by-digit id column equals formatting and encoding each id (buffers included), at the
    powers of ten, at zero rows, for non-ASCII prefixes and numbers of up to 15 digits."""
    from cogen.pipeline.arrow import numbered_strings, string_array

    rng = np.random.default_rng(3)
    cases = [("C1-1-train-", 0, 0), ("x", 0, 12), ("", 0, 101), ("é-", 999, 3), ("a", 10**14 - 5, 10)]
    cases += [("-" * int(rng.integers(0, 20)), int(rng.integers(0, 10 ** int(rng.integers(1, 15)))),
               int(rng.integers(0, 300))) for _ in range(100)]
    for prefix, start, count in cases:
        ours = numbered_strings(prefix, start, count)
        formatted = string_array([f"{prefix}{i}" for i in range(start, start + count)])
        assert ours.equals(formatted), (prefix, start, count)
        assert [b.to_pybytes() for b in ours.buffers()[1:]] == [b.to_pybytes() for b in formatted.buffers()[1:]]
