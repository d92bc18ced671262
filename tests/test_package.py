"""The package stays light and its entry point answers quickly."""

import subprocess
import sys
import time

import pytest


def _fresh_python(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout


@pytest.mark.slow
def test_import_cogen_does_not_import_heavy_modules():
    loaded = _fresh_python("import sys, cogen; print(' '.join(sorted(sys.modules)))").split()
    for heavy in ("torch", "numba", "datasets", "pyarrow"):
        assert heavy not in loaded, f"`import cogen` imported {heavy}"


@pytest.mark.slow
def test_cli_and_the_baselines_package_import_no_torch_until_a_model_is_needed():
    loaded = _fresh_python("import sys, cogen.cli, cogen_baselines, cogen_baselines.table; "
                           "print(' '.join(sorted(sys.modules)))").split()
    assert "torch" not in loaded


@pytest.mark.slow
def test_cli_help_is_fast_and_lists_commands():
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "cogen", "--help"], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    assert result.returncode == 0, result.stderr
    assert "Usage" in result.stdout
    assert elapsed < 2.0, f"cogen --help took {elapsed:.2f} s"


def test_cli_version():  # the one fast subprocess: `python -m cogen` itself (cogen/__main__.py)
    result = subprocess.run([sys.executable, "-m", "cogen", "--version"], capture_output=True, text=True)
    assert result.returncode == 0
    assert result.stdout.strip().startswith("cogen ")


@pytest.mark.slow
def test_usage_errors_are_reported_without_a_traceback():
    for args in (["nosuch"], ["build", "--nosuch"]):
        result = subprocess.run([sys.executable, "-m", "cogen", *args], capture_output=True, text=True)
        assert result.returncode == 2, result
        assert "Traceback" not in result.stderr and "Usage" in result.stderr
