"""The shipped bank: size, boxes, distinctness, colours, table consistency and healthy pools."""

from __future__ import annotations

import numpy as np
import pytest
from test_bank_properties import oracle

from cogen.bank import POOLS, PROPERTIES, load_bank, pool_sizes
from cogen.bank._recipes import COLOR_PATTERNS, CONNECTIVITIES, FOOTPRINTS, SYMMETRIES


@pytest.fixture(scope="module")
def bank():
    return load_bank()


def test_size_and_packing(bank):
    n = len(bank)
    assert 20_000 <= n <= 30_000
    assert bank.pixels.dtype == np.int8 and bank.offsets.dtype == np.int64
    assert bank.offsets.shape == (n + 1,) and bank.shapes.shape == (n, 2)
    assert bank.offsets[0] == 0 and bank.offsets[-1] == len(bank.pixels)
    assert (np.diff(bank.offsets) == bank.shapes[:, 0] * bank.shapes[:, 1]).all()


def test_boxes_are_tight_non_empty_and_at_most_15x15(bank):
    assert bank.shapes.min() >= 1 and bank.shapes.max() <= 15
    for i in range(len(bank)):
        mask = bank.object(i) != 0
        assert mask[0].any() and mask[-1].any() and mask[:, 0].any() and mask[:, -1].any(), i


def test_colours_are_1_to_9_with_0_as_background(bank):
    assert bank.pixels.min() == 0 and bank.pixels.max() <= 9 and bank.pixels.min() >= 0
    used = np.unique(bank.pixels)
    assert set(used.tolist()) == set(range(10))


def test_no_two_objects_are_equal(bank):
    keys = {(int(r), int(c), bank.object(i).tobytes()) for i, (r, c) in enumerate(bank.shapes)}
    assert len(keys) == len(bank)


def test_objects_are_read_only(bank):
    with pytest.raises(ValueError):
        bank.object(0)[0, 0] = 1
    with pytest.raises(ValueError):
        bank.column("rows")[0] = 3


@pytest.mark.slow
def test_table_matches_the_oracle_on_a_sample(bank):
    ids = np.linspace(0, len(bank) - 1, 600).astype(int)
    for i in ids:
        truth = oracle(bank.object(i))
        assert {name: bool(bank.column(name)[i]) for name in truth} == truth, i


def test_numeric_columns(bank):
    assert (bank.column("rows") == bank.shapes[:, 0]).all()
    assert (bank.column("cols") == bank.shapes[:, 1]).all()
    nonzero = np.add.reduceat((bank.pixels != 0).astype(np.int64), bank.offsets[:-1])
    assert (bank.column("pixels") == nonzero).all()
    assert bank.column("n_colors").min() == 1 and bank.column("n_colors").max() <= 9


def test_property_names_and_metadata(bank):
    assert bank.property_names == tuple(PROPERTIES)
    assert set(bank.column("family")) == {"footprint", "grown"}
    assert set(bank.column("footprint")) == set(FOOTPRINTS) | {"n/a"}
    assert set(bank.column("connectivity")) == set(CONNECTIVITIES) | {"n/a"}
    assert set(bank.column("symmetry")) == set(SYMMETRIES) | {"n/a"}
    assert set(bank.column("color_pattern")) == set(COLOR_PATTERNS)
    grown = bank.column("family") == "grown"
    assert (bank.column("footprint")[grown] == "n/a").all()
    assert not bank.column("outline")[grown].any() and bank.column("outline").any()


def test_families_keep_their_promises(bank):
    """Connected growth gives connected shapes; symmetric growth gives symmetric masks."""
    connected = bank.column("is_shape_fully_connected")
    for kind in ("4-connected", "8-connected"):
        assert connected[bank.column("connectivity") == kind].all()
    assert not connected[bank.column("connectivity") == "distance"].all()
    symmetry = bank.column("symmetry")
    assert bank.column("is_shape_vertically_symmetric")[symmetry == "vertical"].all()
    assert bank.column("is_shape_horizontally_symmetric")[symmetry == "horizontal"].all()
    assert bank.column("is_shape_point_symmetric")[symmetry == "point"].all()
    assert not bank.column("is_shape_asymmetric")[np.isin(symmetry, ["horizontal", "vertical", "point"])].any()
    for kind, prop in (("diagonal", "is_shape_diagonally_symmetric"),
                       ("antidiagonal", "is_shape_antidiagonally_symmetric")):
        uniform = (symmetry == kind) & (bank.column("color_pattern") == "uniform")
        assert bank.column(prop)[uniform].all()
    solid_rectangles = np.isin(bank.column("footprint"), ["rectangle", "square"]) & ~bank.column("outline")
    assert bank.column("is_shape_rectangular")[solid_rectangles].all()
    assert bank.column("is_shape_hollow")[bank.column("outline") & (bank.column("rows") >= 3)
                                          & (bank.column("cols") >= 3)].all()


def test_a_sensible_spread(bank):
    for name in ("is_shape_symmetric", "is_shape_hollow", "is_shape_evenly_colored", "is_shape_fully_connected"):
        share = bank.column(name).mean()
        assert 0.1 < share < 0.95, (name, share)
    assert len(set(bank.column("rows").tolist())) == 15
    assert (bank.column("n_colors") >= 4).sum() > 500


@pytest.mark.parametrize("name", list(POOLS))
def test_pools_are_of_the_order_of_the_reference(bank, name):
    size = pool_sizes(bank)[name]
    reference = POOLS[name].reference
    assert reference / 2 <= size <= reference * 3, (name, size, reference)


def test_fill_pool_is_healthy(bank):
    ids = bank.select(POOLS["fill"].where)
    assert len(ids) >= 150
    assert bank.column("is_shape_hollow")[ids].all() and (bank.column("n_colors")[ids] == 1).all()
