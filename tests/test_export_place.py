"""``cogen export`` writes a whole folder or nothing: no stale files, nothing left by Ctrl-C, an index of every file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cogen.cli import app
from cogen.errors import DataError, Interrupted
from cogen.export import INDEX_FILE, export

runner = CliRunner()


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` and its bytes."""
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


def listed(folder: Path) -> set[str]:
    """The files ``index.json`` lists, and itself."""
    return set(json.loads((folder / INDEX_FILE).read_text())["files"]) | {INDEX_FILE}


def test_an_export_over_another_holds_exactly_the_files_its_index_lists(small_build, tmp_path):
    out = tmp_path / "arc"
    export(small_build, "C1-1", out, "arc-json", shots=2)
    before = snapshot(out)
    assert set(before) == listed(out) and len(before) > 10
    with pytest.raises(DataError, match="is not empty; pass --force"):
        export(small_build, "C1-1", out, "arc-json", shots=5)
    assert snapshot(out) == before
    result = runner.invoke(app, ["export", "-f", "arc-json", "-d", str(small_build), "-c", "C1-1", "-o", str(out),
                                 "--shots", "5", "--force", "--no-progress"])
    assert result.exit_code == 0, result.output
    after = snapshot(out)
    assert set(after) == listed(out) and set(after) != set(before)  # fewer, larger tasks: old files are gone
    tasks = [json.loads(data) for name, data in after.items() if name != INDEX_FILE]
    assert tasks and all(len(task["train"]) == 5 and len(task["test"]) == 1 for task in tasks)
    assert json.loads(after[INDEX_FILE])["shots"] == 5
    assert [p.name for p in tmp_path.iterdir()] == ["arc"]  # no temporary or old folder left beside it


def test_every_format_lists_its_files_and_says_where_they_came_from(small_build, tmp_path):
    for format, options in (("parquet", {}), ("parquet", {"columns": "cogitao-release"}), ("arc-json", {})):
        out = tmp_path / f"{format}-{len(options)}"
        report = export(small_build, "C1-2", out, format, **options)
        index = json.loads(report.index.read_text())
        assert set(snapshot(out)) == listed(out)
        assert (index["format"], index["config"], index["options"]) == (format, "C1-2", options)
        manifest = json.loads((small_build / "manifests" / "C1-2.json").read_text())
        assert index["fingerprint"] == manifest["fingerprint"]
        if format == "parquet":
            assert index["files"] == {f.path.name: f.rows for f in report.files[:-1]}
            assert sum(index["files"].values()) == sum(s["rows"] for s in manifest["splits"].values())


