"""The registry: names, frozen token ids, aliases, lookups, examples, tables and the CLI."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys

import numpy as np
import pytest

from cogen.engine import (
    FAMILIES,
    IDENTITY_TOKEN,
    TRANSFORMS,
    PlacedObject,
    _kernels,
    apply,
    from_token,
    markdown_table,
    resolve,
    resolve_sequence,
    sequence_tokens,
)
from cogen.errors import SpecError, UnknownNameError

# Frozen forever: task codes of published datasets use these ids (reference table order).
TOKENS = {
    "translate_up": 1, "translate_down": 2, "translate_left": 3, "translate_right": 4,
    "rot90": 5, "mirror_horizontal": 6, "mirror_vertical": 7,
    "crop_top_side": 8, "crop_bottom_side": 9, "crop_left_side": 10, "crop_right_side": 11,
    "crop_contours": 12, "change_shape_color": 13, "fill_holes_same_color": 14,
    "fill_holes_different_color": 15, "empty_inside_pixels": 16,
    "extend_contours_same_color": 17, "extend_contours_different_color": 18,
    "pad_top": 19, "pad_bottom": 20, "pad_left": 21, "pad_right": 22, "pad_shape": 23,
    "double_right": 24, "double_left": 25, "double_down": 26, "double_up": 27,
    "quadruple_shape": 28,
}


@pytest.mark.slow
def test_reading_the_registry_does_not_load_numba():
    code = "import sys, cogen.engine; cogen.engine.resolve('rot90'); print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_names_and_tokens_are_frozen():
    assert IDENTITY_TOKEN == 0
    assert {name: t.token for name, t in TRANSFORMS.items()} == TOKENS
    assert list(TRANSFORMS) == list(TOKENS)


def test_registry_is_read_only_and_records_are_frozen():
    with pytest.raises(TypeError):
        TRANSFORMS["rot90"] = TRANSFORMS["mirror_vertical"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        TRANSFORMS["rot90"].token = 99


def test_families_cover_the_paper_counts():
    counts = {family: sum(t.family == family for t in TRANSFORMS.values()) for family in FAMILIES}
    assert counts == {"translate": 4, "rotate": 1, "mirror": 2, "crop": 5, "color": 1, "fill": 2,
                      "empty": 1, "extend": 2, "pad": 5, "duplicate": 5}


@pytest.mark.parametrize("name", TRANSFORMS)
def test_every_name_resolves_and_round_trips_through_its_token(name):
    record = resolve(name)
    assert record.name == name and resolve(record) is record
    assert from_token(record.token) is record
    assert record.description and "\n" not in record.description


@pytest.mark.parametrize("alias, name", [("rotate_90", "rot90"), ("rotate90", "rot90"),
                                         ("rot_90", "rot90"),
                                         ("change_object_color", "change_shape_color"),
                                         ("change_color", "change_shape_color"),
                                         ("extend_contours_same", "extend_contours_same_color")])
def test_paper_aliases_resolve(alias, name):
    assert resolve(alias) is TRANSFORMS[name]


def test_aliases_never_shadow_names_or_each_other():
    aliases = [a for t in TRANSFORMS.values() for a in t.aliases]
    assert len(aliases) == len(set(aliases))
    assert not set(aliases) & set(TRANSFORMS)


def test_unknown_name_fails_with_close_matches():
    with pytest.raises(UnknownNameError) as caught:
        resolve("rotate_91")
    assert isinstance(caught.value, SpecError) and isinstance(caught.value, KeyError)
    assert "rotate_90" in caught.value.suggestions
    assert "rotate_91" in str(caught.value) and "did you mean" in str(caught.value)
    with pytest.raises(UnknownNameError):
        from_token(IDENTITY_TOKEN)


def test_resolve_sequence_and_tokens():
    assert [t.name for t in resolve_sequence(["rotate90", "translate_up"])] == ["rot90", "translate_up"]
    tokens = sequence_tokens(["translate_up", "rot90"])
    assert tokens.dtype == np.int64 and tokens.flags.c_contiguous and tokens.tolist() == [1, 5]
    with pytest.raises(TypeError):
        resolve_sequence("rot90")


def test_kernel_constants_match_the_registry():
    names = {"UP": "translate_up", "ROT90": "rot90", "CROP_CONTOURS": "crop_contours",
             "PAD_RING": "pad_shape", "QUADRUPLE": "quadruple_shape", "EMPTY": "empty_inside_pixels"}
    for constant, name in names.items():
        assert getattr(_kernels, constant) == TRANSFORMS[name].token
    assert _kernels.N_TOKENS == len(TRANSFORMS) + 1
    assert _kernels.STATUS_NAMES == (None, "cannot_apply", "out_of_grid", "overlap")


@pytest.mark.parametrize("name", TRANSFORMS)
def test_examples_match_the_kernels(name):
    example = TRANSFORMS[name].example
    before, after = example.arrays()
    result = apply(name, PlacedObject(3, 4, before))
    assert (result.row - 3, result.col - 4) == example.shift
    assert np.array_equal(result.grid, after) and result.grid.dtype == np.int8


@pytest.mark.parametrize("name", TRANSFORMS)
def test_preconditions_use_reference_property_names(name):
    for prop, required in TRANSFORMS[name].preconditions:
        assert re.fullmatch(r"is_shape_[a-z0-9_]+", prop) and isinstance(required, bool)


def test_preconditions_name_bank_properties():
    from cogen.bank import load_bank

    known = set(load_bank().property_names)  # the bank ships with the repository: a missing one is a failure
    assert known, "the object bank names no properties"
    for t in TRANSFORMS.values():
        assert {prop for prop, _ in t.preconditions} <= known, t.name


def test_markdown_table_lists_every_transformation_once():
    table = markdown_table()
    rows = [line for line in table.splitlines() if line.startswith("| ") and "`" in line]
    assert len(rows) == len(TRANSFORMS)
    for name, t in TRANSFORMS.items():
        assert f"| {t.token} | `{name}` |" in table


@pytest.mark.parametrize("name", TRANSFORMS)
def test_every_record_has_a_docstring_with_its_example(name):
    t = TRANSFORMS[name]
    assert t.__doc__.startswith(f"{name}: {t.description}") and "->" in t.__doc__
    assert str(t.example.shift) in t.__doc__


def test_cli_transforms_prints_the_table():
    from typer.testing import CliRunner

    from cogen.cli import app

    result = CliRunner().invoke(app, ["transforms"])
    assert result.exit_code == 0, result.output
    for name in TRANSFORMS:
        assert name in result.output
    assert "is_shape_less_than_4_rows" in result.output
    markdown = CliRunner().invoke(app, ["transforms", "--markdown"])
    assert markdown.exit_code == 0 and markdown.output == markdown_table()
    examples = CliRunner().invoke(app, ["transforms", "--examples"])
    assert examples.exit_code == 0 and TRANSFORMS["pad_shape"].__doc__ in examples.output
