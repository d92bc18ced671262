"""Degenerate samples and balanced difficulty: what the sampler rejects, and what it keeps through retries.

* ``degenerate: reject`` (the default) redraws a sample whose output equals its input, and every
  build records how many samples would have been such no-ops; ``degenerate: keep`` with
  ``balance: none`` gives exactly the rows of generator version 1 (golden digests of a build made
  before the change).
* ``balance: difficulty`` draws a sample's object count, and out of domain in size-shift
  experiments each object's height, once: "3 or 4 objects" means half and half and "6x6 to 10x10"
  covers every height, measured on the packaged specs' real out-of-domain splits.
* The pilot still fails fast, naming the cause, on specs that cannot produce samples.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from cogen.bank import load_bank
from cogen.errors import GenerationError
from cogen.families.cogitao.generate.sampler import SplitJob, generate_rows
from cogen.pipeline import build
from cogen.specs import load_spec, parse_spec_text

GOLDEN = Path(__file__).parent / "golden" / "keep_none_digests.json"

# Five experiments covering what generator version 1 did: many no-ops (mirror on symmetric objects),
# an identity sequence, counts and sizes that change out of domain, a pool, and dedup regenerations.
KEEP_SPEC = """\
setting: K
seed: 5
degenerate: keep
balance: none
shift: environment
defaults:
  grid: {height: [10, 15], width: [10, 15]}
  objects:
    count: [1, 2]
    where: {is_shape_fully_connected: true, is_shape_symmetric: true, is_shape_evenly_colored: true, rows: [1, 5], cols: [1, 5]}
  sizes: {train: 400, validation: 50, test: 50, validation_ood: 100, test_ood: 100}
experiments:
  K-1:
    in_domain: {sequences: [[mirror_horizontal]]}
    out_of_domain:
      grid: {height: [16, 20], width: [16, 20]}
      objects:
        count: [3, 4]
        where: {is_shape_fully_connected: true, is_shape_asymmetric: true, is_shape_evenly_colored: false, rows: [6, 10], cols: [6, 10]}
      sequences: [[mirror_horizontal]]
  K-2:
    grid: {height: [15, 15], width: [15, 15]}
    objects: {count: [1, 2], where: {is_shape_fully_connected: true, rows: [1, 5], cols: [1, 5]}}
    in_domain: {sequences: [[extend_contours_same_color]]}
    out_of_domain:
      objects: {count: [3, 4]}
      sequences: [[extend_contours_same_color]]
  K-3:
    shift: composition
    grid: {height: [20, 20], width: [20, 20]}
    objects: {count: [2, 2], where: {is_shape_fully_connected: true, rows: [1, 5], cols: [1, 5]}}
    in_domain:
      sequences: [[translate_up], [mirror_horizontal], [rot90], [mirror_horizontal, mirror_horizontal], [rot90, rot90]]
    out_of_domain: {sequences: [[rot90, translate_up], [mirror_horizontal, rot90, translate_up]]}
  K-4:
    shift: composition
    grid: {height: [12, 12], width: [12, 12]}
    objects: {count: [1, 3], where: {is_shape_fully_connected: true, rows: [1, 4], cols: [1, 4]}}
    in_domain: {pool: [mirror_horizontal, rot90, translate_up], depth: [1, 2], exclude: [[rot90, translate_up]]}
    out_of_domain: {sequences: [[rot90, translate_up]]}
  K-5:
    shift: composition
    grid: {height: [6, 6], width: [6, 6]}
    objects: {count: [1, 1], where: {is_shape_fully_connected: true, rows: [1, 2], cols: [1, 2]}}
    in_domain: {sequences: [[translate_up], [mirror_vertical]]}
    out_of_domain: {sequences: [[rot90]]}
"""


def row_digests(folder: Path) -> dict[str, str]:
    """SHA-256 of every shard's rows (as JSON), by shard path under ``data/``."""
    import pyarrow.parquet as pq

    return {str(path.relative_to(folder / "data")):
            hashlib.sha256(json.dumps(pq.read_table(path).to_pydict(), sort_keys=True).encode()).hexdigest()
            for path in sorted((folder / "data").glob("*/*.parquet"))}


