"""cogen.io: padded arrays and task-code tokens checked against a naive row-by-row oracle."""

from __future__ import annotations

import subprocess
import sys
import types

import numpy as np
import pyarrow as pa
import pytest

from cogen.engine.registry import IDENTITY_TOKEN, TRANSFORMS
from cogen.errors import DataError, MissingDependencyError, UnknownNameError
from cogen.io import PAD_VALUE, Collate, load_split, pad_grids, split_arrays, task_tokens


def naive_pad(grids, height, width, pad):
    """The obvious loop: each grid copied into the top-left corner of a pad-filled canvas."""
    out = np.full((len(grids), height, width), pad, np.int8)
    for i, grid in enumerate(grids):
        grid = np.array(grid, np.int8).reshape(len(grid), -1)
        out[i, :grid.shape[0], :grid.shape[1]] = grid
    return out


def naive_tokens(sequences, depth):
    return np.array([[TRANSFORMS[n].token for n in s] + [IDENTITY_TOKEN] * (depth - len(s)) for s in sequences])


def rows(folder, config, split):
    return load_split(folder, config, split).to_list()


@pytest.mark.parametrize("config, split", [("C1-1", "train"), ("C1-1", "test_ood"), ("G2-1", "train"),
                                           ("G2-1", "test_ood")])
def test_arrays_match_the_naive_oracle(small_build, config, split):
    expected = rows(small_build, config, split)
    arrays = split_arrays(small_build, config, split)
    shapes = [(len(r["input"]), len(r["input"][0])) for r in expected]
    out_shapes = [(len(r["output"]), len(r["output"][0])) for r in expected]
    height = max(h for h, _ in shapes + out_shapes)
    width = max(w for _, w in shapes + out_shapes)
    assert arrays["input"].dtype == np.int8 and arrays["input"].shape == (len(expected), height, width)
    assert (arrays["input"] == naive_pad([r["input"] for r in expected], height, width, PAD_VALUE)).all()
    assert (arrays["output"] == naive_pad([r["output"] for r in expected], height, width, PAD_VALUE)).all()
    assert arrays["input_shape"].tolist() == [list(s) for s in shapes]
    assert arrays["output_shape"].tolist() == [list(s) for s in out_shapes]
    assert (arrays["tokens"] == naive_tokens([r["transformations"] for r in expected], 4)).all()
    assert set(arrays) == {"input", "input_shape", "output", "output_shape", "tokens"}  # object_positions is no grid


def test_every_source_gives_the_same_arrays(small_build):
    import datasets

    reference = split_arrays(small_build, "G2-1", "test_ood", size=(21, 22), pad_value=-1)
    dataset_dict = datasets.load_dataset(str(small_build), "G2-1")
    shuffled = dataset_dict["test_ood"].shuffle(seed=0)
    order = np.argsort(shuffled["id"])
    for source in (dataset_dict, dataset_dict["test_ood"], dataset_dict["test_ood"].with_format("arrow")[:]):
        arrays = split_arrays(source, split="test_ood", size=(21, 22), pad_value=-1)
        assert all((arrays[k] == reference[k]).all() for k in reference)
    shuffled_arrays = split_arrays(shuffled, size=(21, 22), pad_value=-1)  # indices mapping respected
    assert (shuffled_arrays["input"][order] == reference["input"]).all()
    assert reference["input"].shape[1:] == (21, 22) and (reference["input"][:, 20:, :] == -1).all()


def test_sizes_and_depths_that_do_not_fit_are_refused(small_build):
    with pytest.raises(DataError, match="does not fit the padding size 19x19"):
        split_arrays(small_build, "C1-1", "test_ood", size=19)
    with pytest.raises(DataError, match="from -128 to 127"):
        split_arrays(small_build, "C1-1", "test_ood", pad_value=200)
    with pytest.raises(DataError, match="more than depth=1"):
        split_arrays(small_build, "C1-1", "test_ood", depth=1)
    with pytest.raises(DataError, match="has no config 'C9-9'"):
        split_arrays(small_build, "C9-9", "train")
    with pytest.raises(DataError, match="no split 'test_x'"):
        split_arrays(small_build, "C1-1", "test_x")
    assert split_arrays(small_build, "C1-1", "test_ood", depth=None)["tokens"].shape[1] == 2


