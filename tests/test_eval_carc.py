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

pytest.importorskip("cogen.pipeline.carc")

CONFIG = "carc-systematicity-1860"
runner = CliRunner()


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    from cogen.pipeline import build

    out = tmp_path_factory.mktemp("carc")
    build("carc", out, scale=0.001, workers=1, only=[CONFIG])
    return out


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
    for name in ("exact_match", "exact_match_valid", "color_accuracy", "color_accuracy_code", "shape_accuracy",
                 "shape_accuracy_code", "valid_rate", "grid_accuracy"):
        assert metrics[name] == 1.0, name
    assert sum(metrics["errors"].values()) == 0
    assert set(metrics["by_triplet"]) == set(read_split(data, CONFIG, "test").table.column("triplet").to_pylist())


def test_identity_predictions_are_no_transformation(data, tmp_path):
    metrics = _predict(data, tmp_path, "identity")
    assert metrics["exact_match"] == 0.0  # cogen rejects degenerate queries whose output equals the input
    assert metrics["errors"]["no_transformation"] == metrics["n"]
    assert metrics["error_shares"]["no_transformation"] == 1.0


def test_primitive_outputs_on_real_episodes_are_classified_as_primitives(data):
    """Move each query's object as its translation role says (written out here, not with the
    kernels): the taxonomy must call it that role's primitive."""
    from cogen.eval.carc import _queries, expected_queries, query_grids
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
