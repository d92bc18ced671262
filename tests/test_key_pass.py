"""COGITAO's key pass: a shard that repeats its own keys is sampled once, not twice.

The key pass saves such a shard's rows in the build's scratch folder; the second pass reads them
back and generates only the samples dedup regenerated. A sample is a pure function of (spec,
split, index, retry), so the files must be the bytes of a build that generates every row again
(the oracle), whatever happens to the saved files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from folder_digests import digests

from cogen.families.cogitao import build as cogitao_build
from cogen.pipeline import build

#: A small space: keys repeat inside every shard.
CROWDED = """\
setting: K
seed: 2
defaults:
  grid: {height: [5, 5], width: [5, 5]}
  objects: {count: [1, 1], where: {rows: [1, 2], cols: [1, 2]}}
  sizes: {train: 900, validation: 40, test: 40}
experiments:
  K-1:
    in_domain: {sequences: [[translate_up], [rot90], [mirror_horizontal]]}
"""


@pytest.fixture
def spec(tmp_path) -> Path:
    path = tmp_path / "crowded.yaml"
    path.write_text(CROWDED)
    return path


@pytest.fixture
def sampled(monkeypatch) -> list[int]:
    """Samples the second pass generates (the key pass's own are not counted)."""
    counts: list[int] = []
    original = cogitao_build.generate_rows

    def counting(job, indices, retries=None):
        counts.append(len(indices))
        return original(job, indices, retries)

    monkeypatch.setattr(cogitao_build, "generate_rows", counting)
    monkeypatch.setattr(cogitao_build, "_first_pass", _uncounted(cogitao_build._first_pass, original))
    return counts


def _uncounted(first_pass, original):
    def run(task, frames=True):
        saved = cogitao_build.generate_rows
        cogitao_build.generate_rows = original
        try:
            yield from first_pass(task, frames)
        finally:
            cogitao_build.generate_rows = saved
    return run


def test_saved_rows_give_the_bytes_of_sampling_twice(spec, tmp_path, monkeypatch, sampled):
    report = build(spec, tmp_path / "saved", rows_per_shard=300)
    regenerated = sum(c.stats["train"]["regenerated"] for c in report.configs)
    assert regenerated >= 5  # the space is small: the test is about something
    second_pass = sum(sampled)
    sampled.clear()
    monkeypatch.setattr(cogitao_build, "_save_rows", lambda folder, groups: None)  # the oracle: sample again
    build(spec, tmp_path / "oracle", rows_per_shard=300)
    assert digests(tmp_path / "saved") == digests(tmp_path / "oracle")
    assert sum(sampled) >= 900 > second_pass  # the oracle sampled every shard again; the build did not
    assert not (tmp_path / "saved" / ".cogen" / "scratch").exists()  # nothing left behind


def test_damaged_saved_rows_are_generated_again(spec, tmp_path, monkeypatch):
    original = cogitao_build._save_rows

    def save_then_damage(folder, groups):
        saved = original(folder, groups)
        for index, path in enumerate(sorted(Path(folder).glob("*.npy"))):
            data = path.read_bytes()
            path.write_bytes(data[: len(data) // 2] if index % 2 else b"not an array")
        return saved

    monkeypatch.setattr(cogitao_build, "_save_rows", save_then_damage)
    build(spec, tmp_path / "damaged", rows_per_shard=300)
    monkeypatch.setattr(cogitao_build, "_save_rows", lambda folder, groups: None)
    build(spec, tmp_path / "oracle", rows_per_shard=300)
    assert digests(tmp_path / "damaged") == digests(tmp_path / "oracle")


def test_saved_rows_keep_only_rows_of_the_right_length(tmp_path):
    rows = {"ok": np.ones(4, bool), "inputs": np.zeros((4, 2, 2), np.int8), "object_cell_starts": np.arange(5)}
    folder = cogitao_build._save_rows(str(tmp_path / "rows"), [(10, rows)])
    assert cogitao_build._saved_rows(folder, 10, 4).keys() == rows.keys()
    assert cogitao_build._saved_rows(folder, 10, 5) is None  # another row count: not this group's rows
    assert cogitao_build._saved_rows(folder, 20, 4) is None and cogitao_build._saved_rows(None, 10, 4) is None