def test_keep_without_balance_restores_the_rows_of_generator_version_1(tmp_path):
    spec = tmp_path / "keep.yaml"
    spec.write_text(KEEP_SPEC)
    build(spec, tmp_path / "out", workers=1)
    assert row_digests(tmp_path / "out") == json.loads(GOLDEN.read_text())["digests"]
    manifest = json.loads((tmp_path / "out/manifests/K-1.json").read_text())
    assert manifest["generator_version"] == 2 and manifest["splits"]["train"]["stats"]["noops"] > 0


def jobs(spec_text: str, config: str, split: str, **domain_changes) -> SplitJob:
    setting = parse_spec_text(spec_text, "k.yaml")
    domain = replace(setting.experiment(config).domain(split), **domain_changes)
    return SplitJob.of(domain, setting.seed, config, split)


def test_reject_redraws_exactly_the_samples_keep_would_have_left_unchanged():
    """Both modes draw the same numbers up to a sample's first valid attempt, so the samples that
    are no-ops under keep are the ones reject flags (and redraws)."""
    kept = generate_rows(jobs(KEEP_SPEC, "K-1", "train"), np.arange(600))
    rejected = generate_rows(jobs(KEEP_SPEC, "K-1", "train", degenerate="reject"), np.arange(600))
    unchanged = (kept["inputs"] == kept["outputs"]).all(axis=(1, 2))
    assert 30 < unchanged.sum() < 300  # mirror_horizontal leaves many symmetric single-colour grids alone
    assert (kept["noop"] == unchanged).all() and (rejected["noop"] == unchanged).all()
    assert not (rejected["inputs"] == rejected["outputs"]).all(axis=(1, 2)).any()
    assert rejected["causes"][:, -1].sum() >= unchanged.sum()  # the `degenerate` cause counted them
    same = ~unchanged
    assert (kept["inputs"][same] == rejected["inputs"][same]).all()  # untouched samples keep their bytes


def test_a_pool_under_reject_draws_no_identity_sequence():
    text = KEEP_SPEC.replace("degenerate: keep\n", "").replace("balance: none\n", "").replace(
        "in_domain: {pool: [mirror_horizontal, rot90, translate_up], depth: [1, 2]",
        "in_domain: {pool: [mirror_horizontal, mirror_vertical], depth: [2, 2]")
    text = text.replace("[mirror_horizontal, mirror_horizontal], ", "")
    rows = generate_rows(jobs(text, "K-4", "train"), np.arange(300))
    assert rows["ok"].all() and not (rows["inputs"] == rows["outputs"]).all(axis=(1, 2)).any()
    pairs = {tuple(seq) for seq in rows["sequences"][:, :2].tolist()}
    assert pairs == {(6, 7), (7, 6)}  # mirror twice is the identity: only the mixed pairs survive


def shares(values: np.ndarray, levels) -> dict[int, float]:
    return {int(level): float(np.mean(values == level)) for level in levels}


def ood_rows(spec: str, config: str, n: int = 1000) -> tuple[dict, SplitJob]:
    """The first ``n`` samples of a packaged config's `test_ood` split (1,000: the whole split)."""
    setting = load_spec(spec)
    experiment = setting.experiment(config)
    job = SplitJob.of(experiment.domain("test_ood"), setting.seed, config, "test_ood")
    rows = generate_rows(job, np.arange(n))
    assert rows["ok"].all()
    return rows, job


@pytest.mark.slow
@pytest.mark.parametrize("spec,config", [("g1", "G1-5"), *(("g5", f"G5-{k}") for k in range(1, 6))])
def test_three_or_four_objects_means_half_and_half(spec, config):
    rows, _ = ood_rows(spec, config, 500 if config == "G5-5" else 1000)  # G5-5 needs ~700 attempts a sample
    split = shares(rows["n_objects"], (3, 4))
    assert 0.45 <= split[3] <= 0.55 and 0.45 <= split[4] <= 0.55, split


