"""The wheel carries the specs, the object bank and the card template, so `pip install cogen-arc` users have them."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_wheel_ships_specs_bank_and_card_template(tmp_path):
    pytest.importorskip("hatchling")
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                             "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    wheel = next(tmp_path.glob("cogen_arc-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    specs = sorted((ROOT / "split_specs").rglob("*.yaml"))
    assert any(spec.parent.name == "as_run" for spec in specs)
    for spec in specs:
        assert f"cogen/_data/split_specs/{spec.relative_to(ROOT / 'split_specs').as_posix()}" in names
    for bank_file in (ROOT / "objects").iterdir():
        assert f"cogen/_data/objects/{bank_file.name}" in names
    assert "cogen/_data/hub_card.md" in names
    assert {"cogen_baselines/__init__.py", "cogen_baselines/run.py", "cogen_baselines/models/base.py"} <= names
    assert not any(name.startswith("tests/") or name.endswith((".nbi", ".nbc")) for name in names)
