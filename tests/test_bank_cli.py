"""``cogen objects``: build, info, verify, show, through typer's CliRunner on the real app."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from typer.testing import CliRunner

from cogen._resources import objects_dir
from cogen.bank import POOLS, load_bank
from cogen.cli import app

runner = CliRunner()


def _run(*args):
    return runner.invoke(app, ["objects", *args], catch_exceptions=False)


def test_info_prints_property_counts_and_pools():
    result = _run("info")
    assert result.exit_code == 0, result.output
    bank = load_bank()
    assert f"{len(bank):,} objects" in result.output
    count = int(bank.column("is_shape_hollow").sum())
    assert "is_shape_hollow" in result.output and f"{count:,}" in result.output
    for name, pool in POOLS.items():
        assert name in result.output and f"{pool.reference:,}" in result.output


def test_show_by_id_and_where():
    result = _run("show", "--id", "0", "--id", "7")
    assert result.exit_code == 0 and "#0 " in result.output and "#7 " in result.output
    result = _run("show", "--where", "is_shape_hollow, rows<6, is_shape_evenly_colored", "--limit", "3")
    assert result.exit_code == 0 and "objects match; showing 3" in result.output


@pytest.mark.parametrize("args, message", [
    (("show", "--where", "is_shape_holow"), "is_shape_hollow"),
    (("show", "--id", "999999"), "out of range"),
    (("show", "--where", "rows<<3"), "--where term 1"),
])
def test_show_errors_name_the_problem(args, message):
    from cogen.errors import CogenError

    with pytest.raises(CogenError, match=message):
        _run(*args)


def test_show_needs_a_selection():
    result = runner.invoke(app, ["objects", "show"])
    assert result.exit_code != 0 and "--id" in result.output


@pytest.mark.slow
def test_verify_and_build(tmp_path):
    assert _run("verify").exit_code == 0
    if os.environ.get("NUMBA_DISABLE_JIT") == "1":
        pytest.skip("a full rebuild in plain Python takes minutes")
    result = _run("build", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    written = json.loads((tmp_path / "manifest.json").read_text())
    assert written["bank_sha256"] in result.output.replace("\n", "")
    assert written["bank_sha256"] == load_bank().sha256


def test_info_on_a_corrupt_copy_says_how_to_rebuild(tmp_path):
    from cogen.errors import BankError

    shutil.copytree(objects_dir(), tmp_path / "objects")
    (tmp_path / "objects" / "bank.bin").write_bytes(b"COGENBNK")
    with pytest.raises(BankError, match="cogen objects build --out"):
        _run("info", "--path", str(tmp_path / "objects"))
