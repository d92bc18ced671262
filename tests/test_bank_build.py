"""The builder is deterministic: a rebuild reproduces the shipped files byte for byte, and the
Numba kernels agree with plain Python (NUMBA_DISABLE_JIT) and with an independent RNG."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from cogen._resources import objects_dir
from cogen.bank import build_bank, load_bank, write_bank
from cogen.bank._store import TABLE_FILE

_JIT_OFF = os.environ.get("NUMBA_DISABLE_JIT") == "1"


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory):
    if _JIT_OFF:
        pytest.skip("a full rebuild in plain Python takes minutes")
    directory = tmp_path_factory.mktemp("bank")
    return directory, write_bank(build_bank(), directory)


def _arrow_writer() -> str:
    import pyarrow

    return f"pyarrow {pyarrow.__version__}"


@pytest.mark.slow
def test_rebuild_reproduces_the_manifest_checksums(rebuilt):
    directory, manifest = rebuilt
    shipped = json.loads((objects_dir() / "manifest.json").read_text())
    for name, entry in shipped["files"].items():
        if name == TABLE_FILE and shipped["arrow_writer"] != _arrow_writer():
            continue  # Arrow's own bytes may differ between pyarrow releases; its content is checked below
        assert manifest["files"][name] == entry, f"{name} differs from the shipped one: rebuild the bank"
    assert manifest["bank_sha256"] == shipped["bank_sha256"] == load_bank().sha256
    assert load_bank(directory).sha256 == load_bank().sha256


@pytest.mark.slow
def test_rebuilt_arrow_table_has_the_shipped_content(rebuilt):
    pyarrow = pytest.importorskip("pyarrow")
    directory, _ = rebuilt
    tables = [pyarrow.ipc.open_file(pyarrow.memory_map(str(d / TABLE_FILE))).read_all()
              for d in (directory, objects_dir())]
    assert tables[0].equals(tables[1])


@pytest.mark.slow
def test_built_bank_equals_its_written_files(rebuilt):
    directory, _ = rebuilt
    bank = load_bank(directory)
    assert bank.meta["builder_version"] == json.loads((directory / "manifest.json").read_text())["builder_version"]


# ------------------------------------------------------------------------------ determinism


def _weyl_rng(seed: int):
    """Independent plain-Python statement of the generator's RNG (Weyl sequence + hash)."""
    m32, m62 = 2**32 - 1, 2**62 - 1

    def mix(x):
        for _ in range(2):
            x = (((x >> 16) ^ x) * 0x45D9F3B) % 2**32
        return (x >> 16) ^ x

    state = ((mix(seed & m32) << 30) | mix(seed >> 32 & m32)) & m62
    while True:
        state = (state + (0x2545F4914F6CDD1D & m62)) % 2**62
        yield mix(mix(state & m32) ^ (state >> 30))


def test_rng_matches_an_independent_statement():
    from cogen.bank._generate import _seed_state, next32

    seed = (20_250_523 << 32) | 17
    state = _seed_state(seed)
    expected = _weyl_rng(seed)
    assert [next32(state) for _ in range(1000)] == [next(expected) for _ in range(1000)]


_SNIPPET = """
import hashlib, sys
from cogen.bank._recipes import sweep
from cogen.bank._generate import generate
recipes = sweep()[::997].copy()
grids, shapes = generate(recipes)
print(hashlib.sha256(grids.tobytes() + shapes.tobytes()).hexdigest())
"""


@pytest.mark.slow
def test_kernels_give_the_same_objects_without_jit():
    from cogen.bank._generate import generate
    from cogen.bank._recipes import sweep

    grids, shapes = generate(sweep()[::997].copy())
    jit = hashlib.sha256(grids.tobytes() + shapes.tobytes()).hexdigest()
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    plain = subprocess.run([sys.executable, "-c", _SNIPPET], env=env, capture_output=True, text=True, check=True)
    assert plain.stdout.strip() == jit


def test_kernel_codes_match_the_vocabularies():
    from cogen.bank import _generate as kernels
    from cogen.bank import _recipes as recipes

    def codes(vocabulary, names):
        return [vocabulary.index(name) for name in names]

    assert [kernels._FOOTPRINT, kernels._GROWN] == codes(recipes.FAMILIES, ["footprint", "grown"])
    assert [kernels._RECTANGLE, kernels._SQUARE, kernels._DISK, kernels._DIAMOND, kernels._ELLIPSE] == \
        codes(recipes.FOOTPRINTS, ["rectangle", "square", "disk", "diamond", "ellipse"])
    assert [kernels._CONN4, kernels._CONN8, kernels._DISTANCE] == \
        codes(recipes.CONNECTIVITIES, ["4-connected", "8-connected", "distance"])
    assert [kernels._SYM_H, kernels._SYM_V, kernels._SYM_DIAG, kernels._SYM_ANTI, kernels._SYM_POINT,
            kernels._SYM_NONE] == codes(recipes.SYMMETRIES, ["horizontal", "vertical", "diagonal",
                                                             "antidiagonal", "point", "none"])
    assert [kernels._UNIFORM, kernels._ROW_STRIPES, kernels._COL_STRIPES, kernels._DIAG_STRIPES,
            kernels._TOP_BOTTOM, kernels._LEFT_RIGHT, kernels._RANDOM] == list(range(len(recipes.COLOR_PATTERNS)))
    assert [kernels._FAMILY, kernels._KIND, kernels._SYMMETRY, kernels._OUTLINE, kernels._PATTERN, kernels._ROWS,
            kernels._COLS, kernels._COLOR, kernels._SEED] == list(range(len(recipes.RECIPE_COLUMNS)))


def test_sweep_is_a_plain_enumeration():
    from cogen.bank._recipes import RECIPE_COLUMNS, sweep

    table = sweep()
    assert table.shape[1] == len(RECIPE_COLUMNS) and np.array_equal(table, sweep())
    assert len(np.unique(table[:, -1])) == len(table)


def test_the_shipped_readme_is_the_one_the_shipped_bank_writes():
    from cogen.bank._readme import readme

    assert readme(load_bank()) == (objects_dir() / "README.md").read_text(encoding="utf-8")
