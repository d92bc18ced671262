"""``benchmarks/gpu_check.py``: its smoke runs the whole path on the CPU, and its verdicts fail what they should.

The checks themselves need a GPU; here the smoke proves every item runs end to end on the CPU (the
CUDA-only parts reported as skipped), and fabricated preflight reports prove the pass/fail rules.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from baselines_helpers import one_thread  # noqa: F401  (autouse fixture)

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "gpu_check.py"
sys.path.insert(0, str(SCRIPT.parent))

import gpu_check  # noqa: E402


def _report(**changes) -> dict:
    """A preflight report of a compiled CUDA run that passes every check."""
    report = {"out_of_memory": False, "host_syncs_per_update": 0, "compile_fell_back": False, "compile": True,
              "verdict": {"estimate_bytes": 4 * 2**30}, "measured_peak_bytes": 3 * 2**30, "update_s": 0.05,
              "micro_batch": 32, "grad_accum": 1, "first_update_s": 40.0}
    return {**report, **changes}


@pytest.mark.parametrize(("changes", "status", "reason"), [
    ({}, "PASS", "allocator peak 3.00 GB = 0.75x the estimate"),
    ({"measured_peak_bytes": 5.2 * 2**30}, "FAIL", "the allocator's peak is 1.30x preflight's estimate"),
    ({"host_syncs_per_update": 2}, "FAIL", "2 host syncs per update"),
    ({"compile_fell_back": True}, "FAIL", "torch.compile fell back"),
    ({"out_of_memory": True}, "FAIL", "out of memory"),
])
def test_preflight_verdicts(monkeypatch, changes, status, reason):
    monkeypatch.setattr("cogen_baselines.preflight.preflight", lambda config, steps: _report(**changes))
    setup = gpu_check.Setup({"grids": "g", "episodes": "e"}, {"grids": "C1-1", "episodes": "x"},
                            torch.device("cuda"), smoke=False)
    item = gpu_check.preflight_item("llada", setup)
    assert item.status == status and reason in item.detail


@pytest.mark.slow
def test_the_smoke_runs_every_item_on_the_cpu(tmp_path):
    """Every item runs (the CUDA-only parts skipped, none failed), in well under a minute of CPU."""
    report = tmp_path / "check.json"
    result = subprocess.run([sys.executable, str(SCRIPT), "--smoke", "--json", str(report)], capture_output=True,
                            text=True, check=False, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    items = json.loads(report.read_text())
    names = [item["name"] for item in items]
    assert names[:2] == ["toolchain", "toolchain compile"] and "parity mlc" in names and "preflight mlc" in names
    assert {"epoch llada", "epoch pl-tf", "preflight pl-tf"} <= set(names)
    assert not [item for item in items if item["status"] == "FAIL"]
    assert all("skipped: no CUDA" in item["detail"] for item in items if item["status"] == "SKIP")
    assert "0 failed" in result.stdout