def test_an_interrupted_export_leaves_the_folder_as_it_was(small_build, tmp_path):
    out = tmp_path / "arc"
    export(small_build, "C1-1", out, "arc-json")
    before = snapshot(out)
    calls = []

    def interrupt(phase, advance, total):
        calls.append(advance)
        if sum(calls) > 0:  # after the first batch of rows: the temporary folder holds task files
            raise KeyboardInterrupt

    with pytest.raises(Interrupted, match=f"{out} is as it was"):
        export(small_build, "C1-1", out, "arc-json", shots=2, force=True, progress=interrupt)
    assert snapshot(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["arc"]
    with pytest.raises(Interrupted):  # into a new folder: nothing appears
        export(small_build, "C1-1", tmp_path / "new", "arc-json", progress=interrupt)
    assert not (tmp_path / "new").exists() and [p.name for p in tmp_path.iterdir()] == ["arc"]


def test_force_never_replaces_the_data_a_dataset_folder_or_the_current_folder(small_build, tmp_path, monkeypatch):
    for target, reason in ((small_build, "holds the data"), (small_build / "data", "holds the data"),
                           (small_build.parent, "holds the data")):
        with pytest.raises(DataError, match=reason):
            export(small_build, "C1-1", target, "parquet", force=True)
    other = tmp_path / "other"
    export(small_build, "C1-1", other / "built", "parquet")
    (other / "manifests").mkdir()  # looks like a dataset folder
    for target in (other, other / "built"):
        with pytest.raises(DataError, match="is a dataset folder"):
            export(small_build, "C1-1", target, "parquet", force=True)
    (other / "manifests").rmdir()
    monkeypatch.chdir(other / "built")
    with pytest.raises(DataError, match="current folder"):
        export(small_build, "C1-1", ".", "parquet", force=True)
    with pytest.raises(DataError, match="current folder"):
        export(small_build, "C1-1", other, "parquet", force=True)


def test_json_output_and_the_rows_in_no_task(small_build, tmp_path):
    result = runner.invoke(app, ["export", "-f", "arc-json", "-d", str(small_build), "-c", "C1-1", "-o",
                                 str(tmp_path / "a"), "--json", "--no-progress"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    index = json.loads(Path(report["index"]).read_text())
    assert report["format"] == "arc-json" and report["files"][-1]["records"] == len(index["tasks"])
    assert [f["records"] for f in report["files"][:-1]] == [sum(e["split"] == s for e in index["tasks"].values())
                                                            for s in index["rows_in_no_task"]]
    left = {split: rows for split, rows in index["rows_in_no_task"].items() if rows}
    assert report["notes"] == ["rows in no task (the last rows of a group, too few for a task): "
                               + ", ".join(f"{split} {rows}" for split, rows in left.items())]


def test_splits_are_read_a_batch_at_a_time_never_whole(small_build, tmp_path, monkeypatch):
    import cogen.folder.splits
    from cogen.export import _source

    def whole(*args, **kwargs):
        raise AssertionError("an export read a whole split into memory")

    monkeypatch.setattr(cogen.folder.splits, "_read_tables", whole)
    monkeypatch.setattr(_source, "BATCH_ROWS", 7)
    sizes = []
    original = _source.ExportSource.batches

    def batches(self, split, columns=None, rows=7, count=True):
        for batch in original(self, split, columns, rows, count):
            sizes.append(batch.num_rows)
            yield batch

    monkeypatch.setattr(_source.ExportSource, "batches", batches)
    export(small_build, "C1-1", tmp_path / "a", "arc-json")
    assert sizes and max(sizes) == 7


def test_formats_refuse_the_configs_of_families_they_do_not_write(tmp_path):
    from cogen.pipeline import build

    data = tmp_path / "programs"
    build("programs", data, scale=0.1, workers=1, only=["programs-horizontal"])
    with pytest.raises(DataError, match="String-to-grid programs config; the arc-json format writes COGITAO, "
                                        "Compositional-ARC configs"):
        export(data, "programs-horizontal", tmp_path / "a", "arc-json")
    with pytest.raises(DataError, match="the cogitao-release view takes COGITAO configs"):
        export(data, "programs-horizontal", tmp_path / "a", "parquet", columns="cogitao-release")
    assert not (tmp_path / "a").exists()
    report = export(data, "programs-horizontal", tmp_path / "p", "parquet")
    assert report.files[0].rows > 0


SLOW_EXPORT = """
import sys, time
import cogen.export.arc_json as arc_json
write = arc_json._write_task
def slow(path, task):
    time.sleep(0.05)
    write(path, task)
arc_json._write_task = slow
sys.argv = ["cogen", *sys.argv[1:]]
from cogen.cli import main
main()
"""


@pytest.mark.slow
def test_ctrl_c_during_an_export_prints_one_line_and_leaves_the_folder_as_it_was(small_build, tmp_path):
    out = tmp_path / "arc"
    export(small_build, "C1-1", out, "arc-json")
    before = snapshot(out)
    command = [sys.executable, "-c", SLOW_EXPORT, "export", "-f", "arc-json", "-d", str(small_build), "-c", "C1-1",
               "-o", str(out), "--shots", "1", "--force", "--no-progress"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not any(len(list(p.rglob("*.json"))) > 3 for p in tmp_path.glob(".arc.*.tmp")):
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert stderr.splitlines() == [f"error: export interrupted; {out} is as it was (the partial export was removed)"]
    assert snapshot(out) == before and [p.name for p in tmp_path.iterdir()] == ["arc"]
    assert os.listdir(out)  # still the old export
