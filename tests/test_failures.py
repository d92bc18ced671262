"""Every failure a user can meet is one clear line and an exit code, never a traceback.

Each test runs the real entry point (``cogen.cli.main``) in-process, so file-system faults can be
injected where a real one cannot be made (a full disk, a read-only file system, a permission
that root ignores), and asserts the exit code, exactly one line on stderr that names the file
and the fix, and no traceback. A last test fills and freezes a real tmpfs when the machine lets
it mount one.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli_build import SPEC  # the same tiny spec the CLI tests build


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    """Run ``cogen ARGS`` through ``cogen.cli.main``; returns (exit code, stdout, stderr)."""
    from cogen.cli import main

    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    argv, sys.argv = sys.argv, ["cogen", *map(str, args)]
    try:
        main()
        code = 0
    except SystemExit as exit:
        code = exit.code if isinstance(exit.code, int) else int(exit.code is not None)
    finally:
        sys.argv = argv
        for number, handler in handlers.items():
            signal.signal(number, handler)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_error_line(code: int, err: str, expected_code: int = 1) -> str:
    """The single ``error:`` line of stderr (asserting the exit code, one line, no traceback)."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err, err
    assert code == expected_code, (code, err)
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


@pytest.fixture
def spec(tmp_path) -> Path:
    path = tmp_path / "t.yaml"
    path.write_text(SPEC)
    return path


@pytest.fixture(scope="module")
def built(shared_build) -> Path:
    """A build of ``SPEC``, shared with tests/test_integrity.py (read-only: tests copy it first)."""
    return shared_build(SPEC)


