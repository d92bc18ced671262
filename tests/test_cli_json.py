"""Output for scripts: --json on build, verify, push --dry-run, objects info and sample; full names
when stdout is a pipe; shell completion offered."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

from cogen.cli import app
from cogen.folder.manifest import read_manifests

runner = CliRunner()


def _json(args: list[str], code: int = 0) -> dict:
    result = runner.invoke(app, args)
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


def test_verify_json_lists_every_check_and_fails_with_its_exit_code(small_build, tmp_path):
    report = _json(["verify", str(small_build), "--sample", "0", "--no-progress", "--json"])
    assert report["ok"] and report["checks"] and all(c["ok"] for c in report["checks"])
    assert {c["config"] for c in report["checks"]} >= set(read_manifests(small_build))
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(small_build, broken)
    shard = broken / read_manifests(broken)["C1-1"]["splits"]["test"]["files"][0]
    shard.write_bytes(shard.read_bytes()[:-10])
    report = _json(["verify", str(broken), "--sample", "0", "--no-progress", "--json"], code=1)
    assert not report["ok"] and any(not c["ok"] and "C1-1" in c["detail"] for c in report["checks"])


def test_build_json_reports_rows_per_config(tmp_path):
    report = _json(["build", "--config", "C1-1", "--out", str(tmp_path / "b"), "--scale", "0.001", "--workers", "1",
                    "--no-progress", "--json"])
    manifest = read_manifests(tmp_path / "b")["C1-1"]
    (config,) = report["configs"]
    assert config["config"] == "C1-1" and config["rows"] == {s: v["rows"] for s, v in manifest["splits"].items()}


def test_sample_json_is_the_pair_the_engine_draws():
    from cogen.families.cogitao.generate.single import sample_one

    report = _json(["sample", "-t", "rot90,translate_up", "--grid", "8", "--objects", "1", "--seed", "3", "--json"])
    expected = sample_one(["rot90", "translate_up"], height=8, width=8, objects=1, where=None, seed=3)
    assert np.array_equal(np.array(report["input"]), expected.input)
    assert np.array_equal(np.array(report["output"]), expected.output)
    assert report["transformations"] == ["rot90", "translate_up"]


def test_objects_info_json_counts_the_bank():
    from cogen.bank import load_bank, pool_sizes

    report = _json(["objects", "info", "--json"])
    bank = load_bank()
    assert report["objects"] == len(bank) and report["sha256"] == bank.sha256
    assert {name: pool["objects"] for name, pool in report["pools"].items()} == pool_sizes(bank)


@pytest.mark.slow
def test_piped_tables_keep_full_config_names(small_build, tmp_path):
    """With stdout a pipe and an 80-column terminal, no config name is cut (`carc-systemat…`)."""
    import shutil

    folder = tmp_path / "long"
    shutil.copytree(small_build, folder)
    env = {**os.environ, "COLUMNS": "80", "TERMINAL_WIDTH": "80"}
    result = subprocess.run([sys.executable, "-m", "cogen", "push", str(folder), "--repo",
                             "org/a-very-long-repository-name-for-testing", "--dry-run", "--no-verify"],
                            env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "…" not in result.stdout
    for path in ("data/C1-1/validation_ood-00000-of-00001.parquet", "manifests/G2-1.json"):
        assert path in result.stdout


def test_shell_completion_is_offered():
    result = runner.invoke(app, ["--help"])
    assert "--install-completion" in result.output and "--show-completion" in result.output
