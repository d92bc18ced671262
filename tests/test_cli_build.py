"""The build, verify and sample commands, through the real CLI entry point."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from cogen.cli import app

runner = CliRunner()

SPEC = """\
setting: T
seed: 3
defaults:
  grid: {height: [8, 8], width: [8, 8]}
  objects: {count: [1, 2], where: {is_shape_fully_connected: true, rows: [1, 3], cols: [1, 3]}}
  sizes: {train: 40, validation: 5, test: 5, validation_ood: 5, test_ood: 5}
experiments:
  T-1:
    in_domain: {sequences: [[translate_up], [rot90]]}
    out_of_domain: {sequences: [[translate_up, rot90]]}
"""


def test_build_then_verify(tmp_path):
    spec = tmp_path / "t.yaml"
    spec.write_text(SPEC)
    out = tmp_path / "out"
    result = runner.invoke(app, ["build", "--config", str(spec), "--out", str(out), "--workers", "1", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "T-1" in result.stdout and "load with" in result.stdout
    result = runner.invoke(app, ["verify", str(out)])
    assert result.exit_code == 0, result.output
    assert "checks passed" in result.stdout
    (out / "data/T-1/test-00000-of-00001.parquet").unlink()
    result = runner.invoke(app, ["verify", str(out)])
    assert result.exit_code == 1 and "FAILED" in result.stdout


def test_build_with_scale_and_only_on_a_packaged_spec(tmp_path):
    result = runner.invoke(app, ["build", "--config", "g2", "--out", str(tmp_path), "--scale", "0.001",
                                 "--only", "G2-3", "--workers", "1", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert [p.name for p in (tmp_path / "data").iterdir()] == ["G2-3"]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cogen", *args], capture_output=True, text=True,
                          env={"TERMINAL_WIDTH": "200", "COLUMNS": "200", "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"})


@pytest.mark.slow
def test_bad_spec_path_is_a_clean_error(tmp_path):
    result = _cli("build", "--config", str(tmp_path / "missing.yaml"), "--out", str(tmp_path / "o"))
    assert result.returncode == 1
    assert "file not found" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_bad_spec_content_names_the_line(tmp_path):
    spec = tmp_path / "bad.yaml"
    spec.write_text(SPEC.replace("[rot90]]", "[rot_90x]]"))
    result = _cli("build", "--config", str(spec), "--out", str(tmp_path / "o"))
    assert result.returncode == 1
    assert "line 9" in result.stderr and "rot90" in result.stderr and "Traceback" not in result.stderr


def test_sample_shows_a_pair():
    result = runner.invoke(app, ["sample", "--transforms", "rot90,translate_up", "--grid", "12", "--objects", "2"])
    assert result.exit_code == 0, result.output
    assert "rot90 -> translate_up" in result.stdout and "bank id" in result.stdout


@pytest.mark.slow
def test_sample_rejects_unknown_names_and_impossible_grids():
    result = _cli("sample", "--transforms", "rotate_91")
    assert result.returncode == 1 and "did you mean" in result.stderr and "rot" in result.stderr
    result = _cli("sample", "--transforms", "rot90", "--grid", "3", "--objects", "9")
    assert result.returncode == 1 and "cannot fit" in result.stderr
