"""The dataset card: pinned YAML header, a body derived from manifests and registry, preview images."""

from __future__ import annotations

import os
import re
import shutil
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from cogen.card.card import render_card, write_card
from cogen.folder.manifest import read_manifests
from cogen.palette import ARC_RGB
from cogen.pipeline import build

GOLDEN = Path(__file__).parent / "golden" / "hub_card_header.yaml"
# A fixed two-config build: one composition shift with out-of-domain splits, one in-domain only.
TINY = """\
setting: T
seed: 5
defaults:
  grid: {height: [6, 8], width: [6, 8]}
  objects: {count: [1, 2], where: {is_shape_fully_connected: true, rows: [1, 3], cols: [1, 3]}}
  sizes: {train: 30, validation: 4, test: 4, validation_ood: 3, test_ood: 3}
experiments:
  T-1:
    in_domain: {sequences: [[translate_up], [rot90]]}
    out_of_domain: {sequences: [[rot90, translate_up]]}
  T-2:
    in_domain: {sequences: [[change_shape_color]]}
    sizes: {train: 20, validation: 2, test: 2}
"""


def decode_png(path: Path) -> tuple[np.ndarray, list[tuple[int, int, int]], dict[str, str]]:
    """An independent reader for the 8-bit indexed PNGs cogen writes: (indices, palette, text)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    offset, chunks = 8, []
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset:offset + 4])
        kind, body = data[offset + 4:offset + 8], data[offset + 8:offset + 8 + length]
        assert zlib.crc32(kind + body) & 0xFFFFFFFF == struct.unpack(">I", data[offset + 8 + length:offset + 12 + length])[0]
        chunks.append((kind, body))
        offset += 12 + length
    width, height, depth, colour_type = struct.unpack(">IIBB", chunks[0][1][:10])
    assert chunks[0][0] == b"IHDR" and (depth, colour_type) == (8, 3)
    palette_bytes = next(body for kind, body in chunks if kind == b"PLTE")
    palette = [tuple(palette_bytes[i:i + 3]) for i in range(0, len(palette_bytes), 3)]
    raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    rows = np.frombuffer(raw, np.uint8).reshape(height, width + 1)
    assert (rows[:, 0] == 0).all()  # filter type 0 (none) on every scanline
    text = dict(body.decode("latin-1").split("\0", 1) for kind, body in chunks if kind == b"tEXt")
    return rows[:, 1:], palette, text


def normalised_header(out: Path) -> str:
    """The README's YAML header with byte sizes (which follow the Parquet writer's version) blanked."""
    text = (out / "README.md").read_text(encoding="utf-8")
    header = text.split("---\n", 2)[1]
    return re.sub(r"(num_bytes|download_size|dataset_size): \d+", r"\1: <bytes>", header)


@pytest.fixture(scope="module")
def tiny_build(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tiny")
    spec = folder / "tiny.yaml"
    spec.write_text(TINY)
    build(spec, folder / "out", workers=1)
    return folder / "out"


def test_card_header_matches_the_golden_file(tiny_build):
    """To regenerate after an intended change: COGEN_UPDATE_GOLDEN=1 python -m pytest tests/test_hub_card.py,
    then review the diff of tests/golden/hub_card_header.yaml before committing it."""
    header = normalised_header(tiny_build)
    if os.environ.get("COGEN_UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(header, encoding="utf-8")
    assert header == GOLDEN.read_text(encoding="utf-8")


def test_card_header_sizes_come_from_the_written_shards(tiny_build):
    manifests = read_manifests(tiny_build)
    header = yaml.safe_load((tiny_build / "README.md").read_text().split("---\n", 2)[1])
    assert [c["config_name"] for c in header["configs"]] == list(manifests)  # the build's order, default first
    for config in header["configs"]:  # every pattern finds exactly its split's shards on disk
        splits = manifests[config["config_name"]]["splits"]
        assert [entry["split"] for entry in config["data_files"]] == list(splits)
        for entry in config["data_files"]:
            found = sorted(path.relative_to(tiny_build).as_posix() for path in tiny_build.glob(entry["path"]))
            assert found == sorted(splits[entry["split"]]["files"]), entry
    assert [info["config_name"] for info in header["dataset_info"]] == list(manifests)
    assert [c.get("default", False) for c in header["configs"]] == [True, False]
    for info in header["dataset_info"]:
        files = [f for s in manifests[info["config_name"]]["splits"].values() for f in s["files"]]
        assert info["download_size"] == sum((tiny_build / f).stat().st_size for f in files)
        assert {s["name"]: s["num_examples"] for s in info["splits"]} == {
            s: v["rows"] for s, v in manifests[info["config_name"]]["splits"].items()}


def _section(text: str, title: str) -> str:
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_card_body_is_derived_from_manifests_registry_and_differences(small_build):
    from cogen.card.differences import family_differences
    from cogen.engine.registry import markdown_table

    text = (small_build / "README.md").read_text(encoding="utf-8")
    manifests = read_manifests(small_build)
    configs = _section(text, "Configs")
    for name, manifest in manifests.items():
        row = next(line for line in configs.splitlines() if line.startswith(f"| `{name}` |"))
        assert f"{manifest['splits']['train']['rows']:,}" in row
        assert manifest["fingerprint"] in _section(text, "Versions and fingerprints")
    assert "held out: 2 sequences (depth 2): `translate_up → rot90`, `rot90 → translate_up`" in configs
    assert "variant: the paper's text" in configs and "as-run-C1-1" in configs  # the variants are explained
    assert "same sequence: `translate_up`; grid 10–15 → 16–20" in configs
    assert markdown_table().strip() in text
    differences = _section(text, "Differences from the reference implementations")
    # the folder holds C1 and G2 (COGITAO only): every COGITAO difference of those studies, no other family's
    assert all((d.topic in differences) == (name == "cogitao" and (not d.studies or "G" in d.studies))
               for name, d in family_differences())
    assert manifests["C1-1"]["bank_sha256"] in text and "numpy " + manifests["C1-1"]["versions"]["numpy"] in text
    statistics = _section(text, "Generation statistics")
    assert re.search(r"\| `C1-1` \| \d+\.\d\d \|", statistics) and "out_of_grid" in statistics
    for title in ("{COGITAO}: A Procedural Object-Centric", "Taoudi-Benchekroun", "eprint        = {2509.05249}"):
        assert title in _section(text, "Citation")
    assert "Apache License 2.0" in _section(text, "Licence")
    assert 'load_dataset("<org>/<name>", "C1-1")' in text
    assert 'load_dataset("org/cogitao", "C1-1")' in render_card(small_build, repo_id="org/cogitao")


def test_build_draws_a_preview_per_config_and_the_card_shows_it(small_build):
    text = (small_build / "README.md").read_text(encoding="utf-8")
    for name in read_manifests(small_build):
        path = small_build / "previews" / f"{name}.png"
        assert f"![{name}](previews/{name}.png)" in text
        pixels, palette, stamp = decode_png(path)
        assert palette[:10] == list(ARC_RGB) and "cogen" in stamp
        assert pixels.shape[0] > 100 and pixels.shape[1] > 100


def test_a_preview_draws_the_first_rows_cell_by_cell_in_arc_colours(small_build, tmp_path):
    import pyarrow.parquet as pq

    from cogen.card import preview

    [drawn] = preview.render_config(small_build, ["C1-1"], "test_ood", 2, tmp_path, cell=5)
    assert drawn.path == tmp_path / "C1-1-test_ood.png" and drawn.labels == ("test_ood",)
    pixels, palette, _ = decode_png(drawn.path)
    first = pq.read_table(small_build / "data/C1-1/test_ood-00000-of-00001.parquet").slice(0, 1).to_pylist()[0]
    grid = np.array(first["input"])
    label = preview.label_strip("test_ood", pixels.shape[1])
    margin, step = preview._MARGIN, 5 + 1  # the band's label, then the first input at the left margin; 5-pixel cells
    top = margin + label.shape[0]
    assert (pixels[margin:top] == label).all()  # the band is labelled with its split
    for row in range(grid.shape[0]):
        for col in range(grid.shape[1]):
            y, x = top + 1 + row * step + 2, margin + 1 + col * step + 2
            assert palette[pixels[y, x]] == ARC_RGB[grid[row, col]], (row, col)
    assert palette[pixels[top, margin + 3]] == palette[preview._LINE]  # the grid's top border line


def test_preview_labels_spell_their_text_in_a_font_whose_glyphs_differ():
    from cogen.card import preview
    from cogen.card._font import GLYPHS, text_bitmap

    bitmaps = {char: glyph.tobytes() for char, glyph in GLYPHS.items()}
    assert len(set(bitmaps.values())) == len(bitmaps)  # every character reads as itself
    assert {c for c in "abcdefghijklmnopqrstuvwxyz0123456789_- "} <= {c.lower() for c in GLYPHS}
    strip = preview.label_strip("train study", 200)
    text = text_bitmap("train study", preview.LABEL_SCALE)
    drawn = strip[:text.shape[0], preview._MARGIN:preview._MARGIN + text.shape[1]] == preview._LINE
    assert (drawn == text).all() and (strip[:, preview._MARGIN + text.shape[1]:] == preview._PAGE).all()
    for index, char in enumerate("TRAIN"):  # read back character by character (3 columns + 1 gap each)
        cells = text[::preview.LABEL_SCALE, ::preview.LABEL_SCALE][:, index * 4:index * 4 + 3]
        assert next(c for c, g in GLYPHS.items() if (g == cells).all()) == char


def test_write_card_redraws_only_stale_previews_and_drops_those_of_removed_configs(small_build, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(small_build, out)
    previews = out / "previews"
    (previews / "mine.png").write_bytes((previews / "C1-1.png").read_bytes()[:8])  # not a card preview: kept
    before = {p.name: p.stat().st_mtime_ns for p in previews.glob("*.png")}
    write_card(out)
    assert {p.name: p.stat().st_mtime_ns for p in previews.glob("*.png")} == before
    (out / "manifests" / "G2-1.json").unlink()
    write_card(out)
    assert sorted(p.name for p in previews.glob("*.png")) == ["C1-1.png", "C1-2.png", "mine.png"]
    assert "G2-1" not in (out / "README.md").read_text(encoding="utf-8")


def test_render_command_draws_any_config_and_suggests_names(small_build, tmp_path):
    from cogen.cli import app
    from cogen.errors import UnknownNameError

    runner = CliRunner()
    result = runner.invoke(app, ["render", str(small_build), "--config", "C1-2", "--split", "test_ood", "-n", "8",
                                 "--out", str(tmp_path / "previews")])
    assert result.exit_code == 0, result.output
    pixels, _, _ = decode_png(tmp_path / "previews" / "C1-2-test_ood.png")
    assert pixels.size
    result = runner.invoke(app, ["render", str(small_build), "--config", "C1-9"])
    assert isinstance(result.exception, UnknownNameError) and "C1-1" in str(result.exception)