@pytest.mark.parametrize("config", [f"G3-{k}" for k in range(1, 6)])
def test_six_to_ten_rows_covers_every_height(config):
    rows, _ = ood_rows("g3", config)
    ids = rows["object_ids"][rows["object_ids"] >= 0]
    heights = shares(load_bank().shapes[ids, 0], range(6, 11))
    assert all(0.15 <= share <= 0.25 for share in heights.values()), heights
    assert rows["size_redraws"].sum() <= 0.05 * len(rows["ok"])  # heights rarely need a second draw


def test_without_balance_the_sampler_leans_toward_the_easy_draws():
    """The reference's behaviour, kept by `balance: none`: what the balance corrects is real."""
    rows, job = ood_rows("g3", "G3-1")
    loose = generate_rows(replace(job, domain=replace(job.domain, balance=())), np.arange(1000))
    heights = [load_bank().shapes[r["object_ids"][r["object_ids"] >= 0], 0] for r in (rows, loose)]
    assert np.mean(heights[1] >= 9) < 0.2 < np.mean(heights[0] >= 9)
    attempts = [r["causes"].sum() / len(r["ok"]) for r in (rows, loose)]
    assert attempts[0] > attempts[1]  # the hard draws cost attempts instead of disappearing


def test_attempts_per_sample_and_noops_reach_the_manifest_and_the_card(tmp_path):
    from cogen.card import render_card

    text = KEEP_SPEC.replace("degenerate: keep\n", "").replace("balance: none\n", "").replace(
        "[mirror_horizontal, mirror_horizontal], ", "")
    spec = tmp_path / "k.yaml"
    spec.write_text(text)
    build(spec, tmp_path / "out", workers=1, only=["K-1"])
    stats = json.loads((tmp_path / "out/manifests/K-1.json").read_text())["splits"]["train"]["stats"]
    assert stats["degenerate"] > 0 and stats["noops"] > 0 and stats["accepted"] == 400
    card = render_card(tmp_path / "out")
    assert "train attempts per sample" in card and "train no-ops" in card
    per_sample = sum(v for k, v in stats.items() if k not in ("regenerated", "noops", "size_redraws")) / 400
    assert f"| {per_sample:.2f} |" in card and f"| {stats['noops'] / 400:.1%} |" in card


def test_the_pilot_fails_fast_on_a_count_that_never_fits(tmp_path):
    """Nine 3x3 objects pass the parse-time bound on a 9x9 grid but never fit: the balanced count
    keeps them, so the pilot names the sample and its count instead of quietly drawing fewer."""
    spec = tmp_path / "crowded.yaml"
    spec.write_text("""\
setting: X
seed: 1
defaults:
  grid: {height: [9, 9], width: [9, 9]}
  objects: {count: [1, 9], where: {is_shape_fully_connected: true, rows: [3, 3], cols: [3, 3]}}
  sizes: {train: 50, validation: 5, test: 5}
experiments:
  X-1: {in_domain: {sequences: [[translate_up]]}}
""")
    with pytest.raises(GenerationError, match=r"with its \d objects .* found no valid grid .*no_room"):
        build(spec, tmp_path / "out", workers=1)
    spec.write_text(spec.read_text().replace("seed: 1\n", "seed: 1\nbalance: none\n"))
    assert build(spec, tmp_path / "loose", workers=1).configs  # redrawing the count finds grids that fit


def test_the_pilot_fails_fast_when_nearly_every_sample_is_a_no_op(tmp_path):
    spec = tmp_path / "noop.yaml"
    spec.write_text("""\
setting: X
seed: 1
defaults:
  grid: {height: [8, 8], width: [8, 8]}
  objects: {count: [1, 1], where: {is_shape_fully_connected: true, rows: [1, 1], cols: [1, 1]}}
  sizes: {train: 50, validation: 5, test: 5}
experiments:
  X-1: {in_domain: {sequences: [[mirror_horizontal]]}}
""")
    with pytest.raises(GenerationError, match="degenerate .*degenerate: keep"):
        build(spec, tmp_path / "out", workers=1)
