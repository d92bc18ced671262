"""The MLC token layout (carc_reference.md §8): 2x2 patches, vocabulary 10,005, 52K + 26 encoder tokens."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from cogen.carc import mlc


def test_special_tokens_and_vocabulary():
    assert (mlc.PAD, mlc.SOS, mlc.EOS, mlc.IO_SEP, mlc.SUP_SEP) == (0, 1, 2, 3, 4)
    assert mlc.VOCAB_SIZE == 10_005


def test_patch_ids_read_top_left_top_right_bottom_left_bottom_right():
    grid = np.zeros((10, 10), np.int8)
    grid[0:2, 2:4] = [[1, 2], [3, 4]]  # second patch of the first patch row
    grid[8:10, 8:10] = [[9, 9], [9, 9]]  # last patch
    tokens = mlc.encode_grids(grid)
    assert tokens.shape == (25,)
    assert tokens[0] == 5 and tokens[1] == 5 + 1234 and tokens[24] == 5 + 9999
    assert set(tokens[2:24]) == {5}


def test_tokens_decode_back_to_grids():
    grids = np.random.default_rng(0).integers(0, 10, (7, 3, 10, 10)).astype(np.int8)
    assert np.array_equal(mlc.decode_grids(mlc.encode_grids(grids)), grids)
    with pytest.raises(ValueError):
        mlc.decode_grids(np.full(25, mlc.EOS))


@pytest.mark.parametrize("study, expected", [(12, 650), (3, 182), (0, 26)])
def test_encoder_sequences(study, expected):
    rng = np.random.default_rng(study)
    grids = rng.integers(0, 10, (study + 10, 2, 10, 10))
    episode = mlc.mlc_episode(grids[:study, 0], grids[:study, 1], grids[study:, 0], grids[study:, 1])
    assert mlc.encoder_length(study) == expected
    assert episode["encoder"].shape == (study + 10, expected)
    first = episode["encoder"][0]
    if study:
        assert first[25] == mlc.IO_SEP and first[51] == mlc.SUP_SEP
        assert np.array_equal(first[26:51], mlc.encode_grids(grids[0, 1]))
    assert first[-1] == mlc.IO_SEP
    assert np.array_equal(episode["decoder_input"][:, 0], np.full(study + 10, mlc.SOS))
    assert np.array_equal(episode["target"][:, -1], np.full(study + 10, mlc.EOS))
    assert episode["is_copy"].sum() == study  # copy items first: each study pair is also a query
    without = mlc.mlc_episode(grids[:study, 0], grids[:study, 1], grids[study:, 0], grids[study:, 1], copy_task=False)
    assert without["encoder"].shape == (10, expected) and not without["is_copy"].any()


def test_rows_with_different_counts_are_refused():
    rows = {"study_inputs": [np.zeros((2, 10, 10)), np.zeros((3, 10, 10))],
            "study_outputs": [np.zeros((2, 10, 10))] * 2,
            "query_inputs": [np.zeros((1, 10, 10))] * 2, "query_outputs": [np.zeros((1, 10, 10))] * 2}
    with pytest.raises(ValueError, match="MLC layout"):
        mlc.mlc_arrays(rows)


@pytest.mark.slow
def test_the_module_imports_numpy_only():
    code = ("import sys, cogen.carc.mlc; "
            "print(' '.join(m for m in ('torch', 'numba', 'pyarrow', 'datasets') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    assert loaded == []


def test_reference_records_and_batches():
    rng = np.random.default_rng(1)
    rows = {"study_inputs": rng.integers(0, 10, (5, 12, 10, 10)), "study_outputs": rng.integers(0, 10, (5, 12, 10, 10)),
            "query_inputs": rng.integers(0, 10, (5, 10, 10, 10)), "query_outputs": rng.integers(0, 10, (5, 10, 10, 10)),
            "transformations": [["grow", "mirror", "set_color"]] * 5,
            "transformation_kwargs": [['{"direction": "-x"}', '{"direction": "y"}', '{"new_color": 2}']] * 5}
    record = next(mlc.reference_records(rows))
    assert list(record) == ["study_examples", "queries", "meta_data"]
    assert len(record["study_examples"]) == 12 and len(record["queries"]) == 10
    assert record["study_examples"][0][1] == rows["study_outputs"][0, 0].tolist()
    assert record["meta_data"]["indicator_transformation"] == {"type": "set_color", "kwargs": {"new_color": 2}}

    class Rows(dict):
        def __len__(self):
            return 5

        def __getitem__(self, key):
            return {k: v[key] for k, v in self.items()} if isinstance(key, slice) else dict.__getitem__(self, key)

    batches = list(mlc.mlc_batches(Rows(rows), batch_size=2))
    assert [b["encoder"].shape[0] for b in batches] == [2, 2, 1]
