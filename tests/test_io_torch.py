"""cogen.io.GridDataset: the documented torch path keeps dtypes, warns nothing, and gives split_arrays' rows."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from cogen.io import GridDataset, split_arrays

torch = pytest.importorskip("torch")


def test_batches_are_split_arrays_rows_with_their_dtypes_and_no_warning(small_build):
    arrays = split_arrays(small_build, "C1-1", split="train", size=20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        data = GridDataset(small_build, "C1-1", split="train", size=20)
        batches = list(data.loader(batch_size=16))
    assert len(data) == len(arrays["input"]) and sum(len(b["input"]) for b in batches) == len(data)
    for name, array in arrays.items():
        joined = torch.cat([b[name] for b in batches]).numpy()
        assert joined.dtype == array.dtype, name  # int8 grids, int16/int64 as split_arrays gives them
        assert np.array_equal(joined, array), name
    assert batches[0]["input"].dtype == torch.int8
    single = data[5]
    assert all(np.array_equal(single[name].numpy(), arrays[name][5]) for name in arrays)


def test_a_seed_fixes_the_order_and_int16_columns_stay_int16():
    arrays = {"input": np.arange(40, dtype=np.int8).reshape(10, 2, 2), "count": np.arange(10, dtype=np.int16)}
    data = GridDataset(arrays=arrays)
    first = list(data.loader(batch_size=4, shuffle=True, seed=7))
    again = list(data.loader(batch_size=4, shuffle=True, seed=7))
    assert all(torch.equal(a["count"], b["count"]) for a, b in zip(first, again, strict=True))
    rows = torch.cat([b["count"] for b in first])
    assert rows.dtype == torch.int16 and sorted(rows.tolist()) == list(range(10)) and rows.tolist() != list(range(10))
    for batch in first:  # every array of a batch is gathered at the same rows
        assert np.array_equal(batch["input"].numpy(), arrays["input"][batch["count"].numpy()])


def test_arrays_of_different_lengths_are_refused():
    from cogen.errors import DataError

    with pytest.raises(DataError, match="different lengths"):
        GridDataset(arrays={"a": np.zeros(3), "b": np.zeros(4)})


def test_the_dataset_pickles_for_worker_processes():
    import pickle

    data = GridDataset(arrays={"input": np.ones((4, 2, 2), np.int8)})
    again = pickle.loads(pickle.dumps(data))
    assert torch.equal(again.__getitems__([1, 3])["input"], data.__getitems__([1, 3])["input"])
