"""The wheel works on its own: built, installed (not editable) in a fresh venv outside the repository, then
``cogen build``, ``cogen verify``, ``cogen objects info`` and ``datasets.load_dataset`` run from it.

Offline: the wheel is installed with ``--no-index --no-deps``, and the new venv reaches the dependencies
already installed beside this interpreter through a ``.pth`` line (a directory named there is added to
``sys.path`` without its own ``.pth`` files being read, so this checkout's editable install stays out).
Every packaged file the commands need (specs, object bank, card template) must come from the wheel.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(command: list, cwd: Path, env: dict | None = None) -> str:
    result = subprocess.run([str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True)
    assert result.returncode == 0, f"{' '.join(map(str, command))}\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, dict, Path]:
    """(the venv's bin folder, its environment, a work folder outside the repository)."""
    pytest.importorskip("hatchling")
    tmp = tmp_path_factory.mktemp("wheel")
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", tmp / "dist", ROOT],
        cwd=tmp)
    wheel = next((tmp / "dist").glob("cogen_arc-*-py3-none-any.whl"))
    venv.create(tmp / "venv", with_pip=False)
    bin_dir = tmp / "venv" / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / "python"
    site = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=tmp).strip())
    (site / "_dependencies_here.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", "--no-index", wheel], cwd=tmp)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "HF_HUB_OFFLINE": "1",
           "HF_DATASETS_CACHE": str(tmp / "hf-datasets"), "PYTHONNOUSERSITE": "1"}
    env.pop("PYTHONPATH", None)
    work = tmp / "work"
    work.mkdir()
    return bin_dir, env, work


@pytest.mark.slow
def test_the_installed_wheel_is_the_one_imported(installed):
    bin_dir, env, work = installed
    where = json.loads(run([bin_dir / "python", "-c", "import cogen, json, importlib.metadata as m; "
                            "print(json.dumps([cogen.__file__, m.version('cogen-arc')]))"], cwd=work, env=env))
    assert Path(where[0]).is_relative_to(bin_dir.parent) and not Path(where[0]).is_relative_to(ROOT)
    assert where[1] == run([sys.executable, "-c", "from cogen._version import __version__; print(__version__)"],
                           cwd=ROOT).strip()


@pytest.mark.slow
def test_build_verify_objects_and_load_from_the_wheel(installed):
    bin_dir, env, work = installed
    cogen = bin_dir / "cogen"
    run([cogen, "build", "--config", "c1", "--scale", "0.001", "--out", "data", "--workers", "1", "--no-progress"],
        cwd=work, env=env)
    assert "checks passed" in run([cogen, "verify", "data", "--no-progress"], cwd=work, env=env)
    info = json.loads(run([cogen, "objects", "info", "--json"], cwd=work, env=env))
    assert info["objects"] > 20_000
    rows = run([bin_dir / "python", "-c", "import datasets; d = datasets.load_dataset('data', 'C1-1'); "
                "print(d['train'].num_rows, sorted(d))"], cwd=work, env=env)
    assert rows.split()[0] == "100" and "test_ood" in rows
    assert "pip install cogen-arc" in (work / "data" / "README.md").read_text(encoding="utf-8")  # the card's template
