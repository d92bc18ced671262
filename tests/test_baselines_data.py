"""Data for the baselines: visual tokens and object indices against slow oracles, experiments loaded
onto the device from real builds, MLC batches against ``cogen.carc.mlc``, and predictions cut back to grids."""

from __future__ import annotations

import numpy as np
import pytest

from cogen.errors import DataError
from cogen.io import PAD_VALUE, pad_grids, visual_tokens

torch = pytest.importorskip("torch")

from baselines_helpers import CARC_CONFIG, built, compgen_build, envgen_build, one_thread  # noqa: F401  (fixtures)

from cogen_baselines.data import load_experiment
from cogen_baselines.errors import BaselineError


def _visual_oracle(grid: np.ndarray, height: int, width: int, size: tuple[int, int]) -> np.ndarray:
    """One canvas, cell by cell, from the rules in cogen.io.visual's docstring."""
    canvas = np.full((size[0] + 2, size[1] + 2), 10, np.int8)
    for r in range(size[0] + 2):
        for c in range(size[1] + 2):
            if c == size[1] + 1:
                canvas[r, c] = 14
            elif r < height and c < width:
                canvas[r, c] = grid[r][c]
            elif r < height and c == width:
                canvas[r, c] = 11
            elif r == height and c < width:
                canvas[r, c] = 12
            elif r == height and c == width:
                canvas[r, c] = 13
    return canvas


def test_visual_tokens_match_the_cell_by_cell_oracle():
    rng = np.random.default_rng(0)
    shapes = [(1, 1), (1, 7), (7, 1), (7, 7), (3, 5)] + [tuple(rng.integers(1, 8, 2)) for _ in range(40)]
    grids = [rng.integers(0, 10, shape).tolist() for shape in shapes]
    padded, true_shapes = pad_grids(grids, size=7)
    canvases = visual_tokens(padded, true_shapes)
    assert canvases.shape == (len(grids), 9, 9) and canvases.dtype == np.int8
    for canvas, grid, (height, width) in zip(canvases, grids, shapes, strict=True):
        assert np.array_equal(canvas, _visual_oracle(grid, height, width, (7, 7)))
    assert np.unique(canvases).max() <= 14


def test_visual_tokens_keep_leading_axes_and_refuse_bad_shapes():
    padded, shapes = pad_grids([[[1, 2]], [[3], [4]]], size=3)
    stacked = visual_tokens(padded.reshape(1, 2, 3, 3), shapes.reshape(1, 2, 2))
    assert np.array_equal(stacked[0], visual_tokens(padded, shapes))
    assert np.array_equal(visual_tokens(np.full((1, 2, 2), PAD_VALUE), np.zeros((1, 2), int))[0],
                          _visual_oracle([], 0, 0, (2, 2)))
    with pytest.raises(DataError, match="larger than"):
        visual_tokens(padded, shapes + 3)
    with pytest.raises(DataError, match="shapes"):
        visual_tokens(padded, shapes[:1])


def _objects_oracle(grid: np.ndarray) -> np.ndarray:
    """Object indices by union-find over 8-neighbour pairs of equal colours, then boxes painted in order."""
    height, width = grid.shape
    parent = list(range(height * width))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for r in range(height):
        for c in range(width):
            for dr, dc in ((0, 1), (1, -1), (1, 0), (1, 1)):
                rr, cc = r + dr, c + dc
                if 0 <= rr < height and 0 <= cc < width and grid[r, c] == grid[rr, cc] <= 9:
                    parent[find(r * width + c)] = find(rr * width + cc)
    colours = grid[grid <= 9]
    background = np.bincount(colours, minlength=10).argmax() if colours.size else -1
    regions = {}
    for value in range(10):
        if value == background:
            continue
        for i in range(height * width):  # raster order of each region's first cell
            if grid.flat[i] == value:
                regions.setdefault(find(i), []).append(divmod(i, width))
    out = np.zeros_like(grid, dtype=np.int16)
    for label, cells in enumerate(regions.values(), start=1):
        rows, cols = zip(*cells, strict=True)
        out[min(rows): max(rows) + 1, min(cols): max(cols) + 1] = label
    return out


def test_object_indices_match_a_union_find_oracle():
    from cogen_baselines.objects import object_indices

    rng = np.random.default_rng(1)
    grids = rng.choice([0, 0, 0, 0, 1, 2, 3, 10, 11, 14], size=(60, 9, 9))
    grids[:5] = 0                       # one colour only: no objects
    grids[5, :, -1] = 14                # layout tokens are never objects
    got = object_indices(grids)
    for grid, indices in zip(grids, got, strict=True):
        assert np.array_equal(indices, _objects_oracle(grid))
    assert not got[:5].any()


