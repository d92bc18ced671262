"""``cogen export``: the format table, and ``--format mlc`` writing the files the reference MLC trainer reads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cogen.cli import app
from cogen.errors import DataError, UnknownNameError
from cogen.export import export, formats
from cogen.folder import read_split

pytest.importorskip("cogen.families.carc.build")

runner = CliRunner()
CONFIGS = ["carc-episodes", "carc-systematicity-1860", "carc-3shot-1870", "carc-static"]


@pytest.fixture(scope="module")
def data(tiny_carc) -> Path:
    """The shared tiny Compositional-ARC build (conftest.py; read-only), which holds ``CONFIGS``."""
    return tiny_carc


def reference_dataset(data_dir: Path, data_file_name: str, mode: str) -> list[dict]:
    """What the reference's ``VisualGrammarDataset`` needs (carc_reference.md §8): the file
    ``<data_dir>/<mode>_<data_file_name>.jsonl``, records with ``study_examples`` and ``queries``
    as lists of [input, output] 10x10 grids, the same number of study examples in every record."""
    with (data_dir / f"{mode}_{data_file_name}.jsonl").open() as file:
        records = [json.loads(line) for line in file]
    for record in records:
        for pair in record["study_examples"] + record["queries"]:
            assert len(pair) == 2 and all(np.asarray(grid).shape == (10, 10) for grid in pair)
    assert len({len(r["study_examples"]) for r in records}) <= 1
    return records


def test_every_format_has_a_description_and_a_writer():
    for name, record in formats().items():
        assert record.name == name and record.describe().startswith(record.description) and callable(record.load())
    assert formats()["mlc"].family == "carc" and formats()["arc-json"].family is None


def test_cli_writes_the_reference_trainers_files(data, tmp_path):
    out = tmp_path / "mlc"
    result = runner.invoke(app, ["export", "--format", "mlc", "-d", str(data), "-c", "carc-systematicity-1860",
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == [
        "config_systematicity_seed_1860.json", "index.json", "test_systematicity_seed_1860.jsonl",
        "train_systematicity_seed_1860.jsonl", "val_systematicity_seed_1860.jsonl"]
    assert "val_systematicity_seed_1860.jsonl" in result.stdout
    for split, mode in (("train", "train"), ("validation", "val"), ("test", "test")):
        rows = read_split(data, "carc-systematicity-1860", split).table.to_pydict()
        records = reference_dataset(out, "systematicity_seed_1860", mode)
        assert len(records) == len(rows["id"]) > 0
        first = records[0]
        assert list(first) == ["study_examples", "queries", "meta_data"]
        assert len(first["study_examples"]) == 12 and len(first["queries"]) == 10
        assert first["study_examples"][3][1] == rows["study_outputs"][0][3]
        assert first["queries"][9][0] == rows["query_inputs"][0][9]
        meta = first["meta_data"]
        assert [meta[k]["type"] for k in meta] == rows["transformations"][0]
        assert [json.dumps(meta[k]["kwargs"]) for k in meta] == rows["transformation_kwargs"][0]
    config = json.loads((out / "config_systematicity_seed_1860.json").read_text())
    assert config["test_func_compositions"] == [["translation", "rotation", "grow"], ["translation", "mirror", "grow"]]
    assert config["num_val_samples"] + config["num_test_samples"] + config["num_train_samples"] == 100
    assert config["rotation_type_8"] == "counter-clockwise"
    assert sum(config["func_freq"].values()) == 3 * config["num_train_samples"]


def test_rotation_roles_say_which_way_they_turn(data, tmp_path):
    export(data, "carc-systematicity-1860", tmp_path, "mlc")
    records = [r for mode in ("train", "val", "test") for r in reference_dataset(tmp_path, "systematicity_seed_1860", mode)]
    rotations = [role for r in records for role in r["meta_data"].values() if role["type"] == "rotation"]
    assert rotations and all(set(role) == {"type", "kwargs", "turns"} for role in rotations)
    expected = {0: "clockwise", 8: "counter-clockwise"}  # the packaged spec follows the paper
    assert all(role["turns"] == expected[role["kwargs"]["rotation_type"]] for role in rotations)
    others = [role for r in records for role in r["meta_data"].values() if role["type"] != "rotation"]
    assert all(set(role) == {"type", "kwargs"} for role in others)  # the reference's own layout


def test_three_shot_and_static_configs_and_a_chosen_name(data, tmp_path):
    report = export(data, "carc-3shot-1870", tmp_path / "shots", "mlc", name="few_shot")
    assert [f.path.name for f in report.files] == ["train_few_shot.jsonl", "val_few_shot.jsonl", "test_few_shot.jsonl",
                                                   "config_few_shot.json", "index.json"]
    assert len(reference_dataset(tmp_path / "shots", "few_shot", "test")[0]["study_examples"]) == 3
    export(data, "carc-static", tmp_path / "static", "mlc")
    train = reference_dataset(tmp_path / "static", "static_systematicity_seed_1860", "train")
    assert len(train) == 290 and train[0]["study_examples"] == [] and len(train[0]["queries"]) == 1


@pytest.mark.slow
def test_bad_requests_get_clear_errors(data, small_build, tmp_path):
    result = runner.invoke(app, ["export", "--format", "arc", "-d", str(data), "-c", "carc-static", "--out",
                                 str(tmp_path)])
    assert result.exit_code == 2 and "not a format; choose from arc-json, kaggle, chat, parquet, mlc" in result.output
    result = runner.invoke(app, ["export", "-d", str(data), "-c", "carc-static", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "--format" in result.output
    with pytest.raises(DataError, match="raw episode pool"):
        export(data, "carc-episodes", tmp_path, "mlc")
    with pytest.raises(DataError, match="no config 'carc-3shot-1880'"):
        export(data, "carc-3shot-1880", tmp_path, "mlc")
    with pytest.raises(DataError, match="option 'queries' does not apply to the mlc format"):
        export(data, "carc-static", tmp_path, "mlc", queries="first")
    with pytest.raises(DataError, match="plain file name"):
        export(data, "carc-static", tmp_path, "mlc", name="../x")
    with pytest.raises(UnknownNameError, match="export format"):
        export(data, "carc-static", tmp_path, "arc")
    (tmp_path / "file").write_text("")
    with pytest.raises(DataError, match="is a file"):
        export(data, "carc-static", tmp_path / "file", "mlc")
    with pytest.raises(DataError, match="C1-1 is a COGITAO config; the mlc format writes Compositional-ARC configs"):
        export(small_build, "C1-1", tmp_path / "m", "mlc")
    result = subprocess.run([sys.executable, "-m", "cogen", "export", "-f", "mlc", "-d", str(data), "-c",
                             "carc-episodes", "--out", str(tmp_path / "pool")], capture_output=True, text=True)
    assert result.returncode == 1 and "raw episode pool" in result.stderr and "Traceback" not in result.stderr


def test_lines_are_json_dumps_of_the_reference_records(data):
    from cogen.carc.mlc import reference_records
    from cogen.families.carc.export_mlc import grid_texts, record_lines

    for config in ("carc-systematicity-1860", "carc-static"):
        table = read_split(data, config, "test").table
        batch = table.to_batches(7)[1] if table.num_rows > 7 else table.to_batches()[0]  # a slice with an offset
        expected = [json.dumps(r) + "\n" for r in reference_records(batch.to_pydict())]
        assert [line.decode() for line in record_lines(batch)] == expected
    grid = np.arange(100).reshape(10, 10) % 10
    assert grid_texts(grid)[0].tobytes().decode() == json.dumps(grid.tolist())
    with pytest.raises(DataError, match="outside 0..9"):
        grid_texts(np.full((10, 10), 10))


def _arc_tasks(out: Path) -> tuple[dict, dict[str, dict]]:
    index = json.loads((out / "index.json").read_text())
    tasks = {path.stem: json.loads(path.read_text()) for path in out.glob("*/*.json")}
    return index, tasks


def _grid(value) -> list[list[int]]:
    return [list(map(int, row)) for row in value]


def test_arc_json_groups_cogitao_samples_of_one_sequence_into_tasks(small_build, tmp_path):
    out = tmp_path / "arc"
    result = runner.invoke(app, ["export", "--data", str(small_build), "--config", "C1-1", "--out", str(out),
                                 "--format", "arc-json", "--shots", "2"])
    assert result.exit_code == 0, result.output
    index, tasks = _arc_tasks(out)
    assert set(tasks) == set(index["tasks"]) and tasks
    manifest_splits = json.loads((small_build / "manifests" / "C1-1.json").read_text())["splits"]
    for split in manifest_splits:
        rows = {row["id"]: row for row in read_split(small_build, "C1-1", split).table.to_pylist()}
        entries = {k: v for k, v in index["tasks"].items() if v["split"] == split}
        used = [row_id for entry in entries.values() for row_id in entry["rows"]]
        assert len(used) == len(set(used))  # a row is in one task at most
        assert len(used) + index["rows_in_no_task"][split] == len(rows)
        for task_id, entry in entries.items():
            task = tasks[task_id]
            assert set(task) == {"train", "test"} and (len(task["train"]), len(task["test"])) == (2, 1)
            members = [rows[row_id] for row_id in entry["rows"]]
            assert {tuple(row["transformations"]) for row in members} == {tuple(entry["transformations"])}
            for pair, row in zip(task["train"] + task["test"], members, strict=True):
                assert pair == {"input": _grid(row["input"]), "output": _grid(row["output"])}


def test_arc_json_writes_a_compositional_arc_episode_as_one_task(data, tmp_path):
    out = tmp_path / "arc"
    export(data, "carc-systematicity-1860", out, format="arc-json")
    index, tasks = _arc_tasks(out)
    assert index["shots"] == 12 and all(len(task["train"]) == 12 for task in tasks.values())
    assert set(index["rows_in_no_task"].values()) == {0}
    three = export(data, "carc-3shot-1870", tmp_path / "three", format="arc-json").index
    assert json.loads(three.read_text())["shots"] == 3
    with pytest.raises(DataError, match="--shots does not apply to the arc-json export of Compositional-ARC"):
        export(data, "carc-3shot-1870", tmp_path / "bad", format="arc-json", shots=3)
    for split in ("train", "validation", "test"):
        rows = read_split(data, "carc-systematicity-1860", split).table.to_pylist()
        entries = [(task_id, entry) for task_id, entry in index["tasks"].items() if entry["split"] == split]
        assert [entry["rows"] for _, entry in entries] == [[row["id"]] for row in rows]
        for (task_id, _), row in zip(entries, rows, strict=True):
            task = tasks[task_id]
            assert [p["input"] for p in task["train"]] == [_grid(g) for g in row["study_inputs"]]
            assert [p["output"] for p in task["test"]] == [_grid(g) for g in row["query_outputs"]]


def test_arc_json_refuses_what_it_cannot_write(small_build, tmp_path):
    with pytest.raises(DataError, match="at least one demonstration"):
        export(small_build, "C1-1", tmp_path / "a", format="arc-json", shots=0)
    with pytest.raises(DataError, match="no config 'C9-9'"):
        export(small_build, "C9-9", tmp_path / "a", format="arc-json")


def test_arc_json_numbers_cogitao_tasks_as_the_whole_split_grouping_does(small_build, tmp_path):
    """Oracle: the split held whole, rows grouped by sequence (first appearance first), runs of shots + 1."""
    export(small_build, "C1-2", tmp_path / "a", "arc-json", shots=2)
    index = json.loads((tmp_path / "a" / "index.json").read_text())
    for split in ("train", "test_ood"):
        groups: dict[tuple, list[str]] = {}
        for row in read_split(small_build, "C1-2", split).table.to_pylist():
            groups.setdefault(tuple(row["transformations"]), []).append(row["id"])
        expected = [ids[start:start + 3] for ids in groups.values() for start in range(0, len(ids) - 2, 3)]
        written = sorted((task_id, entry["rows"]) for task_id, entry in index["tasks"].items() if entry["split"] == split)
        assert [task_id for task_id, _ in written] == [f"C1-2-{split}-{n:06d}" for n in range(len(expected))]
        assert [rows for _, rows in written] == expected

