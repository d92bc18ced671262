"""What a build pays before its first sample: only the libraries it uses, workers that start loaded.

``pa.array`` imports pandas and ``datasets`` costs a CPU-second to import, so a build imports
neither (the card's ``dataset_info`` is serialised as ``datasets`` would, checked against it); a
small build does not import polars either (its shards go to pyarrow). Local workers are forked
after the kernels load where that is safe.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pyarrow as pa
import pytest
import yaml

from cogen.card.card import dataset_info
from cogen.folder import hf_features_dict, read_manifests
from cogen.pipeline import build, stages
from cogen.pipeline.arrow import numpy_array, string_array
from cogen.pipeline.executors import start_method

TINY = """\
setting: S
seed: 4
defaults:
  grid: {height: [6, 8], width: [6, 8]}
  objects: {count: [1, 2], where: {is_shape_fully_connected: true, rows: [1, 3], cols: [1, 3]}}
  sizes: {train: 60, validation: 5, test: 5, validation_ood: 4, test_ood: 4}
experiments:
  S-2:
    in_domain: {sequences: [[translate_up], [rot90]]}
    out_of_domain: {sequences: [[rot90, translate_up]]}
  S-1:
    in_domain: {sequences: [[change_shape_color]]}
    output: {frames: true}
"""


@pytest.mark.slow
def test_a_small_build_imports_neither_pandas_nor_datasets_nor_polars(tmp_path):
    spec = tmp_path / "tiny.yaml"
    spec.write_text(TINY)
    script = ("import sys\n"
              "from cogen.cli import main\n"
              "sys.argv = ['cogen', 'build', '--config', sys.argv[1], '--out', sys.argv[2], '--workers', '1', "
              "'--no-progress']\n"
              "try:\n    main()\nexcept SystemExit as stop:\n    assert not stop.code, stop.code\n"
              "print(sorted(name for name in ('pandas', 'datasets', 'polars') if name in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", script, str(spec), str(tmp_path / "out")], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert sorted(p.name for p in (tmp_path / "out" / "manifests").iterdir()) == ["S-1.json", "S-2.json"]


def _datasets_dataset_info(manifests: dict[str, dict]) -> list[dict]:
    """The oracle: ``datasets``' own serialisation, as the card made it before (one config as a list)."""
    from datasets import DatasetInfo, Features, SplitDict, SplitInfo
    from datasets.info import DatasetInfosDict
    from huggingface_hub import DatasetCardData

    infos = DatasetInfosDict()
    for name, manifest in manifests.items():
        splits = SplitDict()
        for split, v in manifest["splits"].items():
            splits.add(SplitInfo(name=split, num_bytes=v["num_bytes"], num_examples=v["rows"]))
        infos[name] = DatasetInfo(features=Features.from_dict(hf_features_dict(manifest["columns"])), splits=splits,
                                  download_size=sum(v["download_bytes"] for v in manifest["splits"].values()),
                                  dataset_size=sum(v["num_bytes"] for v in manifest["splits"].values()))
    data = DatasetCardData()
    infos.to_dataset_card_data(data)
    if isinstance(data["dataset_info"], dict):
        data["dataset_info"] = [{"config_name": next(iter(manifests)), **data["dataset_info"]}]
    return data.to_dict()["dataset_info"]


@pytest.mark.slow
def test_dataset_info_is_what_datasets_writes(tmp_path):
    """Every family's columns (grids, frames, carc episodes, programs), configs out of name order, one and many."""
    spec = tmp_path / "tiny.yaml"
    spec.write_text(TINY)
    build(spec, tmp_path / "cogitao")
    build("carc", tmp_path / "carc", scale=0.0005)
    build("programs", tmp_path / "programs", scale=0.01)
    for family in ("cogitao", "carc", "programs"):
        manifests = read_manifests(tmp_path / family)
        for chosen in (manifests, dict(list(manifests.items())[-1:])):
            ours = yaml.safe_dump(dataset_info(chosen), sort_keys=False)
            assert ours == yaml.safe_dump(_datasets_dataset_info(chosen), sort_keys=False), family


def test_nested_stages_count_their_time_once():
    stages.reset()
    with stages.stage("parquet encoding"):
        start = time.process_time()
        while time.process_time() - start < 0.02:
            pass
        with stages.stage("sampling"):
            start = time.process_time()
            while time.process_time() - start < 0.05:
                pass
    spent = stages.totals()
    assert spent["sampling"] >= 0.05 and 0.02 <= spent["parquet encoding"] < 0.05
    stages.reset()


def test_arrays_from_numpy_are_those_pa_array_makes():
    rng = np.random.default_rng(3)
    for type_ in (pa.int8(), pa.int16(), pa.int32(), pa.int64()):
        values = rng.integers(-100, 100, 257)
        assert numpy_array(values, type_).equals(pa.array(values.astype(type_.to_pandas_dtype()), type_))
        assert numpy_array(values.reshape(-1, 1)[::2], type_).to_pylist() == values[::2].tolist()  # any layout
    texts = ["C1-1-train-0", "", "grille-é-∂", "x" * 300]
    assert string_array(texts).equals(pa.array(texts, pa.string()))
    assert string_array([]).equals(pa.array([], pa.string()))
    assert string_array(np.array(texts, object)).equals(pa.array(texts, pa.string()))


def test_workers_fork_on_linux_unless_polars_is_loaded(monkeypatch):
    monkeypatch.delenv("COGEN_WORKER_START", raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delitem(sys.modules, "polars", raising=False)
    assert start_method() == "fork"
    monkeypatch.setitem(sys.modules, "polars", object())
    assert start_method() == "spawn"  # its thread pool would not survive a fork
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.delitem(sys.modules, "polars")
    assert start_method() == "spawn"
    monkeypatch.setenv("COGEN_WORKER_START", " Forkserver ")
    assert start_method() == "forkserver"
