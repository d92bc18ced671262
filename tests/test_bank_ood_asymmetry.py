"""The "asymmetric" out-of-domain objects of G4 and G5 really are: on every out-of-domain row of a
small build, no object is unchanged by mirror_horizontal, mirror_vertical or a 180-degree turn,
and the two mirrors never give the same shape (checked with the NumPy oracle, not the bank's
own property table)."""

from __future__ import annotations

import numpy as np
import oracle
import pyarrow.parquet as pq
import pytest

from cogen.bank import load_bank
from cogen.pipeline import build

OOD_SPLITS = ("validation_ood", "test_ood")


@pytest.fixture(scope="module")
def ood_rows(tmp_path_factory):
    """(config, object ids) of every out-of-domain row of every G4 and G5 experiment."""
    out = tmp_path_factory.mktemp("g4-g5")
    rows = []
    for setting in ("g4", "g5"):
        report = build(setting, out / setting, scale=0.02, workers=1)  # a folder holds one build
        for config in report.configs:
            for split in OOD_SPLITS:
                for path in sorted((out / setting / "data" / config.config).glob(f"{split}-*.parquet")):
                    rows += [(config.config, ids) for ids in pq.read_table(path)["object_ids"].to_pylist()]
    return rows


def _image(name: str, grid: np.ndarray) -> np.ndarray:
    return oracle.transform(name, 0, 0, grid)[2]


def _half_turn(grid: np.ndarray) -> np.ndarray:
    return _image("rot90", _image("rot90", grid))


@pytest.mark.slow
def test_every_setting_and_split_was_checked(ood_rows):
    configs = {config for config, _ in ood_rows}
    assert configs == {f"G{s}-{k}" for s in (4, 5) for k in range(1, 6)}
    assert len(ood_rows) == 10 * 2 * 20


@pytest.mark.slow
def test_no_out_of_domain_object_is_kept_by_a_mirror_or_a_half_turn(ood_rows):
    bank = load_bank()
    checked = set()
    for config, ids in ood_rows:
        assert ids, config
        for i in ids:
            if i in checked:
                continue
            checked.add(i)
            grid = np.asarray(bank.object(i), np.int64)
            images = {"mirror_horizontal": _image("mirror_horizontal", grid),
                      "mirror_vertical": _image("mirror_vertical", grid), "half turn": _half_turn(grid)}
            for name, image in images.items():
                assert not np.array_equal(image, grid), f"{config}: object {i} is unchanged by {name}"
            assert not np.array_equal(images["mirror_horizontal"] != 0, images["mirror_vertical"] != 0), \
                f"{config}: both mirrors give object {i} the same shape"
    assert len(checked) > 300


def test_the_reference_filter_would_have_let_half_turn_shapes_through():
    """Why the specs use is_shape_asymmetric: is_shape_not_symmetric alone admits shapes that a
    half turn keeps (so this test fails if the bank stops holding them, and the filter is moot)."""
    bank = load_bank()
    where = {"is_shape_fully_connected": True, "is_shape_not_symmetric": True, "is_shape_evenly_colored": False,
             "rows": (1, 5), "cols": (1, 5)}
    kept = [i for i in bank.select(where) if np.array_equal(_half_turn(bank.object(int(i)) != 0),
                                                           bank.object(int(i)) != 0)]
    assert kept
    assert not bank.column("is_shape_asymmetric")[kept].any()
