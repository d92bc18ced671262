"""cogen.stream: the same samples as a build, endless, shared exactly among workers, never a stored pair."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from cogen.cli import app
from cogen.errors import DataError, SpecError, UnknownNameError
from cogen.families.cogitao.generate.sampler import generate_rows
from cogen.families.cogitao.stream import stored_keys
from cogen.folder import read_split
from cogen.io import split_arrays
from cogen.pipeline import build
from cogen.stream import SampleStream

#: 54 distinct (input, sequence) pairs in all (one pixel of 9 colours at 6 places): collisions are certain.
CRAMPED = """\
setting: K
seed: 11
defaults:
  grid: {height: [3, 3], width: [3, 3]}
  objects: {count: [1, 1], where: {rows: [1, 1], cols: [1, 1]}}
  sizes: {train: 20, validation: 10, test: 10}
experiments:
  K-1:
    in_domain: {sequences: [[translate_up]]}
"""


@pytest.fixture(scope="module")
def c1_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("stream-c1")
    build("c1", folder, scale=0.01, workers=1, only=["C1-1"])
    return folder


@pytest.fixture(scope="module")
def cramped(tmp_path_factory):
    root = tmp_path_factory.mktemp("cramped")
    (root / "k.yaml").write_text(CRAMPED)
    build(root / "k.yaml", root / "data", workers=1)
    return root


def test_sample_i_is_row_i_of_a_build_where_the_build_regenerated_nothing(c1_folder):
    manifest = json.loads((c1_folder / "manifests" / "C1-1.json").read_text())
    stored = split_arrays(c1_folder, "C1-1", "train")
    stream = SampleStream("c1", "C1-1", batch_size=300)
    batch = stream.samples(0, len(stored["input"]))
    regenerated = {index for index, _ in manifest["splits"]["train"]["regenerated"]}
    kept = np.array([i for i in range(len(batch["index"])) if i not in regenerated])
    assert len(kept) >= 1000
    for name in ("input", "input_shape", "output", "output_shape", "tokens"):
        assert stored[name].dtype == batch[name].dtype, name
        assert np.array_equal(stored[name][kept], batch[name][kept]), name
    for index in regenerated:  # the build moved these on (they repeated an earlier pair); the stream shows retry 0
        assert not np.array_equal(stored["input"][index], batch["input"][index])


def test_a_sample_does_not_depend_on_the_batch_it_is_made_in():
    stream = SampleStream("c1", "C1-3", batch_size=7)
    whole = stream.samples(0, 21)
    parts = [stream.batch(b) for b in range(3)]
    for name, values in whole.items():
        assert np.array_equal(values, np.concatenate([p[name] for p in parts])), name
    assert np.array_equal(SampleStream("c1", "C1-3").samples(100, 120)["input"], stream.samples(100, 120)["input"])


def test_training_streams_never_draw_a_held_out_sequence():
    stream = SampleStream("c1", "C1-2", batch_size=2000)
    experiment = stream.experiment
    held_out = {tuple(s) for s in experiment.out_of_domain.sequences.sequences}
    drawn = {tuple(int(t) for t in row if t) for row in np.unique(stream.batch(0)["tokens"], axis=0)}
    from cogen.engine import resolve

    assert drawn and not drawn & {tuple(resolve(n).token for n in s) for s in held_out}


def test_stored_keys_are_the_samplers_keys(c1_folder):
    table = read_split(c1_folder, "C1-1", "train").table
    stream = SampleStream("c1", "C1-1")
    keys = generate_rows(stream.source.job, np.arange(table.num_rows))["keys"]
    manifest = json.loads((c1_folder / "manifests" / "C1-1.json").read_text())
    regenerated = [index for index, _ in manifest["splits"]["train"]["regenerated"]]
    same = np.all(stored_keys(table) == keys, axis=1)
    assert same.sum() == table.num_rows - len(regenerated) and not same[regenerated].any()


def test_the_guard_removes_every_stored_pair_and_without_it_they_come(cramped):
    folder = cramped / "data"
    stored = {tuple(k) for split in ("validation", "test") for k in stored_keys(read_split(folder, "K-1", split).table)}
    plain = SampleStream(cramped / "k.yaml", "K-1", batch_size=200).samples(0, 200)
    guarded = SampleStream(cramped / "k.yaml", "K-1", guard=folder, batch_size=200).samples(0, 200)

    def keys(batch):
        rows = generate_rows(SampleStream(cramped / "k.yaml", "K-1").source.job, batch["index"], batch["retry"])
        return [tuple(k) for k in rows["keys"]]

    assert sum(k in stored for k in keys(plain)) > 20  # collisions are certain without the guard
    assert not any(k in stored for k in keys(guarded))
    moved = guarded["retry"] > 0
    assert moved.any() and np.array_equal(plain["input"][~moved], guarded["input"][~moved])


@pytest.mark.slow
def test_torch_workers_and_ranks_partition_the_indices():
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    stream = SampleStream("c1", "C1-1", batch_size=10)
    seen = []
    for rank in range(2):
        dataset = stream.torch_dataset(rank=rank, world_size=2, limit=95)
        for batch in DataLoader(dataset, batch_size=None, num_workers=2):
            assert batch["input"].dtype == torch.int8 and batch["tokens"].dtype == torch.int64
            seen += batch["index"].tolist()
    assert sorted(seen) == list(range(95))


def test_torch_ranks_partition_the_indices_in_one_process():
    torch = pytest.importorskip("torch")

    stream = SampleStream("c1", "C1-1", batch_size=10)
    batches = [batch for rank in range(3) for batch in stream.torch_dataset(rank=rank, world_size=3, limit=45)]
    assert sorted(index for batch in batches for index in batch["index"].tolist()) == list(range(45))
    assert all(batch["input"].dtype == torch.int8 for batch in batches)


def test_bad_input_is_a_clear_error(tmp_path, cramped):
    with pytest.raises(SpecError, match="holds 5 configs"):
        SampleStream("c1")
    with pytest.raises(UnknownNameError, match="C1-9"):
        SampleStream("c1", "C1-9")
    with pytest.raises(SpecError, match="COGITAO samples"):
        SampleStream("carc")
    with pytest.raises(DataError, match="smaller than the domain's largest grid"):
        SampleStream("c1", "C1-1", size=10)
    with pytest.raises(DataError, match="no split 'test_ood'"):
        SampleStream(cramped / "k.yaml", "K-1", split="test_ood")
    with pytest.raises(DataError, match="holds no config 'C1-1'"):
        SampleStream("c1", "C1-1", guard=cramped / "data")


def test_the_cli_shows_samples_and_names_the_guard(cramped):
    result = CliRunner().invoke(app, ["stream", "--config", str(cramped / "k.yaml"), "-n", "3", "--guard",
                                      str(cramped / "data")])
    assert result.exit_code == 0, result.output
    assert "K-1 train, seed 11: samples 0..2, guarded by" in result.stdout and "translate_up" in result.stdout
    result = CliRunner().invoke(app, ["stream", "--config", "C1-2", "-n", "1", "--start", "5"])
    assert result.exit_code == 0 and "C1-2 train, seed 1: samples 5..5" in result.stdout
