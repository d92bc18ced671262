"""Numba caches stay honest: every kernel module pins the files it takes code or constants from (cogen.pins)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import cogen
from cogen import pins

PACKAGE = Path(cogen.__file__).resolve().parent


def _module(path: Path) -> str:
    return ".".join(("cogen", *path.relative_to(PACKAGE).with_suffix("").parts))


def _kernel_modules() -> dict[str, set[str]]:
    """Modules that define kernels (import cogen.jit) -> the cogen modules they import at module level."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {node.module for node in tree.body if isinstance(node, ast.ImportFrom) and node.module}
        imported |= {f"{node.module}.{alias.name}" for node in tree.body if isinstance(node, ast.ImportFrom)
                     and node.module == "cogen" for alias in node.names}
        if "cogen.jit" in imported and _module(path) != "cogen.jit":
            found[_module(path)] = {name for name in imported if name.startswith("cogen.") and name != "cogen.jit"}
    return found


def test_every_pin_is_current():
    assert not pins.stale_modules(), "kernels changed: run `python -m cogen.pins`"


def test_every_kernel_module_pins_exactly_what_it_imports():
    kernels = _kernel_modules()
    assert "cogen.families.cogitao.generate._sampler" in kernels and "cogen.rng" in kernels  # the scan sees the real modules
    for module, imported in kernels.items():
        assert set(pins.PINNED.get(module, ())) == imported, module


@pytest.mark.slow
def test_a_stale_pin_compiles_the_module_without_the_cache_and_gives_the_same_samples():
    script = """
import numpy as np
from cogen import pins
pins.is_current = lambda module: module != "cogen.families.cogitao.generate._sampler"
from cogen.families.cogitao.generate import _sampler
from cogen.families.cogitao.generate.sampler import SplitJob, generate_rows
from cogen.specs import load_spec
assert type(_sampler.generate._cache).__name__ == "NullCache"
domain = load_spec("c1").experiment("C1-1").domain("train")
rows = generate_rows(SplitJob.of(domain, 7, "C1-1", "train"), np.arange(20))
print(rows["keys"].tobytes().hex())
"""
    stale = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert "compiling its kernels without the cache" in stale.stderr

    import numpy as np

    from cogen.families.cogitao.generate import _sampler
    from cogen.families.cogitao.generate.sampler import SplitJob, generate_rows
    from cogen.specs import load_spec

    assert type(_sampler.generate._cache).__name__ != "NullCache"
    domain = load_spec("c1").experiment("C1-1").domain("train")
    rows = generate_rows(SplitJob.of(domain, 7, "C1-1", "train"), np.arange(20))
    assert stale.stdout.strip() == rows["keys"].tobytes().hex()


def test_refresh_writes_the_digest_of_the_dependencies(tmp_path, monkeypatch):
    dependencies = pins.PINNED["cogen.carc._kernels"]
    assert "cogen.rng" in dependencies
    for module in ("cogen.carc._kernels", *dependencies):
        relative = pins._path(module).relative_to(PACKAGE)
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text((PACKAGE / relative).read_text())
    monkeypatch.setattr(pins, "_PACKAGE", tmp_path)
    monkeypatch.setattr(pins, "PINNED", {"cogen.carc._kernels": dependencies})
    pins.is_current.cache_clear()
    try:
        assert pins.is_current("cogen.carc._kernels")
        (tmp_path / "rng.py").write_text((tmp_path / "rng.py").read_text() + "\n# an edit\n")
        pins.is_current.cache_clear()
        assert pins.stale_modules() == ["cogen.carc._kernels"]
        assert pins.refresh() == [str(Path(tmp_path.name) / "carc" / "_kernels.py")]
        assert pins.stale_modules() == [] and pins.refresh() == []
    finally:
        pins.is_current.cache_clear()
