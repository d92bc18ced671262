"""Tiny datasets and settings shared by the baselines tests (tests/test_baselines*.py).

Every dataset is a real ``cogen build`` of a tiny spec, built once per test session.
"""

from __future__ import annotations

from pathlib import Path

import pytest

#: EnvGen: one transformation per experiment on 5x5 grids (two objects out of domain), 256 training samples.
ENVGEN = """\
setting: T
seed: 3
shift: environment
defaults:
  grid: {height: [5, 5], width: [5, 5]}
  objects: {count: [1, 1], where: {is_shape_fully_connected: true, rows: [1, 3], cols: [1, 3]}}
  sizes: {train: 256, validation: 16, test: 16, validation_ood: 16, test_ood: 16}
experiments:
  T-1:
    in_domain: {sequences: [[translate_up]]}
    out_of_domain: {objects: {count: [2, 2]}, sequences: [[translate_up]]}
  T-2:
    in_domain: {sequences: [[change_shape_color]]}
    out_of_domain: {objects: {count: [2, 2]}, sequences: [[change_shape_color]]}
"""

#: CompGen: held-out compositions, task codes; 6x6 grids.
COMPGEN = """\
setting: E
seed: 5
defaults:
  grid: {height: [5, 6], width: [5, 6]}
  objects: {count: [1, 2], where: {is_shape_fully_connected: true, rows: [1, 3], cols: [1, 3]}}
  sizes: {train: 48, validation: 8, test: 8, validation_ood: 8, test_ood: 8}
experiments:
  E-1:
    in_domain: {sequences: [[translate_up], [rot90], [mirror_horizontal], [translate_up, mirror_horizontal]]}
    out_of_domain: {sequences: [[translate_up, rot90], [rot90, translate_up]]}
  E-2:
    in_domain: {sequences: [[translate_up], [mirror_vertical], [mirror_vertical, translate_up]]}
    out_of_domain: {sequences: [[translate_up, mirror_vertical]]}
"""

CARC_CONFIG = "carc-3shot-1860"  # 3 study pairs: 182 encoder tokens, cheap on a CPU
_BUILT: dict[str, Path] = {}


def built(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """The build folder of ``envgen``, ``compgen`` or ``carc`` (built on first use, then shared)."""
    if name not in _BUILT:
        from cogen.pipeline import build

        folder = tmp_path_factory.mktemp(f"baselines-{name}")
        if name == "carc":
            build("carc", folder / "out", scale=0.001, workers=1, only=[CARC_CONFIG])
        else:
            spec = folder / f"{name}.yaml"
            spec.write_text(ENVGEN if name == "envgen" else COMPGEN)
            build(spec, folder / "out", workers=1)
        _BUILT[name] = folder / "out"
    return _BUILT[name]


@pytest.fixture(scope="module", name="envgen")
def envgen_build(tmp_path_factory) -> Path:
    """The EnvGen build (configs T-1, T-2)."""
    return built(tmp_path_factory, "envgen")


@pytest.fixture(scope="module", name="compgen")
def compgen_build(tmp_path_factory) -> Path:
    """The CompGen build (configs E-1, E-2)."""
    return built(tmp_path_factory, "compgen")


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny models gain nothing from intra-op threads, and on a busy machine two threads can be 20x slower."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
