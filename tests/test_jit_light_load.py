"""Kernels load from Numba's cache without refreshing the target context (:mod:`cogen.jit`).

The light load leans on Numba internals. These tests pin them: when a Numba upgrade changes one, a
test here fails and the light load is checked again (its runtime check falls back to Numba's own
load meanwhile). They also check that the light load is what runs, that it can be turned off, that
it falls back when it fails, and that it changes no result.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import numba
import pytest
from numba.core import caching, compiler, dispatcher

from cogen import jit

#: SHA-256 of the source of the Numba methods the light load replaces or calls (numba 0.68.1). A new
#: digest means Numba changed them: read the new source, check that :class:`cogen.jit._LightCache`
#: still does what ``load_overload`` does less the context refresh, then update the digest.
PINNED_SOURCES = {
    "Cache.load_overload": "49a98e578d710b9be9e88c1abb75e2c4c27e5a10417aedaf1965c646744456d1",
    "Cache._load_overload": "8cb8c1d9749fda3d43fb1542a5da713be4947ac77c0f6fcc2e72c93d0d7f977e",
}
#: Numba's modules that register C symbols with LLVM (``ll.add_symbol``): each is set up by the light
#: load (:data:`cogen.jit.SYMBOL_MODULES`), by the target context itself, by ``rtsys.initialize``, or
#: only for ``parallel=True`` kernels, which cogen has none of.
SYMBOL_SITES = {"core/base.py": "the context's own (_load_global_helpers)", "core/externals.py": "the context's init",
                "core/runtime/nrt.py": "rtsys.initialize", "cpython/hashing.py": "SYMBOL_MODULES",
                "np/ufunc/parallel.py": "parallel=True only"}
NUMBA = Path(numba.__file__).parent


def _digest(function) -> str:
    return hashlib.sha256(inspect.getsource(function).encode()).hexdigest()


def test_numbas_cache_loading_is_the_one_the_light_load_was_checked_against():
    found = {"Cache.load_overload": _digest(caching.Cache.load_overload),
             "Cache._load_overload": _digest(caching.Cache._load_overload)}
    assert found == PINNED_SOURCES, f"Numba {numba.__version__} changed its cache loading: {found}"
    assert caching.Cache.load_overload.__code__.co_names == jit.LOAD_OVERLOAD_NAMES
    # the dispatcher loads through its ``_cache``; a cache miss compiles, and compiling refreshes the context
    assert "self._cache.load_overload(sig, self.targetctx)" in inspect.getsource(dispatcher.Dispatcher.compile)
    assert "targetctx.refresh()" in inspect.getsource(compiler.CompilerBase.__init__)


def test_every_place_numba_registers_c_symbols_is_accounted_for():
    sites = sorted(path.relative_to(NUMBA).as_posix() for path in NUMBA.rglob("*.py")
                   if "tests" not in path.parts and "add_symbol(" in path.read_text(encoding="utf-8"))
    assert sites == sorted(SYMBOL_SITES), f"Numba {numba.__version__} registers C symbols in {sites}"


def test_kernels_load_light_unless_turned_off(monkeypatch):
    from cogen.families.cogitao.generate import _sampler

    assert type(_sampler.generate._cache) is jit._LightCache
    monkeypatch.setenv("COGEN_NUMBA_LIGHT_LOAD", "0")
    jit.light_load_enabled.cache_clear()
    try:
        assert not jit.light_load_enabled()
        plain = jit.kernel(lambda x: x + 1)  # cache=True: a module that pins nothing
        assert type(plain._cache) is caching.FunctionCache
    finally:
        jit.light_load_enabled.cache_clear()


def test_a_changed_cache_loader_turns_the_light_load_off(monkeypatch):
    monkeypatch.setattr(jit, "LOAD_OVERLOAD_NAMES", ("refresh", "_load_overload"))
    jit.light_load_enabled.cache_clear()
    try:
        assert not jit.light_load_enabled()
    finally:
        jit.light_load_enabled.cache_clear()


def test_a_failed_light_load_loads_as_numba_does(monkeypatch):
    calls = []
    cache = object.__new__(jit._LightCache)

    def broken(self, sig, target_context):
        raise OSError("unreadable")

    monkeypatch.setattr(jit._LightCache, "_load_overload", broken)
    monkeypatch.setattr(caching.FunctionCache, "load_overload",
                        lambda self, sig, ctx: calls.append((sig, ctx)) or "loaded")
    monkeypatch.setattr(jit, "_light_setup", lambda ctx: None)
    assert cache.load_overload("sig", "ctx") == "loaded" and calls == [("sig", "ctx")]


ROWS = """
import hashlib, json, sys
import numpy as np
from numba.core.registry import cpu_target
from cogen.pipeline.driver import builder_for
from cogen.specs import load_spec
from cogen.families.cogitao.generate.sampler import generate_rows

sha = hashlib.sha256()
builder = builder_for(load_spec("g1").scaled(0.001))
for experiment in builder.setting.experiments:
    for split in experiment.splits():
        rows = generate_rows(builder.job(experiment, split), np.arange(40))
        for name in sorted(rows):
            sha.update(name.encode() + rows[name].tobytes())
carc = builder_for(load_spec("carc").scaled(0.0005))
batch = carc.sampler.generate(np.arange(20))
for name, value in sorted(vars(batch).items()):
    if isinstance(value, np.ndarray):
        sha.update(name.encode() + value.tobytes())
print(json.dumps({"digest": sha.hexdigest(), "refreshed": bool(cpu_target.target_context._registries)}))
"""


@pytest.mark.slow
def test_the_light_load_gives_the_rows_numbas_load_gives():
    """Two fresh processes draw COGITAO rows and Compositional-ARC episodes from cached kernels: the light
    one never refreshes the target context, and both draw the same bytes."""
    runs = {}
    for light in ("1", "0"):
        done = subprocess.run([sys.executable, "-c", ROWS], capture_output=True, text=True, timeout=600,
                              env={**os.environ, "COGEN_NUMBA_LIGHT_LOAD": light})
        assert done.returncode == 0, done.stderr
        runs[light] = json.loads(done.stdout.strip().splitlines()[-1])
    assert runs["1"]["digest"] == runs["0"]["digest"]
    assert runs["0"]["refreshed"] and not runs["1"]["refreshed"]
