"""``cogen eval`` on a freshly built COGITAO dataset: oracle, identity and stubborn predictions,
malformed files, Parquet and JSONL, the Hub branch, and the CLI end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cogen.cli import app
from cogen.engine import PlacedObject, apply_sequence
from cogen.errors import DataError, EvalError
from cogen.eval import baseline_records, evaluate, summary_rows, write_predictions
from cogen.folder import read_split
from cogen.pipeline import build

SPEC = """\
setting: E
seed: 5
defaults:
  grid: {height: [6, 8], width: [6, 8]}
  objects: {count: [1, 2], where: {is_shape_fully_connected: true, rows: [1, 3], cols: [1, 3]}}
  sizes: {train: 40, validation: 5, test: 10, validation_ood: 5, test_ood: 30}
experiments:
  E-1:
    in_domain: {sequences: [[translate_up], [rot90], [mirror_horizontal], [translate_up, rot90]]}
    out_of_domain: {sequences: [[rot90, translate_up], [mirror_horizontal, rot90]]}
"""
IN_DOMAIN = [("translate_up",), ("rot90",), ("mirror_horizontal",), ("translate_up", "rot90")]
runner = CliRunner()


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("eval")
    spec = folder / "e.yaml"
    spec.write_text(SPEC)
    build(spec, folder / "out", workers=1)
    return folder / "out"


def _rows(data: Path, split: str = "test_ood") -> list[dict]:
    return read_split(data, "E-1", split).table.to_pylist()


def _write(path: Path, records) -> Path:
    write_predictions(path, records)
    return path


def test_predicting_the_target_scores_100(data, tmp_path):
    split = read_split(data, "E-1", "test_ood")
    metrics = evaluate(data, "E-1", "test_ood", _write(tmp_path / "p.jsonl", baseline_records(split, "target")))
    for name in ("grid_accuracy", "grid_accuracy_valid", "per_pixel_accuracy", "per_pixel_accuracy_padded",
                 "object_pixel_accuracy"):
        assert metrics[name] == 1.0, name
    assert metrics["object_pixel_error_paper"] == 0.0
    assert metrics["objects"]["missed"] == metrics["objects"]["extra"] == 0
    assert metrics["format_errors"]["total"] == 0 and metrics["n"] == 30
    assert metrics["errors"] == {"format": 0, "no_transformation": 0, "stubborn": 0, "other": 0}
    assert all(group["grid_accuracy"] == 1.0 for group in metrics["by_sequence"].values())
    # stubbornness counts correct predictions whose target an in-domain sequence also produces
    assert metrics["stubbornness"]["stubborn"] == metrics["stubbornness"]["target_reachable"]


def test_predicting_the_input_is_no_transformation(data, tmp_path):
    rows = _rows(data)
    metrics = evaluate(data, "E-1", "test_ood", _write(tmp_path / "p.jsonl", ((r["id"], r["input"]) for r in rows)))
    unchanged = sum(r["input"] == r["output"] for r in rows)
    assert metrics["no_transformation"] == 1.0
    assert metrics["grid_accuracy"] == pytest.approx(unchanged / len(rows))
    assert metrics["errors"]["no_transformation"] == len(rows) - unchanged
    assert metrics["errors"]["other"] == metrics["errors"]["format"] == 0


def _in_domain_outputs(row: dict) -> list[list | None]:
    from cogen.bank import load_bank

    bank = load_bank()
    objects = [PlacedObject(r, c, bank.object(i)) for i, (r, c) in zip(row["object_ids"], row["object_positions"], strict=True)]
    height, width = len(row["input"]), len(row["input"][0])
    results = [apply_sequence(sequence, objects, height, width) for sequence in IN_DOMAIN]
    return [result.grid.tolist() if result.ok else None for result in results]


def test_predicting_an_in_domain_sequence_output_is_100_percent_stubborn(data, tmp_path):
    rows = _rows(data)
    records, expected_index = [], []
    for row in rows:
        outputs = _in_domain_outputs(row)
        j = next(j for j, grid in enumerate(outputs) if grid is not None)
        records.append((row["id"], outputs[j]))
        expected_index.append(j)
    metrics = evaluate(data, "E-1", "test_ood", _write(tmp_path / "p.jsonl", records))
    stubborn = metrics["stubbornness"]
    assert stubborn["computed"] and stubborn["value"] == 1.0 and stubborn["stubborn"] == len(rows)
    assert stubborn["unverifiable"] == 0 and stubborn["bank_matches"]
    assert stubborn["in_domain_sequences"] == len(IN_DOMAIN)
    assert sum(stubborn["by_in_domain_sequence"].values()) == len(rows)
    # the first matching sequence may come before the one used, when two give the same grid
    assert stubborn["by_in_domain_sequence"].get("translate_up", 0) >= expected_index.count(0)
    wrong = len(rows) - round(metrics["grid_accuracy"] * len(rows))
    assert metrics["errors"].get("stubborn", 0) + metrics["errors"]["no_transformation"] == wrong


def test_stubbornness_is_skipped_in_domain(data, tmp_path):
    split = read_split(data, "E-1", "test")
    metrics = evaluate(data, "E-1", "test", _write(tmp_path / "p.jsonl", baseline_records(split, "identity")))
    assert metrics["stubbornness"]["computed"] is False
    assert "stubborn" not in metrics["errors"]


def test_unverifiable_scenes_are_counted_not_guessed(data, tmp_path, monkeypatch):
    import cogen.families.cogitao.evaluate as module

    split = read_split(data, "E-1", "test_ood")
    monkeypatch.setattr(module, "scenes", lambda table, inputs: ([None] * table.num_rows, "other bank"))
    metrics = evaluate(data, "E-1", "test_ood", _write(tmp_path / "p.jsonl", baseline_records(split, "identity")))
    assert metrics["stubbornness"]["unverifiable"] == 30 and metrics["stubbornness"]["stubborn"] == 0
    assert metrics["stubbornness"]["bank_matches"] is False


def test_malformed_predictions_are_counted_never_raised(data, tmp_path):
    rows = _rows(data)
    good = [json.dumps({"id": r["id"], "prediction": r["output"]}) for r in rows[:20]]
    bad = [
        json.dumps({"id": rows[20]["id"], "prediction": [[1, 2], [3]]}),
        json.dumps({"id": rows[21]["id"], "prediction": [[1, 12]]}),
        json.dumps({"id": rows[22]["id"], "prediction": [1, 2, 3]}),
        json.dumps({"id": rows[23]["id"], "prediction": "not json"}),
        json.dumps({"id": rows[24]["id"], "prediction": None}),
        json.dumps({"id": rows[25]["id"], "prediction": json.dumps(rows[25]["output"])}),  # JSON text: not a grid
        json.dumps({"id": rows[0]["id"], "prediction": rows[0]["output"]}),  # a second record for rows[0]
        json.dumps({"id": "no-such-id", "prediction": [[0]]}),
        "{not json at all",
        json.dumps({"prediction": [[0]]}),
    ]
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(good + bad) + "\n")
    metrics = evaluate(data, "E-1", "test_ood", path)
    errors = metrics["format_errors"]
    assert errors["reasons"] == {"duplicate id": 1, "missing": 4, "ragged rows": 1, "value outside 0-9": 1,
                                 "not 2-D": 1, "string": 2, "null": 1}
    assert (errors["total"], errors["missing"], errors["duplicate"], errors["malformed"]) == (11, 4, 1, 6)
    assert errors["extra_ids"] == 1 and errors["extra_examples"] == ["no-such-id"]
    assert errors["unreadable_lines"] == 2
    assert metrics["n_valid"] == 19 and metrics["grid_accuracy"] == pytest.approx(19 / 30)
    assert metrics["grid_accuracy_valid"] == 1.0 and metrics["errors"]["format"] == 11


def test_parquet_predictions_with_bad_rows(data, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = _rows(data)
    grids = [r["output"] for r in rows]
    grids[0] = [[1, 2], [3]]
    grids[1] = None
    grids[2] = [[1, 2], [3, 99]]
    table = pa.table({"id": [r["id"] for r in rows], "prediction": pa.array(grids, pa.list_(pa.list_(pa.int64())))})
    pq.write_table(table, tmp_path / "p.parquet")
    metrics = evaluate(data, "E-1", "test_ood", tmp_path / "p.parquet")
    assert metrics["format_errors"]["reasons"] == {"ragged rows": 1, "null": 1, "value outside 0-9": 1}
    assert metrics["grid_accuracy"] == pytest.approx(27 / 30)
    write_predictions(tmp_path / "q.parquet", ((r["id"], r["output"]) for r in rows))
    assert evaluate(data, "E-1", "test_ood", tmp_path / "q.parquet")["grid_accuracy"] == 1.0


def test_wrong_files_and_names_raise_clear_errors(data, tmp_path):
    with pytest.raises(EvalError, match="no such predictions file"):
        evaluate(data, "E-1", "test_ood", tmp_path / "none.jsonl")
    with pytest.raises(DataError, match="no config"):
        read_split(data, "E-9", "test_ood")
    with pytest.raises(DataError, match="no split"):
        read_split(data, "E-1", "dev")
    (tmp_path / "p.csv").write_text("id,prediction\n")
    with pytest.raises(EvalError, match=".jsonl or .parquet"):
        evaluate(data, "E-1", "test_ood", tmp_path / "p.csv")
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": ["a"]}), tmp_path / "p.parquet")
    with pytest.raises(EvalError, match="no column prediction"):
        evaluate(data, "E-1", "test_ood", tmp_path / "p.parquet")


def test_hub_repo_ids_are_fetched_with_hf_hub_download(data, monkeypatch):
    import huggingface_hub

    calls = []

    def fake_download(repo_id, filename, repo_type):
        calls.append((repo_id, filename, repo_type))
        return str(data / filename)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    split = read_split("someone/cogen-e", "E-1", "test_ood")
    assert split.source == "hf://datasets/someone/cogen-e" and split.table.num_rows == 30
    assert calls[0] == ("someone/cogen-e", "manifests/E-1.json", "dataset")
    assert all(kind == "dataset" for _, _, kind in calls) and len(calls) == 2


def test_hub_failures_become_data_errors():
    with pytest.raises(DataError, match="no local folder of that name, and cannot download manifests/E-1.json"):
        read_split("someone/not-cached-anywhere", "E-1", "test_ood")  # tests run with HF_HUB_OFFLINE=1
    with pytest.raises(DataError, match="no such folder"):
        read_split("./no/such/folder", "E-1", "test_ood")


def test_pad_defaults_to_the_experiments_largest_grid(data, tmp_path):
    split = read_split(data, "E-1", "test_ood")
    path = _write(tmp_path / "p.jsonl", baseline_records(split, "zeros"))
    assert evaluate(data, "E-1", "test_ood", path)["pad_size"] == [8, 8]
    wide = evaluate(data, "E-1", "test_ood", path, pad=(30, 30))
    assert wide["pad_size"] == [30, 30]
    assert wide["per_pixel_accuracy_padded"] > evaluate(data, "E-1", "test_ood", path)["per_pixel_accuracy_padded"]


def test_cli_identity_baseline_end_to_end(data, tmp_path):
    preds, out = tmp_path / "preds.jsonl", tmp_path / "metrics.json"
    result = runner.invoke(app, ["eval", "baseline", "--data", str(data), "--config", "E-1", "--split", "test_ood",
                                 "--kind", "identity", "--out", str(preds)])
    assert result.exit_code == 0, result.output
    assert "wrote 30 identity predictions" in result.stdout
    result = runner.invoke(app, ["eval", "--data", str(data), "--config", "E-1", "--split", "test_ood",
                                 "--predictions", str(preds), "--json-out", str(out)])
    assert result.exit_code == 0, result.output
    for text in ("grid_accuracy", "stubbornness", "by transformation", "by sequence", "rot90 -> translate_up"):
        assert text in result.stdout
    metrics = json.loads(out.read_text())
    assert metrics["no_transformation"] == 1.0 and metrics["config"] == "E-1"
    assert dict(summary_rows(metrics))["no_transformation"] == "100.00 %"


def test_cli_requires_its_options():
    result = runner.invoke(app, ["eval", "--data", "x"])
    assert result.exit_code != 0 and "--predictions are required" in result.output
    result = runner.invoke(app, ["eval", "--data", "x", "--config", "E-1", "--predictions", "p.jsonl", "--pad", "3"])
    assert result.exit_code != 0 and "HxW" in result.output


def test_grids_read_back_exactly(data):
    split = read_split(data, "E-1", "test_ood")
    from cogen.eval._arrow import stack_column

    stack, reasons = stack_column(split.table.column("input"))
    assert reasons == [None] * 30
    for k, row in enumerate(split.table.to_pylist()):
        assert stack.grid(k).tolist() == row["input"]
        assert stack.grid(k).dtype == np.int8


def test_arrow_grid_columns_are_checked_per_row_even_when_sliced():
    import pyarrow as pa

    from cogen.eval._arrow import stack_column

    grids = [[[1, 2], [3, 4]], None, [], [[1, 2], [3]], [[0, 10]], [[5]], [[-1, 0]], [[]], [[9, 9, 9]]]
    array = pa.array(grids, pa.list_(pa.list_(pa.int16())))
    stack, reasons = stack_column(array)
    assert reasons == [None, "null", "empty", "ragged rows", "value outside 0-9", None, "value outside 0-9",
                       "empty", None]
    assert stack.grid(0).tolist() == [[1, 2], [3, 4]] and stack.grid(8).tolist() == [[9, 9, 9]]
    sliced, sliced_reasons = stack_column(pa.chunked_array([array.slice(3, 3), array.slice(8, 1)]))
    assert sliced_reasons == ["ragged rows", "value outside 0-9", None, None]
    assert sliced.grid(2).tolist() == [[5]] and sliced.grid(3).tolist() == [[9, 9, 9]]


def test_jsonl_fast_and_line_by_line_readers_agree(data, tmp_path):
    from cogen.eval.predictions import _read_jsonl_lines, read_predictions

    rows = _rows(data)
    records = [(r["id"], r["output"]) for r in rows[:-3]] + [(rows[-3]["id"], None)]
    lines = [json.dumps({"id": name, "prediction": grid}) for name, grid in records]
    lines.append(json.dumps({"id": rows[-2]["id"], "prediction": [[1, 2], [3]]}))
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(lines) + "\n")
    fast, slow = read_predictions(path), _read_jsonl_lines(path)
    assert fast.ids == slow.ids and fast.reasons == slow.reasons
    assert all(np.array_equal(fast.grids.grid(k), slow.grids.grid(k)) for k in range(len(fast.ids))
               if fast.reasons[k] is None)


def test_a_line_nested_100000_deep_is_a_format_error_not_a_crash(data, tmp_path):
    """Arrow's JSON parser would crash on it and Python's raises RecursionError: the line is unreadable."""
    rows = _rows(data)
    path = tmp_path / "deep.jsonl"
    deep = '{"id": "%s", "prediction": %s%s}' % (rows[1]["id"], "[" * 100_000, "]" * 100_000)
    path.write_text(json.dumps({"id": rows[0]["id"], "prediction": rows[0]["output"]}) + "\n" + deep + "\n")
    metrics = evaluate(data, "E-1", "test_ood", path)
    assert metrics["format_errors"]["unreadable_lines"] == 1 and metrics["n_valid"] == 1
