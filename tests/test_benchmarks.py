"""Benchmarks cannot rot: every script in ``benchmarks/`` runs in its ``--smoke`` mode (seconds each).

The scripts are found by listing the folder, so a new benchmark is run here as soon as it exists: give
it a ``--smoke`` mode that exercises every mode of it on tiny inputs and exits 0.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(path.name for path in (ROOT / "benchmarks").glob("*.py"))
#: Scripts whose ``--smoke`` a test of their own runs, with stricter checks than the exit status and output
#: asked for here (running them twice would only cost time): script -> that test file.
SMOKED_ELSEWHERE = {"gpu_check.py": "test_baselines_gpu_check.py"}


def test_the_benchmarks_are_found():
    assert {"bench_build.py", "bench_startup.py", "bench_stream.py", "build_digests.py"} <= set(SCRIPTS)


def test_a_script_smoked_elsewhere_is_smoked_there():
    """The scripts left out below: their own test file runs ``benchmarks/<script> --smoke`` and checks its exit status."""
    for script, test_file in SMOKED_ELSEWHERE.items():
        assert script in SCRIPTS
        text = (ROOT / "tests" / test_file).read_text(encoding="utf-8")
        assert f'"benchmarks" / "{script}"' in text and '"--smoke"' in text and "returncode == 0" in text, test_file


@pytest.mark.slow
@pytest.mark.parametrize("script", [script for script in SCRIPTS if script not in SMOKED_ELSEWHERE])
def test_every_benchmark_runs_in_its_smoke_mode(script, tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), "--smoke"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{script} --smoke failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert done.stdout.strip(), f"{script} --smoke printed nothing"
