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


def test_the_benchmarks_are_found():
    assert {"bench_build.py", "bench_startup.py", "bench_stream.py", "build_digests.py"} <= set(SCRIPTS)


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_every_benchmark_runs_in_its_smoke_mode(script, tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), "--smoke"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{script} --smoke failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert done.stdout.strip(), f"{script} --smoke printed nothing"
