"""COGITAO-RGB (``render:``): images that ``datasets`` decodes, decoded back to the exact grids."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from cogen.errors import DataError, SpecError
from cogen.pipeline import build
from cogen.render import RenderSettings, encode_grids, render_grid, to_grid
from cogen.specs import parse_spec_text

SPEC = """\
setting: R
seed: 9
{render}
defaults:
  grid: {{height: [5, 12], width: [6, 12]}}
  objects: {{count: [1, 2], where: {{is_shape_fully_connected: true, rows: [1, 3], cols: [1, 3]}}}}
  sizes: {{train: 60, validation: 10, test: 10}}
experiments:
  R-1:
    in_domain: {{sequences: [[translate_up], [rot90], [change_shape_color, mirror_vertical]]}}
"""


def _spec(tmp: Path, render: str) -> Path:
    path = tmp / f"r{abs(hash(render))}.yaml"
    path.write_text(SPEC.format(render=render))
    return path


def _digests(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.glob("data/**/*.parquet"))}


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    root = tmp_path_factory.mktemp("rgb")
    build(_spec(root, "render: {size: 64}"), root / "png", workers=1, rows_per_shard=30)
    build(_spec(root, "render: {size: 48, background: black, format: jpeg}"), root / "jpeg", workers=1)
    build(_spec(root, ""), root / "plain", workers=1, rows_per_shard=30)
    return root


@pytest.mark.parametrize("name,settings", [("png", RenderSettings(size=64)),
                                           ("jpeg", RenderSettings(size=48, background="black", format="jpeg"))])
def test_load_dataset_gives_images_that_decode_to_the_exact_grids(builds, name, settings):
    import datasets
    from PIL import Image

    loaded = datasets.load_dataset(str(builds / name), "R-1")
    rows = 0
    for split in loaded.values():
        assert isinstance(split.features["input_image"], datasets.Image)
        for row in split:
            for column in ("input", "output"):
                image, grid = row[f"{column}_image"], np.array(row[column], np.int8)
                assert isinstance(image, Image.Image) and image.size == (settings.size, settings.size)
                assert np.array_equal(to_grid(image, grid.shape, settings), grid), row["id"]
            rows += 1
    assert rows == 80


def test_images_change_no_byte_of_the_grid_columns(builds):
    for path in sorted((builds / "png").glob("data/**/*.parquet")):
        table = pq.read_table(path)
        plain = pq.read_table(builds / "plain" / path.relative_to(builds / "png"))
        assert table.drop(["input_image", "output_image"]).equals(plain)
        assert table.column("input_image").combine_chunks().field("path")[0].as_py().endswith("_input.png")


@pytest.mark.slow
def test_one_and_two_workers_write_identical_bytes(builds, tmp_path, pooled):
    build(_spec(tmp_path, "render: {size: 64}"), tmp_path / "two", workers=2, rows_per_shard=30)
    assert _digests(tmp_path / "two") == _digests(builds / "png")


def test_rendering_laws():
    rng = np.random.default_rng(4)
    white, black = RenderSettings(size=40), RenderSettings(size=40, background="black")
    grid = rng.integers(0, 10, (13, 40)).astype(np.int8)
    image = render_grid(grid, white)
    assert image.shape == (40, 40, 3) and image.dtype == np.uint8
    assert np.all(render_grid(np.zeros((3, 3), np.int8), white) == 255)
    assert np.all(render_grid(np.zeros((3, 3), np.int8), black) == 0)
    assert np.array_equal(to_grid(image, grid.shape, white), grid)  # 40 px over 13 rows: cells of 3 or 4 px
    blurred = RenderSettings(size=40, blur=1.5)
    assert not np.array_equal(render_grid(grid, blurred), image)
    grids = rng.integers(0, 10, (5, 9, 9)).astype(np.int8)
    sizes = np.array([[9, 9], [4, 7], [9, 9], [1, 1], [4, 7]])
    from PIL import Image

    for grid_, size, data in zip(grids, sizes, encode_grids(grids, sizes, white), strict=True):
        shown = to_grid(Image.open(io.BytesIO(data)), tuple(size), white)
        assert np.array_equal(shown, grid_[: size[0], : size[1]])


@pytest.mark.parametrize("fmt", ["png", "jpeg"])
def test_batched_encoding_equals_encoding_each_rendering(fmt):
    """``encode_grids`` keeps crisp images as palette indices until Pillow encodes them: what it
    writes must be what encoding each grid's own RGB rendering gives (JPEG: the same bytes; PNG:
    the same pixels, stored as a palette image)."""
    from PIL import Image

    from cogen.render import encode

    settings = RenderSettings(size=30, background="black", format=fmt)  # 30 px over 17, 24 ... cells: uneven cells
    rng = np.random.default_rng(11)
    grids = rng.integers(0, 10, (9, 30, 30)).astype(np.int8)
    sizes = np.array([[8, 8], [3, 5], [8, 8], [1, 1], [3, 5], [7, 2], [17, 20], [24, 5], [3, 16]])
    for grid, size, data in zip(grids, sizes, encode_grids(grids, sizes, settings), strict=True):
        image = render_grid(grid[: size[0], : size[1]], settings)
        if fmt == "jpeg":
            assert data == encode(image, settings)
        else:
            assert np.array_equal(np.asarray(Image.open(io.BytesIO(data)).convert("RGB")), image)


def test_fewer_than_one_pixel_per_cell_is_refused():
    with pytest.raises(DataError, match="fewer than one pixel per cell"):
        render_grid(np.zeros((30, 10), np.int8), RenderSettings(size=20))
    with pytest.raises(SpecError) as error:
        parse_spec_text(SPEC.format(render="render: {size: 10}"), "r.yaml")
    assert "fewer than one pixel per cell" in str(error.value) and "r.yaml" in str(error.value)
    assert "render.size >= 12" in str(error.value)


@pytest.mark.parametrize("render,words", [
    ("render: {palette: rainbow}", ["unknown value 'rainbow'", "arc"]),
    ("render: {background: grey}", ["unknown value 'grey'", "white", "black"]),
    ("render: {sise: 64}", ["unknown key 'sise'", "size"]),
    ("render: {blur: -1}", ["render.blur must be a number"]),
    ("render: {format: gif}", ["unknown value 'gif'", "png"]),
])
def test_bad_render_settings_are_named(render, words):
    with pytest.raises(SpecError) as error:
        parse_spec_text(SPEC.format(render=render), "r.yaml")
    for word in words:
        assert word in str(error.value)
    assert "r.yaml" in str(error.value)


def test_render_is_read_per_spec_and_per_experiment():
    text = SPEC.format(render="render: {size: 32}").replace(
        "  R-1:\n", "  R-0:\n    render: false\n    in_domain: {sequences: [[rot90]]}\n  R-1:\n    render: {blur: 1}\n")
    setting = parse_spec_text(text)
    assert setting.experiments[0].render is None
    assert setting.experiments[1].render == RenderSettings(size=32, blur=1.0)


def test_verify_passes_on_an_rgb_build(builds):
    from cogen.pipeline.verify import failed, verify

    assert not failed(verify(builds / "png", full=True))


def test_previews_show_the_stored_images(builds, tmp_path):
    from PIL import Image

    from cogen.card.preview import render_config

    previews = render_config(builds / "png", ["R-1"], "test", 2, tmp_path)
    assert previews[0].labels == ("test", "test images")
    page = np.asarray(Image.open(previews[0].path).convert("RGB"))
    first = pq.read_table(sorted((builds / "png").glob("data/R-1/test-*.parquet"))[0]).slice(0, 1).to_pylist()[0]
    stored = np.asarray(Image.open(io.BytesIO(first["input_image"]["bytes"])).convert("RGB"))
    found = [(r, c) for r in range(page.shape[0] - 63) for c in range(0, 40)
             if np.array_equal(page[r: r + 64, c: c + 64], stored)]
    assert found, "the first stored input image appears pixel for pixel"