def _copy(built: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "copy"
    shutil.copytree(built, folder)
    return folder


# ---------------------------------------------------------------- writing: disk full, read-only, permissions
@pytest.mark.parametrize("number, phrase", [
    (errno.ENOSPC, "the disk is full; free some space and run the command again (No space left on device)"),
    (errno.EROFS, "the file system is read-only; choose a writable location"),
    (errno.EACCES, "permission denied; choose a location you may write to"),
])
def test_a_shard_that_cannot_be_written(spec, tmp_path, monkeypatch, capsys, number, phrase):
    import pyarrow.parquet as pq

    class FailingWriter:
        def __init__(self, *args, **kwargs):
            raise OSError(number, os.strerror(number))

    monkeypatch.setattr(pq, "ParquetWriter", FailingWriter)
    code, _, err = run_cli(capsys, "build", "--config", spec, "--out", tmp_path / "out", "--workers", "1",
                           "--no-progress")
    line = one_error_line(code, err)
    assert f"cannot write {tmp_path / 'out'}/data/T-1/" in line and phrase in line


def test_a_manifest_that_cannot_be_written(spec, tmp_path, monkeypatch, capsys):
    from pathlib import Path as PathType

    real = PathType.write_text

    def full(self, *args, **kwargs):
        if self.name.startswith(".T-1.json"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(PathType, "write_text", full)
    code, _, err = run_cli(capsys, "build", "--config", spec, "--out", tmp_path / "out", "--workers", "1",
                           "--no-progress")
    assert f"cannot write {tmp_path / 'out' / 'manifests' / 'T-1.json'}: the disk is full" in one_error_line(code, err)
    assert not list((tmp_path / "out" / "manifests").glob("*"))  # no half manifest, no temporary file


def test_an_out_folder_that_cannot_be_created(capsys, spec, tmp_path):
    code, _, err = run_cli(capsys, "build", "--config", spec, "--out", "/sys/cogen-test-out", "--no-progress")
    assert one_error_line(code, err).startswith("error: cannot create the output folder /sys/cogen-test-out: ")


def test_an_out_folder_below_a_file(capsys, spec, tmp_path):
    (tmp_path / "file").write_text("x")
    code, _, err = run_cli(capsys, "build", "--config", spec, "--out", tmp_path / "file" / "out", "--no-progress")
    assert "a part of the path is a file, not a folder" in one_error_line(code, err)


def test_a_read_only_out_folder(capsys, spec, tmp_path, monkeypatch):
    import cogen.folder.lock as lock

    real = os.open

    def read_only(path, *args, **kwargs):
        if str(path).endswith(".cogen/lock"):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(lock.os, "open", read_only)
    code, _, err = run_cli(capsys, "build", "--config", spec, "--out", tmp_path / "out", "--no-progress")
    assert one_error_line(code, err) == (f"error: cannot write into {tmp_path / 'out'}: the file system is read-only; "
                                         "choose a writable location (Read-only file system)")


# ---------------------------------------------------------------- reading: corrupt or truncated files
def test_verify_on_a_truncated_shard_names_it(built, tmp_path, capsys):
    folder = _copy(built, tmp_path)
    shard = folder / "data/T-1/test-00000-of-00001.parquet"
    shard.write_bytes(shard.read_bytes()[:-100])
    code, out, err = run_cli(capsys, "verify", folder, "--no-progress")
    assert one_error_line(code, err).endswith("checks failed")
    assert "data/T-1/test-00000-of-00001.parquet: not a readable Parquet file" in " ".join(out.split())


def test_a_corrupt_manifest(built, tmp_path, capsys):
    folder = _copy(built, tmp_path)
    (folder / "manifests/T-1.json").write_bytes(b"\x00\xff{not json")
    for command in (["verify", folder], ["push", folder, "--repo", "org/x", "--dry-run"]):
        code, _, err = run_cli(capsys, *command)
        assert "T-1.json: unreadable manifest" in one_error_line(code, err)


def test_a_shard_path_that_is_a_folder(built, tmp_path, capsys, spec):
    folder = _copy(built, tmp_path)
    shard = folder / "data/T-1/train-00000-of-00001.parquet"
    shard.unlink()
    shard.mkdir()
    code, out, err = run_cli(capsys, "verify", folder, "--no-progress")
    one_error_line(code, err)
    assert "train-00000-of-00001.parquet: a folder where a shard file should be" in " ".join(out.split()) or \
        "train-00000-of-00001.parquet: not a readable Parquet file" in " ".join(out.split())
    code, _, err = run_cli(capsys, "build", "--config", spec, "--out", folder, "--workers", "1", "--no-progress")
    assert "train-00000-of-00001.parquet is a folder where a shard file belongs" in one_error_line(code, err)


# ---------------------------------------------------------------- folders given as files, files as folders
def test_eval_json_and_prompts_out_given_a_folder(built, tmp_path, capsys):
    predictions = tmp_path / "p.jsonl"
    assert run_cli(capsys, "eval", "baseline", "-d", built, "-c", "T-1", "-s", "test", "-o", predictions)[0] == 0
    code, _, err = run_cli(capsys, "eval", "-d", built, "-c", "T-1", "-s", "test", "-p", predictions, "--json-out",
                           tmp_path)
    assert one_error_line(code, err).startswith(f"error: --json-out {tmp_path} is a folder; give a file name")
    code, _, err = run_cli(capsys, "prompts", "export", "-d", built, "-c", "T-1", "-s", "test", "--out", tmp_path)
    assert one_error_line(code, err).startswith(f"error: --out {tmp_path} is a folder; give a file name")


def test_a_spec_that_is_a_folder_and_a_folder_that_is_a_file(tmp_path, capsys):
    code, _, err = run_cli(capsys, "build", "--config", tmp_path, "--out", tmp_path / "o")
    assert code == 1 and f"{tmp_path}: is a folder, not a spec file" in err and "Traceback" not in err
    (tmp_path / "file").write_text("x")
    code, _, err = run_cli(capsys, "verify", tmp_path / "file")
    assert "is not a folder" in one_error_line(code, err)


# ---------------------------------------------------------------- messages keep their brackets
def test_brackets_paths_and_install_hints_survive(tmp_path, capsys, monkeypatch, spec):
    code, _, err = run_cli(capsys, "verify", tmp_path / "a[/y]b[bold]")
    assert one_error_line(code, err) == (f"error: {tmp_path / 'a[/y]b[bold]'} is not a folder; pass the --out folder "
                                         "of `cogen build` or `cogen merge`")
    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # as if the dask extra were not installed
    code, _, err = run_cli(capsys, "build", "--config", spec, "--out", tmp_path / "o", "--executor", "dask",
                           "--no-progress")
    assert one_error_line(code, err).endswith("pip install 'cogen-arc[dask]'")
    bad = tmp_path / "bad.yaml"
    bad.write_text(SPEC.replace("height: [8, 8]", "height: {lo: 8}"))
    code, _, err = run_cli(capsys, "build", "--config", bad, "--out", tmp_path / "o")
    assert code == 1 and "expected a range [lo, hi], got a dict" in err and "write e.g. [2, 4]" in err


# ---------------------------------------------------------------- the dataset card of someone else
def test_a_readme_cogen_did_not_write_is_kept_unless_forced(built, tmp_path, capsys, spec):
    out = tmp_path / "project"
    out.mkdir()
    (out / "README.md").write_text("# My project\n")
    code, _, err = run_cli(capsys, "build", "--config", spec, "--out", out, "--workers", "1", "--no-progress")
    line = one_error_line(code, err)
    assert f"{out / 'README.md'} was not written by cogen" in line and "--force" in line
    assert (out / "README.md").read_text() == "# My project\n" and not (out / "data").exists()
    folder = _copy(built, tmp_path)
    (folder / "README.md").write_text("# notes\n")
    code, _, err = run_cli(capsys, "card", folder)
    assert "was not written by cogen" in one_error_line(code, err)
    assert run_cli(capsys, "card", folder, "--force", "--no-previews")[0] == 0
    assert run_cli(capsys, "build", "--config", spec, "--out", folder, "--workers", "1", "--no-progress")[0] == 0


# ---------------------------------------------------------------- eval with nothing to read
@pytest.mark.parametrize("content", [b"", bytes(range(256)) * 8, b'{"id": "elsewhere-0", "prediction": [[1]]}\n'],
                         ids=["empty", "binary", "foreign ids"])
def test_eval_exits_non_zero_when_no_prediction_can_be_read(built, tmp_path, capsys, content):
    predictions = tmp_path / "p.jsonl"
    predictions.write_bytes(content)
    code, out, err = run_cli(capsys, "eval", "-d", built, "-c", "T-1", "-s", "test", "-p", predictions)
    assert one_error_line(code, err).startswith(f"error: no prediction could be read from {predictions}")
    assert out == ""


def test_eval_still_scores_a_file_with_some_predictions(built, tmp_path, capsys):
    predictions = tmp_path / "p.jsonl"
    run_cli(capsys, "eval", "baseline", "-d", built, "-c", "T-1", "-s", "test", "-o", predictions)
    lines = predictions.read_text().splitlines()
    predictions.write_text(lines[0] + "\n")  # four of five missing: scored, not refused
    code, out, err = run_cli(capsys, "eval", "-d", built, "-c", "T-1", "-s", "test", "-p", predictions)
    assert code == 0 and "missing 4" in out, err


# ---------------------------------------------------------------- sample --where
@pytest.mark.parametrize("where, holds", [
    ("rows<3", lambda h, w: h < 3),
    ("rows<=2, cols<=2", lambda h, w: h <= 2 and w <= 2),
    ("rows>2", lambda h, w: h > 2),
    ("cols>=3, rows<=5", lambda h, w: w >= 3 and h <= 5),
    ("is_shape_fully_connected, rows<=5, cols<=5", lambda h, w: h <= 5 and w <= 5),  # the --help example
])
def test_sample_where_comparisons(capsys, where, holds):
    from cogen.bank import load_bank
    from cogen.families.cogitao.generate.single import sample_one

    code, out, err = run_cli(capsys, "sample", "-t", "rot90", "--grid", "14", "--where", where)
    assert code == 0 and "objects (bank id" in out, err
    bank = load_bank()
    for seed in range(3):
        for bank_id in sample_one(["rot90"], height=14, width=14, where=where, seed=seed).object_ids:
            assert holds(*bank.object(bank_id).shape), (where, bank_id)


# ---------------------------------------------------------------- a real full, then read-only, file system
def _mount_tmpfs(path: Path, size: str) -> bool:
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    path.mkdir()
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                          capture_output=True).returncode == 0


@pytest.mark.slow
def test_a_real_full_and_read_only_file_system(spec, tmp_path):
    """Needs root and a kernel that lets it mount a tmpfs; skipped elsewhere (the injected faults
    above cover the same messages)."""
    disk = tmp_path / "disk"
    if not _mount_tmpfs(disk, "24k"):
        pytest.skip("cannot mount a tmpfs here")
    cogen = [sys.executable, "-m", "cogen", "build", "--config", str(spec), "--workers", "1", "--no-progress"]
    try:
        full = subprocess.run([*cogen, "--out", str(disk / "out")], capture_output=True, text=True, timeout=300)
        lines = full.stderr.strip().splitlines()
        assert full.returncode == 1 and len(lines) == 1 and "Traceback" not in full.stderr, full.stderr
        assert "the disk is full; free some space and run the command again" in lines[0]
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        frozen = subprocess.run([*cogen, "--out", str(disk / "out2")], capture_output=True, text=True, timeout=300)
        assert frozen.returncode == 1 and "Traceback" not in frozen.stderr
        assert "the file system is read-only; choose a writable location" in frozen.stderr
    finally:
        subprocess.run(["umount", str(disk)], capture_output=True)


def test_manifests_say_what_they_hold(built):
    manifest = json.loads((built / "manifests/T-1.json").read_text())
    assert manifest["manifest_format"] == 2
    record = manifest["splits"]["train"]["shards"]["data/T-1/train-00000-of-00001.parquet"]
    assert set(record) == {"sha256", "bytes", "rows", "row_groups"} and record["rows"] == 40


# ---------------------------------------------------------------- progress: compiling, prompts, verify --full
@pytest.fixture
def bars(monkeypatch) -> list[tuple[str, object]]:
    """(description, total) of every progress bar the command line opens."""
    from rich.progress import Progress

    opened, real = [], Progress.add_task

    def add_task(self, description, *args, total=None, **kwargs):
        opened.append((description, total))
        return real(self, description, *args, total=total, **kwargs)

    monkeypatch.setattr(Progress, "add_task", add_task)
    return opened


@pytest.mark.slow
def test_a_slow_kernel_load_says_it_is_compiling(spec, tmp_path, monkeypatch, capsys, bars):
    import time

    import cogen.cli._progress as progress
    import cogen.families.cogitao.build as cogitao

    real = cogitao.CogitaoBuilder.pilot
    monkeypatch.setattr(cogitao.CogitaoBuilder, "pilot", lambda self: (time.sleep(0.8), real(self))[1])
    assert run_cli(capsys, "build", "--config", spec, "--out", tmp_path / "a", "--workers", "1")[0] == 0
    assert ("compiling kernels (first run only)", None) in bars
    bars.clear()
    monkeypatch.setattr(progress, "COMPILE_NOTICE_AFTER_S", 30.0)  # a load faster than this says nothing
    assert run_cli(capsys, "build", "--config", spec, "--out", tmp_path / "b", "--workers", "1")[0] == 0
    assert [d for d, _ in bars] == ["sampling keys", "writing shards"]


def test_prompts_export_and_verify_full_show_progress(built, tmp_path, capsys, bars):
    assert run_cli(capsys, "prompts", "export", "-d", built, "-c", "T-1", "-s", "test", "-o", tmp_path / "p.jsonl")[0] == 0
    assert bars == [("writing prompts", 5)]
    bars.clear()
    assert run_cli(capsys, "verify", built, "--full")[0] == 0
    assert bars == [("checking every row", 60)]


def test_a_merge_into_a_folder_being_built_refuses(built, tmp_path):
    from cogen.errors import BuildError
    from cogen.folder import FolderLock
    from cogen.hub.merging import merge

    into = tmp_path / "into"
    with FolderLock(into), pytest.raises(BuildError, match=f"{into} is being written by another cogen process"):
        merge([built], into)
