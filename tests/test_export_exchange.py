"""The formats the ARC and fine-tuning worlds exchange: ARC Prize's challenge/solution files with a scored
``submission.json`` (pass@2), chat rows for TRL-style trainers, and an ``index.json`` that travels."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from cogen.cli import app
from cogen.errors import DataError
from cogen.eval import evaluate
from cogen.export import export
from cogen.folder import read_split

runner = CliRunner()
CARC = "carc-systematicity-1860"


def _load(path):
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(("name", "config"), [("cogitao", "V-1"), ("carc", CARC)])
def test_kaggle_files_hold_the_arc_json_tasks_split_into_challenges_and_solutions(tiny_builds, tmp_path, name, config):
    folder = tiny_builds[name]
    export(folder, config, tmp_path / "arc", "arc-json")
    export(folder, config, tmp_path / "kaggle", "kaggle")
    arc, kaggle = _load(tmp_path / "arc" / "index.json"), _load(tmp_path / "kaggle" / "index.json")
    for split in read_split(folder, config, "train").manifest["splits"]:
        challenges = _load(tmp_path / "kaggle" / f"{config}_{split}_challenges.json")
        solutions = _load(tmp_path / "kaggle" / f"{config}_{split}_solutions.json")
        tasks = {task_id: entry for task_id, entry in arc["tasks"].items() if entry["split"] == split}
        assert len(challenges) == len(solutions) == len(tasks)
        for task_id, entry in tasks.items():
            task = _load(tmp_path / "arc" / split / f"{task_id}.json")
            kaggle_id = entry["rows"][-1]  # the row holding the test pairs names the task
            assert challenges[kaggle_id] == {"train": task["train"], "test": [{"input": p["input"]} for p in task["test"]]}
            assert solutions[kaggle_id] == [p["output"] for p in task["test"]]
            assert kaggle["tasks"][kaggle_id]["rows"] == entry["rows"]
    assert kaggle["shots"] == arc["shots"] and kaggle["source"] == arc["source"]


def _submission(kaggle, config, split, right_second=True) -> dict:
    """attempt_1 the test input (identity), attempt_2 the solution (or the input again)."""
    challenges = _load(kaggle / f"{config}_{split}_challenges.json")
    solutions = _load(kaggle / f"{config}_{split}_solutions.json")
    return {task_id: [{"attempt_1": test["input"], "attempt_2": answer if right_second else test["input"]}
                      for test, answer in zip(task["test"], solutions[task_id], strict=True)]
            for task_id, task in challenges.items()}


@pytest.mark.parametrize(("name", "config", "split"), [("cogitao", "V-1", "train"), ("carc", CARC, "test")])
def test_a_submission_is_scored_pass_at_1_on_attempt_1_and_pass_at_2_on_either(tiny_builds, tmp_path, name, config,
                                                                                split):
    folder = tiny_builds[name]
    export(folder, config, tmp_path / "kaggle", "kaggle")
    path = tmp_path / "submission.json"
    path.write_text(json.dumps(_submission(tmp_path / "kaggle", config, split)))
    metrics = evaluate(folder, config, split, path)
    section = metrics["submission"]
    answered = sum(len(v) for v in _load(path).values())
    assert section["pass_at_1"] == 0 and section["unmatched_outputs"] == 0
    assert section["pass_at_2"] == pytest.approx(answered / section["expected"]) and answered > 0
    identity = tmp_path / "identity.json"
    identity.write_text(json.dumps(_submission(tmp_path / "kaggle", config, split, right_second=False)))
    assert evaluate(folder, config, split, identity)["submission"]["pass_at_2"] == 0
    result = runner.invoke(app, ["eval", "-d", str(folder), "-c", config, "-s", split, "-p", str(path)])
    assert result.exit_code == 0 and "pass@2 (either attempt)" in result.output, result.output


def test_a_submission_of_another_layout_is_one_clear_error(tiny_builds, tmp_path):
    from cogen.errors import EvalError

    path = tmp_path / "submission.json"
    path.write_text(json.dumps([{"attempt_1": [[0]]}]))
    with pytest.raises(EvalError, match="a submission maps each task id to a list"):
        evaluate(tiny_builds["cogitao"], "V-1", "test_ood", path)


def test_index_json_records_a_relative_source_and_compositional_arc_s_rotation(tiny_builds, tmp_path):
    for fmt in ("arc-json", "kaggle", "mlc"):
        export(tiny_builds["carc"], CARC, tmp_path / fmt, fmt)
        index = _load(tmp_path / fmt / "index.json")
        assert not index["source"].startswith("/") and (tmp_path / fmt / index["source"]).resolve() == \
            tiny_builds["carc"].resolve()
        assert index["rotation_type_8"] == "counter-clockwise"
    assert "rotation_type_8" not in _load(tmp_path / "arc-json" / "index.json")["tasks"]


@pytest.mark.parametrize(("name", "config"), [("cogitao", "V-1"), ("carc", CARC), ("programs", "vp-block")])
def test_chat_rows_are_the_family_prompts_answered_and_load_with_datasets(tiny_builds, tmp_path, name, config):
    import datasets.config
    import pyarrow.parquet as pq

    from cogen.eval import baseline_records, expected_ids
    from cogen.llm import parse_reply

    folder = tiny_builds[name]
    export(folder, config, tmp_path / "chat", "chat")
    for split in read_split(folder, config, "test" if name == "programs" else "train").manifest["splits"]:
        rows = pq.read_table(tmp_path / "chat" / f"{split}.parquet").to_pylist()
        data = read_split(folder, config, split)
        assert len(rows) == len({r["id"] for r in rows}) and {r["id"] for r in rows} <= set(expected_ids(data))
        assert len(rows) == data.table.num_rows  # the prompt maker's default: one prompt per row
        for row in rows:
            assert row["messages"] == row["prompt"] + row["completion"] and row["split"] == split
            assert [turn["role"] for turn in row["messages"]] == ["user", "assistant"]
        if name != "programs":  # the answer is what the family's parser reads as right
            targets = {prompt_id: np.asarray(grid) for prompt_id, grid in baseline_records(data, "target")}
            for row in rows[:5]:
                grid, reason = parse_reply(row["completion"][0]["content"])
                assert reason is None and np.array_equal(grid, targets[row["id"]])
    loaded = datasets.load_dataset("parquet", data_files={"train": str(tmp_path / "chat" / "*.parquet")},
                                   cache_dir=str(tmp_path / "cache"), split="train")
    assert set(loaded.column_names) >= {"messages", "prompt", "completion"} and datasets.config


def test_a_train_chat_export_holds_no_held_out_composition(tiny_builds, tmp_path):
    import pyarrow.parquet as pq

    folder = tiny_builds["cogitao"]
    export(folder, "V-1", tmp_path / "chat", "chat")
    held_out = {" -> ".join(s) for s in read_split(folder, "V-1", "test_ood").table.column("transformations").to_pylist()}
    for split in ("train", "validation", "test"):
        for row in pq.read_table(tmp_path / "chat" / f"{split}.parquet").to_pylist():
            meta = json.loads(row["meta"])
            shown = [row["id"], *meta.get("examples", [])]
            assert all("_ood-" not in name for name in shown), shown
            text = row["prompt"][0]["content"]
            for sequence in held_out:  # explicit regime: a held-out sequence would be named in the task codes
                assert str(sequence.split(" -> ")) not in text
    index = _load(tmp_path / "chat" / "index.json")
    assert index["held_out_splits"] == ["validation_ood", "test_ood"] and "train" in index["train_on"]


def test_a_prompt_maker_that_leaked_a_held_out_row_is_refused(tiny_builds):
    from cogen.export._source import open_source
    from cogen.llm import Prompt, chat

    leaked = Prompt("V-1-train-0", "...", {"examples": ["V-1-test_ood-3"]})

    source = open_source(tiny_builds["cogitao"], "V-1")
    with pytest.raises(DataError, match="would show the held-out row V-1-test_ood-3"):
        chat._check_held_out(source, "train", leaked)
    chat._check_held_out(source, "test_ood", leaked)  # a held-out split may show anything
