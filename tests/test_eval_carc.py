"""``cogen eval`` on a freshly built Compositional-ARC config: query ids, oracle and identity
predictions, the taxonomy on real episodes, and the paper's first-query LLM protocol."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cogen.cli import app
from cogen.eval import baseline_records, evaluate, expected_ids, write_predictions
from cogen.folder import read_split

pytest.importorskip("cogen.families.carc.build")

CONFIG = "carc-systematicity-1860"
runner = CliRunner()


@pytest.fixture(scope="module")
def data(tiny_carc) -> Path:
    """The shared tiny Compositional-ARC build (conftest.py; read-only)."""
    return tiny_carc


def _predict(data: Path, tmp_path: Path, kind: str, queries: str = "all") -> dict:
    path = tmp_path / f"{kind}.jsonl"
    write_predictions(path, baseline_records(read_split(data, CONFIG, "test"), kind, queries=queries))
    return evaluate(data, CONFIG, "test", path, queries=queries)


def test_every_query_has_its_own_id(data):
    split = read_split(data, CONFIG, "test")
    ids = expected_ids(split)
    rows = split.table.column("id").to_pylist()
    assert len(ids) == 10 * len(rows) and ids[:2] == [f"{rows[0]}-q0", f"{rows[0]}-q1"]
    assert expected_ids(split, queries="first") == [f"{row}-q0" for row in rows]


def test_target_predictions_score_100(data, tmp_path):
    metrics = _predict(data, tmp_path, "target")
    for name in ("exact_match", "exact_match_valid", "color_accuracy", "shape_accuracy", "color_accuracy_counts",
                 "shape_accuracy_counts", "valid_rate", "grid_accuracy"):
        assert metrics[name] == 1.0, name
    assert sum(metrics["errors"].values()) == 0
    assert set(metrics["by_triplet"]) == set(read_split(data, CONFIG, "test").table.column("triplet").to_pylist())
    for breakdown in ("by_triplet", "by_transformation"):  # both forms in every breakdown
        for group in metrics[breakdown].values():
            assert group["color_accuracy"] == group["color_accuracy_counts"] == group["shape_accuracy_counts"] == 1.0


def test_identity_predictions_are_no_transformation(data, tmp_path):
    metrics = _predict(data, tmp_path, "identity")
    assert metrics["exact_match"] == 0.0  # cogen rejects degenerate queries whose output equals the input
    assert metrics["errors"]["no_transformation"] == metrics["n"]
    assert metrics["error_shares"]["no_transformation"] == 1.0


def test_primitive_outputs_on_real_episodes_are_classified_as_primitives(data):
    """Move each query's object as its translation role says (written out here, not with the
    kernels): the taxonomy must call it that role's primitive."""
    from cogen.families.carc.evaluate import _queries, expected_queries, query_grids
    from cogen.metrics.carc import ROLES, classify_error

    split = read_split(data, CONFIG, "test")
    index = expected_queries(split)
    queries = _queries(split, index.rows, query_grids(split, "query_inputs", index.positions),
                       query_grids(split, "query_outputs", index.positions))
    checked = 0
    for query in queries:
        roles = [role for role, (name, _) in zip(ROLES, query.roles, strict=True) if name == "translation"]
        if not roles:
            continue
        kwargs = dict(query.roles[ROLES.index(roles[0])][1])
        step = (0, kwargs["step_size"]) if kwargs["direction"] == "x" else (kwargs["step_size"], 0)
        neighbor = _mask(query.neighbor_cells)
        rows, cols = np.nonzero((query.input > 0) & ~neighbor)
        moved_rows, moved_cols = rows + step[0], cols + step[1]
        if moved_rows.max() > 9 or moved_cols.max() > 9:
            continue
        prediction = np.where(neighbor, query.input, 0)
        prediction[moved_rows, moved_cols] = query.input[rows[0], cols[0]]
        if not np.array_equal(prediction, query.target):
            assert classify_error(prediction, query) == f"primitive/{roles[0]}"
            checked += 1
    assert checked > 10


def _mask(cells) -> np.ndarray:
    mask = np.zeros((10, 10), bool)
    for r, c in cells:
        mask[r, c] = True
    return mask