def test_task_tokens_use_registry_ids_padded_with_the_identity():
    tokens = task_tokens([["rot90"], ["translate_up", "rotate_90", "mirror_horizontal"], []])
    expected = [[TRANSFORMS["rot90"].token, 0, 0, 0],
                [TRANSFORMS["translate_up"].token, TRANSFORMS["rot90"].token, TRANSFORMS["mirror_horizontal"].token, 0],
                [0, 0, 0, 0]]
    assert tokens.dtype == np.int64 and tokens.tolist() == expected
    with pytest.raises(UnknownNameError, match="translation"):
        task_tokens([["translation"]])


def episode_table() -> pa.Table:
    """Episode-style rows: lists of grids of varying count and size, and non-grid nested columns."""
    def grid(h, w, v):
        return [[v] * w for _ in range(h)]

    grids = pa.list_(pa.list_(pa.list_(pa.int8())))
    return pa.table({
        "study_inputs": pa.array([[grid(2, 3, 1), grid(1, 1, 2)], [grid(4, 2, 3)]], grids),
        "study_outputs": pa.array([[grid(3, 2, 4), grid(1, 1, 5)], [grid(2, 4, 6)]], grids),
        "shape_indicator": pa.array([[[0, 0], [1, 1]], [[0, 1]]], pa.list_(pa.list_(pa.int8()))),
        "transformations": pa.array([["translation", "mirror"], ["rotation"]]),
    })


def test_lists_of_grids_become_padded_blocks_with_zero_shapes_for_missing_examples():
    arrays = split_arrays(episode_table(), pad_value=-1)
    assert set(arrays) == {"study_inputs", "study_inputs_shape", "study_outputs", "study_outputs_shape"}
    block = arrays["study_inputs"]
    assert block.shape == (2, 2, 4, 4)
    assert arrays["study_inputs_shape"].tolist() == [[[2, 3], [1, 1]], [[4, 2], [0, 0]]]
    assert (block[0, 0, :2, :3] == 1).all() and (block[0, 0, 2:] == -1).all() and (block[0, 0, :, 3] == -1).all()
    assert block[0, 1, 0, 0] == 2 and (block[1, 1] == -1).all() and (block[1, 0, :4, :2] == 3).all()
    with pytest.raises(UnknownNameError):
        split_arrays(episode_table(), tokens=True)


def test_ragged_grids_are_refused():
    with pytest.raises(DataError, match="grid 1 is not rectangular"):
        pad_grids([[[1, 2]], [[1, 2], [3]]])
    padded, shapes = pad_grids([np.ones((2, 3), np.int64), [[5]]], size=4, pad_value=0)
    assert padded.shape == (2, 4, 4) and shapes.tolist() == [[2, 3], [1, 1]] and padded[1, 0, 0] == 5


def test_collate_batches_rows_like_split_arrays(small_build):
    dataset = load_split(small_build, "C1-1", "train")
    batch = Collate(size=20, tensors=False)([dataset[i] for i in range(5)])
    reference = split_arrays(dataset.select(range(5)), size=20)
    assert all((batch[k] == reference[k]).all() for k in reference)
    assert batch["n_objects"].tolist() == dataset["n_objects"][:5] and batch["id"] == dataset["id"][:5]
    numpy_rows = dataset.with_format("numpy")
    again = Collate(size=20, tensors=False)([numpy_rows[i] for i in range(5)])
    assert (again["input"] == batch["input"]).all() and (again["tokens"] == batch["tokens"]).all()


def test_collate_makes_tensors_through_a_lazily_imported_torch(small_build, monkeypatch):
    class FakeTensor:
        def __init__(self, array):
            self.array = array

    dataset = load_split(small_build, "C1-1", "test_ood")
    first, second = dataset[0], dataset[1]  # read before the fake torch is installed (datasets looks for torch)
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(from_numpy=FakeTensor))
    batch = Collate()([first, second])
    assert isinstance(batch["input"], FakeTensor) and batch["input"].array.shape == (2, 20, 20)
    assert isinstance(batch["tokens"], FakeTensor) and isinstance(batch["id"], list)
    monkeypatch.setitem(sys.modules, "torch", None)  # torch not installed
    with pytest.raises(MissingDependencyError, match="needs PyTorch"):
        Collate()([first])


@pytest.mark.slow
def test_importing_the_loaders_imports_neither_torch_nor_arrow_nor_datasets():
    code = "import sys, cogen.io; print(' '.join(m for m in ('torch', 'pyarrow', 'datasets') if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert loaded.strip() == ""
