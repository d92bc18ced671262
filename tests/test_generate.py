"""The sampler: samples obey their spec (checked independently), and are pure functions of their index."""

from __future__ import annotations

import numpy as np
import pytest

from cogen.bank import load_bank
from cogen.engine import PlacedObject, apply_sequence
from cogen.engine.registry import from_token
from cogen.families.cogitao.generate.program import stream_seed
from cogen.families.cogitao.generate.sampler import SplitJob, generate_rows
from cogen.families.cogitao.spec import object_query
from cogen.specs import load_spec, parse_spec_text

CASES = [("c1", "C1-1", "train"), ("c1", "C1-4", "test_ood"), ("c3", "C3-2", "train"), ("c3", "C3-4", "test_ood"),
         ("g1", "G1-5", "test_ood"), ("g5", "G5-5", "test_ood"), ("g3", "G3-4", "validation_ood"), ("s", "S-4-5", "train"),
         ("g5", "G5-3", "test_ood"), ("as_run/c1", "as-run-C1-1", "train"), ("as_run/g4", "as-run-G4-3", "train")]


def job_of(spec: str, config: str, split: str, seed: int = 7) -> SplitJob:
    experiment = load_spec(spec).experiment(config)
    return SplitJob(experiment.domain(split), int(stream_seed(seed, config, split)))


def render(bank, ids, positions, height, width) -> np.ndarray:
    grid = np.zeros((height, width), np.int8)
    for bank_id, (row, col) in zip(ids, positions, strict=True):
        obj = bank.object(bank_id)
        h, w = obj.shape
        grid[row : row + h, col : col + w][obj != 0] = obj[obj != 0]
    return grid


def separated(bank, ids, positions, height, width) -> bool:
    """No object pixel lies in the 3x3 neighbourhood of another object's pixel."""
    masks = []
    for bank_id, (row, col) in zip(ids, positions, strict=True):
        mask = np.zeros((height + 2, width + 2), bool)
        obj = bank.object(bank_id)
        mask[row + 1 : row + 1 + obj.shape[0], col + 1 : col + 1 + obj.shape[1]] = obj != 0
        masks.append(mask)
    for i, a in enumerate(masks):
        grown = a.copy()
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                grown |= np.roll(np.roll(a, dr, 0), dc, 1)
        if any((grown & b).any() for b in masks[i + 1 :]):
            return False
    return True


@pytest.mark.parametrize("spec,config,split", CASES)
def test_samples_obey_their_domain(spec, config, split):
    bank = load_bank()
    job = job_of(spec, config, split)
    domain = job.domain
    rows = generate_rows(job, np.arange(150))
    assert rows["ok"].all()
    explicit = domain.sequences.sequences
    for i in range(150):
        height, width = map(int, rows["sizes"][i])
        n = int(rows["n_objects"][i])
        ids = rows["object_ids"][i, :n]
        positions = rows["positions"][i, :n].tolist()
        tokens = rows["sequences"][i][rows["sequences"][i] >= 0]
        sequence = tuple(from_token(int(t)).name for t in tokens)
        assert sequence == explicit[i % len(explicit)]
        assert domain.grid.height.lo <= height <= domain.grid.height.hi
        assert domain.grid.width.lo <= width <= domain.grid.width.hi
        assert domain.objects.count.lo <= n <= domain.objects.count.hi
        allowed = set(bank.select(object_query(domain.objects, sequence)).tolist())
        assert set(ids.tolist()) <= allowed
        assert (rows["inputs"][i, :height, :width] == render(bank, ids, positions, height, width)).all()
        assert separated(bank, ids, positions, height, width)
        objects = [PlacedObject(r, c, bank.object(b)) for b, (r, c) in zip(ids, positions, strict=True)]
        result = apply_sequence(sequence, objects, height, width)
        assert result.ok
        assert (rows["outputs"][i, :height, :width] == result.grid).all()
        assert not rows["inputs"][i, height:].any() and not rows["inputs"][i, :, width:].any()
        unchanged = (result.grid == rows["inputs"][i, :height, :width]).all()
        assert bool(rows["noop"][i]) == unchanged or domain.degenerate == "reject"
        assert not unchanged or domain.degenerate == "keep"  # the oracle agrees: no no-op is kept under reject


def test_a_sample_depends_only_on_its_index_and_retry():
    job = job_of("c1", "C1-2", "train")
    whole = generate_rows(job, np.arange(0, 120))
    tail = generate_rows(job, np.arange(119, 79, -1))
    for name in ("sizes", "inputs", "outputs", "sequences", "object_ids", "keys"):
        assert np.array_equal(whole[name][80:120], tail[name][::-1]), name
    retried = generate_rows(job, np.arange(80, 120), np.ones(40, np.int64))
    assert not np.array_equal(retried["inputs"], whole["inputs"][80:120])


def test_streams_differ_between_splits_experiments_and_seeds():
    seeds = {int(stream_seed(s, e, p)) for s in (1, 2) for e in ("C1-1", "C1-2") for p in ("train", "test")}
    assert len(seeds) == 8
    a = generate_rows(job_of("c1", "C1-1", "validation"), np.arange(20))["inputs"]
    b = generate_rows(job_of("c1", "C1-1", "test"), np.arange(20))["inputs"]
    assert not np.array_equal(a, b)


def test_pool_mode_draws_allowed_sequences_only():
    text = """\
setting: P
seed: 1
defaults:
  grid: {height: [12, 12], width: [12, 12]}
  objects: {count: [1, 2], where: {is_shape_fully_connected: true, rows: [1, 4], cols: [1, 4]}}
  sizes: {train: 10, validation: 2, test: 2}
experiments:
  P-1:
    in_domain: {pool: [translate_up, rot90, mirror_vertical], depth: [1, 3], exclude: [[rot90, rot90]]}
"""
    experiment = parse_spec_text(text).experiment("P-1")
    job = SplitJob(experiment.in_domain, 99)
    rows = generate_rows(job, np.arange(400))
    lengths = (rows["sequences"] >= 0).sum(axis=1)
    assert set(lengths.tolist()) == {1, 2, 3}
    from cogen.engine import resolve

    rot = resolve("rot90").token
    assert not any(list(r[r >= 0]) == [rot, rot] for r in rows["sequences"])


def _chi_square_p(counts: np.ndarray) -> float:
    """Upper-tail p-value of Pearson's chi-square against uniform (Wilson-Hilferty approximation)."""
    from math import erfc, sqrt

    expected = counts.sum() / len(counts)
    statistic = float(((counts - expected) ** 2 / expected).sum())
    k = len(counts) - 1
    z = ((statistic / k) ** (1 / 3) - (1 - 2 / (9 * k))) / sqrt(2 / (9 * k))
    return 0.5 * erfc(z / sqrt(2))


def test_placement_is_uniform_over_valid_positions():
    text = """\
setting: U
seed: 1
defaults:
  grid: {height: [3, 3], width: [4, 4]}
  objects: {count: [1, 1], where: {rows: [1, 1], cols: [1, 1]}}
  sizes: {train: 10, validation: 2, test: 2}
experiments:
  U-1:
    in_domain: {sequences: [[change_shape_color]]}
"""
    job = SplitJob(parse_spec_text(text).experiment("U-1").in_domain, 5)
    rows = generate_rows(job, np.arange(6000))
    cells = rows["positions"][:, 0, 0] * 4 + rows["positions"][:, 0, 1]
    counts = np.bincount(cells, minlength=12)
    assert (counts > 0).all() and _chi_square_p(counts) > 1e-3
