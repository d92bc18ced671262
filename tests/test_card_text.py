"""The card's words say what the folder holds (issue 28, items 6 and 8): counts agree with their nouns, a
study paragraph names only the studies present, the build table explains ``accepted``, and every
preview pair is captioned with its transformation sequence (or its episode role)."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from typer.testing import CliRunner

from cogen.card.preview import (
    caption_columns,
    caption_lines,
    caption_strip,
    draw_bands,
    preview_splits,
    read_bands,
)
from cogen.families.cogitao.card import measures, study_kind
from cogen.folder import read_manifests, read_split


def _section(text: str, title: str) -> str:
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


@pytest.mark.parametrize("kind, names", [("C", ("C1", "C2", "C3")), ("G", ("G1", "G2", "G3", "G4", "G5"))])
def test_a_study_paragraph_names_exactly_the_studies_the_folder_holds(kind, names):
    for count in range(1, len(names) + 1):
        for held in itertools.combinations(names, count):
            settings = [f"{name}-as-run" if i % 2 else name for i, name in enumerate(held)]
            assert {study_kind(setting) for setting in settings} == {kind}
            paragraph = measures(kind, settings)
            assert set(re.findall(r"\b[CG]\d\b", paragraph)) == set(held), paragraph


def test_a_whole_paper_set_keeps_the_paragraphs_it_had():
    assert measures("C", ["C1", "C2", "C3"]).endswith(
        "the out-of-domain splits ask for held-out compositions (C1, C2) or deeper ones (C3). Nothing held out "
        "is ever trained on.")
    assert measures("G", ["G1", "G2", "G3", "G4", "G5"]).endswith(
        "more objects (G1), larger grids (G2), larger objects (G3), more complex objects (G4), or all of these "
        "at once (G5).")


def test_the_card_of_c1_and_g2_describes_c1_and_g2_only(small_build):
    card = (small_build / "README.md").read_text(encoding="utf-8")
    measured = _section(card, "What the benchmark measures")
    assert set(re.findall(r"\b[CG]\d\b", measured)) == {"C1", "G2"}
    assert "held-out compositions (C1)" in measured and "larger grids (G2)." in measured
    assert "**3 configs** from **2 studies**" in card


def test_counts_agree_with_their_nouns(tmp_path):
    from cogen.card.body import _count

    assert [_count(n, "study", "studies") for n in (0, 1, 2, 1234)] == ["0 studies", "1 study", "2 studies",
                                                                         "1,234 studies"]
    assert _count(1, "config") == "1 config"


def test_the_build_table_explains_its_accepted_column(tmp_path):
    from cogen.cli import app
    from cogen.cli.build import ACCEPTED_NOTE

    spec = tmp_path / "tiny.yaml"
    spec.write_text("setting: F\nseed: 2\ndefaults:\n  grid: {height: [6, 8], width: [6, 8]}\n"
                    "  objects: {count: [1, 2], where: {rows: [1, 3], cols: [1, 3]}}\n"
                    "  sizes: {train: 10, validation: 2, test: 2}\n"
                    "experiments:\n  F-1:\n    in_domain: {sequences: [[translate_up]]}\n")
    result = CliRunner().invoke(app, ["build", "--config", str(spec), "--out", str(tmp_path / "out"), "--workers", "1",
                                      "--no-progress"])
    assert result.exit_code == 0, result.output
    table, note = result.output.split("accepted", 1)[0], " ".join(result.output.split())
    assert "accepted" in result.output and table and " ".join(ACCEPTED_NOTE.split()) in note
    assert "share of sampling attempts kept" in ACCEPTED_NOTE


def _found(page: np.ndarray, pattern: np.ndarray) -> int:
    """How many times the dark pixels of ``pattern`` (caption palette indices) appear in ``page``, exactly."""
    mask, want = page == 11, pattern == 11
    if want.shape[0] > mask.shape[0] or want.shape[1] > mask.shape[1]:
        return 0
    windows = np.lib.stride_tricks.sliding_window_view(mask, want.shape)
    return int((windows == want).all(axis=(2, 3)).sum())


def test_every_preview_pair_is_drawn_with_its_transformation_sequence_under_it(small_build):
    manifest = read_manifests(small_build)["C1-1"]
    assert caption_columns(manifest) == {"": "transformations"}
    for split in preview_splits(manifest):
        [band] = read_bands(small_build, manifest, split, 4)
        sequences = read_split(small_build, "C1-1", split).table.column("transformations").to_pylist()[:4]
        assert band.captions == tuple(tuple(("> " if i else "") + name for i, name in enumerate(s)) for s in sequences)
        page = draw_bands([band])
        for lines in band.captions:
            assert _found(page, caption_strip(lines)) >= 1, lines  # drawn, pixel for pixel
        if len(set(band.captions)) > 1:  # two orders of one pair look different
            assert not np.array_equal(caption_strip(band.captions[0]), caption_strip(band.captions[-1]))


def test_a_caption_is_a_sequence_one_step_a_line_or_a_role():
    assert caption_lines(["rot90", "translate_up"]) == ("rot90", "> translate_up")
    assert caption_lines("shape+color") == ("shape+color",) and caption_lines(None) == ()
    one, two = caption_strip(("rot90",)), caption_strip(("rot90", "> translate_up"))
    assert two.shape[0] > one.shape[0] and (two[: one.shape[0], : one.shape[1]] == one).all()


def test_a_card_shows_the_differences_of_the_families_and_study_kinds_it_holds():
    from cogen.card.differences import family_differences

    every = family_differences()
    assert {name for name, _ in every} == {"cogitao", "carc"}
    compgen = family_differences({"cogitao": {"C"}})
    assert compgen == [(name, d) for name, d in every if name == "cogitao" and (not d.studies or "C" in d.studies)]
    envgen = family_differences({"cogitao": {"G"}})
    assert len(envgen) > len(compgen) and all(name == "cogitao" for name, _ in envgen)
    assert family_differences({"programs": {""}}) == []
