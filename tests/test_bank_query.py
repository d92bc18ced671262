"""Queries: the where-syntax, selection against brute force, packing, unknown names."""

from __future__ import annotations

import numpy as np
import pytest

from cogen.bank import load_bank, parse_where
from cogen.errors import BankError, SpecError, UnknownNameError


@pytest.fixture(scope="module")
def bank():
    return load_bank()


@pytest.mark.parametrize("text, expected", [
    ("is_shape_fully_connected, rows<6, cols<=5, !is_shape_hollow",
     {"is_shape_fully_connected": True, "rows": (None, 5), "cols": (None, 5), "is_shape_hollow": False}),
    ("not is_shape_line and pixels>=3", {"is_shape_line": False, "pixels": (3, None)}),
    ("rows>2, rows<6", {"rows": (3, 5)}),
    ("rows=2..4, n_colors=1, family=grown", {"rows": (2, 4), "n_colors": (1, 1), "family": "grown"}),
    ("is_shape_hollow=false, outline=True", {"is_shape_hollow": False, "outline": True}),
])
def test_parse_where(text, expected):
    assert parse_where(text) == expected


@pytest.mark.parametrize("text", ["", "rows<<6", "!rows<6", "rows<six", "is_shape_hollow, !is_shape_hollow", "a b"])
def test_parse_where_errors(text):
    with pytest.raises(SpecError):
        parse_where(text)


def test_select_matches_brute_force(bank):
    where = {"is_shape_fully_connected": True, "rows": (1, 5), "cols": (None, 5), "is_shape_hollow": False,
             "family": "grown"}
    ids = bank.select(where)
    expected = [i for i in range(len(bank))
                if bank.column("is_shape_fully_connected")[i] and 1 <= bank.shapes[i][0] <= 5
                and bank.shapes[i][1] <= 5 and not bank.column("is_shape_hollow")[i]
                and bank.column("family")[i] == "grown"]
    assert ids.dtype == np.int32 and ids.tolist() == expected
    assert len(bank.select({})) == len(bank)
    assert bank.select(parse_where("is_shape_fully_connected, rows<=5, cols<6, !is_shape_hollow, family=grown")).tolist() \
        == bank.select({**where, "cols": (1, 5)}).tolist()


def test_select_single_number_is_equality(bank):
    ids = bank.select({"rows": 3})
    assert (bank.shapes[ids, 0] == 3).all() and len(ids) == (bank.shapes[:, 0] == 3).sum()


def test_unknown_names_list_close_matches(bank):
    with pytest.raises(UnknownNameError) as caught:
        bank.select({"is_shape_holow": True})
    assert "is_shape_hollow" in caught.value.suggestions
    with pytest.raises(UnknownNameError):
        bank.column("colums")
    with pytest.raises(UnknownNameError) as caught:
        bank.select({"family": "grwon"})
    assert "grown" in str(caught.value)


@pytest.mark.parametrize("where", [{"rows": True}, {"is_shape_hollow": (1, 2)}, {"family": 3}, {"rows": (1, 2, 3)}])
def test_type_mismatches_are_spec_errors(bank, where):
    with pytest.raises(SpecError):
        bank.select(where)


def test_pack_round_trips(bank):
    ids = np.array([5, 0, len(bank) - 1, 5, 1234])
    pixels, offsets, shapes = bank.pack(ids)
    assert offsets[0] == 0 and offsets[-1] == len(pixels) and offsets.dtype == np.int64
    for k, i in enumerate(ids):
        got = pixels[offsets[k]:offsets[k + 1]].reshape(shapes[k])
        assert np.array_equal(got, bank.object(int(i)))
    empty = bank.pack([])
    assert len(empty[0]) == 0 and empty[1].tolist() == [0] and empty[2].shape == (0, 2)


def test_out_of_range_ids(bank):
    with pytest.raises(BankError):
        bank.object(len(bank))
    with pytest.raises(BankError):
        bank.pack([-1])