def test_first_query_protocol_and_missing_queries(data, tmp_path):
    metrics = _predict(data, tmp_path, "target", queries="first")
    assert metrics["n"] == read_split(data, CONFIG, "test").table.num_rows and metrics["exact_match"] == 1.0
    # all-query predictions scored under the first-query protocol: the other queries are extra ids
    path = tmp_path / "all.jsonl"
    write_predictions(path, baseline_records(read_split(data, CONFIG, "test"), "target"))
    first = evaluate(data, CONFIG, "test", path, queries="first")
    assert first["format_errors"]["extra_ids"] == 9 * first["n"] and first["exact_match"] == 1.0
    # first-query predictions scored against all queries: nine in ten missing
    every = evaluate(data, CONFIG, "test", tmp_path / "target.jsonl")
    assert every["format_errors"]["missing"] == 9 * first["n"]
    assert every["exact_match"] == pytest.approx(0.1) and every["exact_match_valid"] == 1.0
    assert every["errors"]["format"] == 9 * first["n"]


def test_cli_on_carc(data, tmp_path):
    preds = tmp_path / "p.parquet"
    result = runner.invoke(app, ["eval", "baseline", "-d", str(data), "-c", CONFIG, "-s", "test", "--out", str(preds)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["eval", "-d", str(data), "-c", CONFIG, "-s", "test", "-p", str(preds)])
    assert result.exit_code == 0, result.output
    assert "exact_match" in result.stdout and "no_transformation" in result.stdout and "by triplet" in result.stdout


# ---------------------------------------------------------------- the reference's compute_accuracy
def reference_compute_accuracy(targets: list, predictions: list) -> dict[str, list[int]]:
    """The reference's per-query ``compute_accuracy`` (``vmlc/model/metrics.py``), re-implemented from
    carc_reference.md §7.1 as an oracle: flattened 100-cell vectors, ``None`` for a cell the
    tokenizer could not decode; exact match; colour = equal *sets* of non-zero values; shape = equal
    *sets* of normalised shape strings of the 8-connected components of non-zero cells, colours
    ignored; any ``None`` makes colour and shape 0."""
    out = {"exact_match_acc": [], "color_acc": [], "shape_acc": []}
    for target, prediction in zip(targets, predictions, strict=True):
        flat_t = [v for row in target for v in row]
        flat_p = [v for row in prediction for v in row]
        out["exact_match_acc"].append(int(flat_p == flat_t))
        if None in flat_p:
            out["color_acc"].append(0)
            out["shape_acc"].append(0)
            continue
        out["color_acc"].append(int({v for v in flat_p if v} == {v for v in flat_t if v}))
        out["shape_acc"].append(int(_shape_strings(flat_p) == _shape_strings(flat_t)))
    return out


def _shape_strings(flat: list) -> set[str]:
    cells = {(k // 10, k % 10) for k, v in enumerate(flat) if v}
    strings = set()
    while cells:
        group, frontier = set(), [cells.pop()]
        while frontier:
            r, c = frontier.pop()
            group.add((r, c))
            for cell in [(r + dr, c + dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1)]:
                if cell in cells:
                    cells.remove(cell)
                    frontier.append(cell)
        r0, c0 = min(r for r, _ in group), min(c for _, c in group)
        strings.add("".join(f"{r - r0}{c - c0}" for r, c in sorted(group)))
    return strings


def _noisy_predictions(targets: np.ndarray, inputs: np.ndarray, rng) -> list:
    """Predictions with the errors a decoder makes: exact, stray cells, duplicated or moved objects,
    recoloured cells, copies of the input, empty grids, and cells it could not decode (None)."""
    out = []
    for target, query_input in zip(targets, inputs, strict=True):
        kind = rng.integers(9)
        grid = target.astype(object).copy()
        if kind == 1:  # one stray cell of a uniform colour at a uniform empty cell
            empty = np.argwhere(target == 0)
            r, c = empty[rng.integers(len(empty))]
            grid[r, c] = int(rng.integers(1, 10))
        elif kind == 2:  # the object copied somewhere else as well
            rows, cols = np.nonzero(target)
            shift = int(rng.integers(-3, 4)), int(rng.integers(-3, 4))
            for r, c in zip(rows, cols, strict=True):
                if 0 <= r + shift[0] < 10 and 0 <= c + shift[1] < 10:
                    grid[r + shift[0], c + shift[1]] = int(target[r, c])
        elif kind == 3:  # one non-zero cell recoloured
            rows, cols = np.nonzero(target)
            k = rng.integers(len(rows))
            grid[rows[k], cols[k]] = int(rng.integers(1, 10))
        elif kind == 4:
            grid = query_input.astype(object).copy()
        elif kind == 5:
            grid = np.zeros((10, 10), object)
        elif kind == 6:  # the decoder stopped early: the last cells are undecoded
            grid.reshape(-1)[100 - 4 * int(rng.integers(1, 25)):] = None
        elif kind == 7:  # a cell erased
            rows, cols = np.nonzero(target)
            k = rng.integers(len(rows))
            grid[rows[k], cols[k]] = 0
        elif kind == 8:  # random noise
            grid = rng.integers(0, 10, (10, 10)).astype(object)
        out.append([[None if v is None else int(v) for v in row] for row in grid])
    return out


def test_headline_colour_and_shape_accuracy_are_the_reference_compute_accuracy(data, tmp_path):
    """Predictions in the reference's decoded format (10x10 lists, ``None`` where the tokenizer could
    not decode a patch) score the same exact, colour and shape accuracy in ``cogen eval`` as in the
    reference's ``compute_accuracy``, averaged per episode and then over episodes as its ``query_*``."""
    import json

    split = read_split(data, CONFIG, "test")
    targets = split.table.column("query_outputs").to_pylist()
    inputs = split.table.column("query_inputs").to_pylist()
    rng = np.random.default_rng(16)
    predictions = [_noisy_predictions(np.array(t), np.array(i), rng) for t, i in zip(targets, inputs, strict=True)]
    path = tmp_path / "reference-format.jsonl"
    with path.open("w") as file:
        for row_id, episode in zip(split.table.column("id").to_pylist(), predictions, strict=True):
            for j, grid in enumerate(episode):
                file.write(json.dumps({"id": f"{row_id}-q{j}", "prediction": grid}) + "\n")
    metrics = evaluate(data, CONFIG, "test", path)
    per_episode = [reference_compute_accuracy(t, p) for t, p in zip(targets, predictions, strict=True)]
    for ours, theirs in (("exact_match", "exact_match_acc"), ("color_accuracy", "color_acc"),
                         ("shape_accuracy", "shape_acc")):
        expected = np.mean([np.mean(episode[theirs]) for episode in per_episode])
        assert metrics[ours] == pytest.approx(expected, abs=1e-12), ours
    assert metrics["color_accuracy"] > metrics["color_accuracy_counts"]  # stray cells pass the set form only
    assert 0 < metrics["exact_match"] < metrics["shape_accuracy"] < 1


def test_the_rotation_convention_comes_from_the_rows(data):
    import pyarrow as pa

    from cogen.errors import EvalError
    from cogen.families.carc.evaluate import _rotation
    from cogen.folder import SplitData

    split = read_split(data, CONFIG, "test")
    assert _rotation(split) == "paper"
    column = split.table.schema.get_field_index("rotation_type_8")

    def with_turns(turns):
        table = split.table.set_column(column, "rotation_type_8", pa.array(turns, pa.string()))
        return SplitData(split.manifest, table, split.split, split.source)

    n = split.table.num_rows
    assert _rotation(with_turns(["clockwise"] * n)) == "reference"  # the rows win over the manifest
    with pytest.raises(EvalError, match="disagree"):
        _rotation(with_turns(["clockwise"] + ["counter-clockwise"] * (n - 1)))
    with pytest.raises(EvalError, match="sideways"):
        _rotation(with_turns(["sideways"] * n))
    older = SplitData(split.manifest, split.table.drop(["rotation_type_8"]), split.split, split.source)
    assert _rotation(older) == "paper"  # data of generator 1: the manifest's spec
