"""Contracts at the Numba boundary are named: what Python gets from a kernel, and the vectors it hands
one, are matched by name, never by position; and every family draws its random numbers through
cogen.rng."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import numpy as np
import pytest

import cogen
from cogen import rng
from cogen.slots import Slots

PACKAGE = Path(cogen.__file__).resolve().parent


def _module(path: Path) -> str:
    return ".".join(("cogen", *path.relative_to(PACKAGE).with_suffix("").parts))


def _trees() -> dict[str, ast.Module]:
    return {_module(path): ast.parse(path.read_text(encoding="utf-8")) for path in PACKAGE.rglob("*.py")}


def _kernels(trees) -> dict[str, dict[str, ast.FunctionDef]]:
    """Kernel module -> its ``@kernel`` functions."""
    found = {}
    for module, tree in trees.items():
        functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)
                     and any(isinstance(d, ast.Name) and d.id == "kernel" for d in node.decorator_list)}
        if functions:
            found[module] = functions
    return found


def _called_from_python(trees, kernels) -> set[tuple[str, str]]:
    """(module, kernel) of every kernel that a module without kernels imports or reaches as ``alias.kernel``."""
    called = set()
    for module, tree in trees.items():
        if module in kernels:
            continue
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    if f"{node.module}.{alias.name}" in kernels:
                        aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                    elif alias.name in kernels.get(node.module, {}):
                        called.add((node.module, alias.name))
        called |= {(aliases[node.value.id], node.attr) for node in ast.walk(tree)
                   if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                   and node.value.id in aliases and node.attr in kernels[aliases[node.value.id]]}
    return called


def test_every_kernel_python_calls_returns_one_array_or_a_namedtuple():
    trees = _trees()
    kernels = _kernels(trees)
    called = _called_from_python(trees, kernels)
    assert {("cogen.families.cogitao.generate._sampler", "generate"), ("cogen.carc._kernels", "generate"),
            ("cogen.bank._generate", "generate")} <= called  # the scan sees the real boundary
    positional = [f"{module}.{name}:{node.lineno}" for module, name in sorted(called)
                  for node in ast.walk(kernels[module][name])
                  if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple)]
    assert not positional, f"kernels that return a bare tuple to Python (return a namedtuple): {positional}"


def test_the_sampler_rows_are_its_row_fields():
    from cogen.families.cogitao.generate import _sampler
    from cogen.families.cogitao.generate.sampler import ROW_FIELDS, SplitJob, generate_rows
    from cogen.specs import load_spec

    assert ROW_FIELDS == _sampler.Rows._fields and ROW_FIELDS[-1] == "object_cells"  # generate grows it last
    domain = load_spec("c1").experiment("C1-1").domain("train")
    rows = generate_rows(SplitJob.of(domain, 7, "C1-1", "train", object_frames=True), np.arange(5))
    assert tuple(rows) == ROW_FIELDS
    starts = rows["object_cell_starts"]
    assert starts[0] == 0 and np.all(np.diff(starts) > 0) and starts[-1] == len(rows["object_cells"])


def test_program_arrays_are_the_program_fields_by_name():
    from dataclasses import fields

    from cogen.bank import load_bank
    from cogen.families.cogitao.generate import _sampler
    from cogen.families.cogitao.generate.program import Program, compile_domain
    from cogen.specs import load_spec

    program = compile_domain(load_spec("g5").experiment("G5-5").domain("train"), load_bank())
    arrays = program.arrays()
    assert set(_sampler.ProgramArrays._fields) <= {f.name for f in fields(Program)}
    for name in arrays._fields:
        assert getattr(arrays, name) is getattr(program, name), name


def _layouts() -> dict[str, Slots]:
    from cogen.carc import _kernels as carc
    from cogen.families.cogitao.generate import _sampler

    return {"sampler params": _sampler.DOMAIN_PARAMS, "carc params": carc.PARAMS, "carc grammar": carc.GRAMMAR,
            "carc masks": carc.MASKS, "carc meta": carc.META}


@pytest.mark.parametrize("name", ["sampler params", "carc params", "carc grammar", "carc masks", "carc meta"])
def test_every_layout_is_packed_and_read_back_by_name(name):
    slots = _layouts()[name]
    covered = sorted(i for slot in slots.starts for i in range(slots.slot(slot).start, slots.slot(slot).stop))
    assert covered == list(range(slots.size))  # the named slots tile the vector: no entry unnamed, none twice
    values, first = {}, 1
    for slot in slots.starts:  # distinct values everywhere, so a slot written to the wrong place shows
        width = slots.width(slot)
        values[slot] = first if width == 1 else list(range(first, first + width))
        first += width
    vector = slots.pack(**values)
    assert sorted(vector.tolist()) == list(range(1, slots.size + 1))
    back = slots.unpack(vector[None, :])
    assert {slot: np.ravel(back[slot]).tolist() for slot in slots.starts} == {
        slot: np.ravel(value).tolist() for slot, value in values.items()}


def test_a_parameter_vector_needs_every_slot_and_knows_no_other():
    from cogen.families.cogitao.generate._sampler import DOMAIN_PARAMS, P_H_LO

    values = {name: 1 for name in DOMAIN_PARAMS.starts}
    assert DOMAIN_PARAMS.pack(**{**values, "h_lo": 5})[P_H_LO] == 5
    with pytest.raises(TypeError, match="h_lo"):
        DOMAIN_PARAMS.pack(**{k: v for k, v in values.items() if k != "h_lo"})
    with pytest.raises(KeyError, match="height"):
        DOMAIN_PARAMS.pack(**values, height=3)
    with pytest.raises(ValueError, match="holds 1 entries"):
        DOMAIN_PARAMS.pack(**{**values, "h_lo": [1, 2]})


def test_slots_refuse_overlapping_constants():
    with pytest.raises(ValueError, match="distinct"):
        Slots.of({"X_A": 0, "X_B": 0}, "X_", 2, np.int64)


def test_the_numpy_twins_are_the_kernels():
    values = np.random.default_rng(5).integers(0, 2**63, 200, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    assert rng.mix_many(values).tolist() == [int(rng.mix(v)) for v in values]
    state = np.array([int(values[0])], np.uint64)
    expected = [int(rng.next_u64(state)) for _ in range(7)]
    assert rng.splitmix_words(values[:1], 7)[0].tolist() == expected


def test_programs_draw_through_rng(monkeypatch):
    from cogen.families.programs import functions

    source = inspect.getsource(functions)
    for copy in ("0x9E3779B97F4A7C15", "0xBF58476D1CE4E5B9", "0x94D049BB133111EB", "SeedSequence", "hashlib"):
        assert copy.lower() not in source.lower(), f"programs/functions.py re-implements {copy}: use cogen.rng"
    assert functions.stream_seed(7, "fp-block") == rng.stream_seed(7, "programs:fp-block")
    calls = []
    real = rng.splitmix_words
    monkeypatch.setattr(rng, "splitmix_words", lambda states, count: calls.append(len(states)) or real(states, count))
    batch = functions.sample("random", functions.stream_seed(7, "x"), np.arange(9))
    assert calls == [9] and len(batch) == 9