def test_compgen_experiments_get_task_codes_and_the_largest_grid(compgen):
    from cogen.io import split_arrays

    experiment = load_experiment(compgen, "E-1", visual_tokens=False)
    assert experiment.task_codes and experiment.shift == "composition"
    assert experiment.height == experiment.width == 6 and experiment.classes == 11
    train = experiment.splits["train"]
    arrays = split_arrays(compgen, "E-1", "train", size=6)
    assert np.array_equal(train.inputs.numpy(), arrays["input"]) and np.array_equal(train.tasks.numpy(), arrays["tokens"])
    assert set(experiment.splits) == {"train", "validation", "validation_ood", "test", "test_ood"}
    visual = load_experiment(compgen, "E-1", visual_tokens=True, objects=True)
    assert visual.height == 8 and visual.classes == 15
    assert np.array_equal(visual.splits["test"].targets.numpy(),
                          visual_tokens(*(split_arrays(compgen, "E-1", "test", size=6)[k] for k in ("output", "output_shape"))))
    assert visual.splits["train"].objects.shape == visual.splits["train"].inputs.shape


def test_envgen_experiments_have_no_task_codes(envgen):
    experiment = load_experiment(envgen, "T-1", visual_tokens=False, train_limit=10)
    assert not experiment.task_codes and experiment.splits["train"].tasks is None
    assert experiment.height == 5 and len(experiment.splits["train"]) == 10
    assert load_experiment(envgen, "T-1", visual_tokens=False, task_codes="on").splits["test"].tasks.shape == (16, 4)


def test_a_compgen_dataset_without_task_codes_is_refused(compgen, tmp_path):
    import json
    import shutil

    import pyarrow.parquet as pq

    copy = tmp_path / "no-codes"
    shutil.copytree(compgen, copy)
    for path in (copy / "data" / "E-1").glob("*.parquet"):
        pq.write_table(pq.read_table(path).drop_columns(["transformations"]), path)
    manifest = copy / "manifests" / "E-1.json"
    record = json.loads(manifest.read_text())
    del record["columns"]["transformations"]
    manifest.write_text(json.dumps(record))
    with pytest.raises(DataError, match="no task codes"):
        load_experiment(copy, "E-1", visual_tokens=False)
    assert load_experiment(copy, "E-1", visual_tokens=False, task_codes="off").splits["train"].tasks is None


def test_unknown_configs_and_the_wrong_family_are_refused(compgen, tmp_path_factory):
    with pytest.raises(DataError, match="no config 'E-9'"):
        load_experiment(compgen, "E-9", visual_tokens=False)
    with pytest.raises(BaselineError, match="--model mlc"):
        load_experiment(built(tmp_path_factory, "carc"), CARC_CONFIG, visual_tokens=False)


@pytest.mark.parametrize("visual", [False, True])
def test_predictions_cut_from_target_canvases_are_the_targets(compgen, visual):
    from cogen.folder import read_split as load_split
    from cogen_baselines.evaluate import grids_from_canvases

    experiment = load_experiment(compgen, "E-1", visual_tokens=visual)
    split = experiment.splits["test_ood"]
    table = load_split(compgen, "E-1", "test_ood").table
    truth = dict(zip(table.column("id").to_pylist(), table.column("output").to_pylist(), strict=True))
    for name, grid in zip(split.ids, grids_from_canvases(split.targets.numpy()), strict=True):
        assert grid.tolist() == truth[name]


def test_mlc_batches_on_the_device_equal_cogen_carc_mlc():
    from cogen.carc.mlc import mlc_arrays
    from cogen_baselines.episodes import episode_tokens

    rng = np.random.default_rng(2)
    rows = {name: rng.integers(0, 10, (3, count, 10, 10)) for name, count in
            (("study_inputs", 4), ("study_outputs", 4), ("query_inputs", 5), ("query_outputs", 5))}
    for copy_task in (True, False):
        expected = mlc_arrays(rows, copy_task)
        got = episode_tokens(*(torch.from_numpy(rows[name]).to(torch.uint8) for name in rows), copy_task)
        for name in ("encoder", "decoder_input", "target", "is_copy"):
            assert np.array_equal(getattr(got, name).numpy(), expected[name].reshape(-1, *expected[name].shape[2:]))


def test_mlc_token_layout_is_cogen_s_mlc_export():
    """cogen_baselines keeps MLC's token layout with the model; it must stay the one cogen's MLC export
    (cogen.carc.mlc, the reference's PatchTokenizer) writes."""
    from cogen.carc import mlc as export
    from cogen_baselines.episodes import _patches, grids_of
    from cogen_baselines.models import mlc as model

    for name in ("PAD", "SOS", "EOS", "IO_SEP", "SUP_SEP", "PATCH_OFFSET", "VOCAB_SIZE", "GRID_TOKENS"):
        assert getattr(model, name) == getattr(export, name), name
    assert [model.encoder_length(k) for k in (3, 12)] == [export.encoder_length(k) for k in (3, 12)] == [182, 650]
    grids = np.random.default_rng(3).integers(0, 10, (4, 7, 10, 10))
    tokens = _patches(torch.from_numpy(grids)).numpy()
    assert np.array_equal(tokens, export.encode_grids(grids))
    assert np.array_equal(grids_of(tokens), export.decode_grids(tokens)) and np.array_equal(grids_of(tokens), grids)
