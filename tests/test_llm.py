"""LLM helper: reply parsing, deterministic task codes and in-context examples, export -> parse ->
eval round trips for COGITAO and Compositional-ARC."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cogen.cli import app
from cogen.eval import evaluate
from cogen.families.cogitao.prompts import choose_examples, task_codes
from cogen.families.cogitao.schema import experiment_from_dict
from cogen.folder import read_split
from cogen.llm import export_prompts, parse_replies, parse_reply
from cogen.pipeline import build

SPEC = """\
setting: L
seed: 7
defaults:
  grid: {height: [5, 6], width: [5, 6]}
  objects: {count: [1, 1], where: {is_shape_fully_connected: true, rows: [1, 2], cols: [1, 2]}}
  sizes: {train: 40, validation: 2, test: 4, validation_ood: 2, test_ood: 6}
experiments:
  L-1:
    in_domain: {sequences: [[rot90], [translate_up], [mirror_horizontal], [rot90, translate_up]]}
    out_of_domain: {sequences: [[translate_up, mirror_horizontal]]}
"""
runner = CliRunner()


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("llm")
    (folder / "l.yaml").write_text(SPEC)
    build(folder / "l.yaml", folder / "out", workers=1)
    return folder / "out"


@pytest.mark.parametrize(("reply", "grid"), [
    ("output: [[1, 2], [3, 4]]", [[1, 2], [3, 4]]),
    ("Thinking... output: [[0]] no wait\nOutput:\n[[5, 5],\n [5, 5]]", [[5, 5], [5, 5]]),  # the last marker counts
    ("[[1, 0], [0, 1]]", [[1, 0], [0, 1]]),                                           # COGITAO's bare list
    ("```python\n[[1, 0], [0, 1]]\n```", [[1, 0], [0, 1]]),
    ("output: [[1, 2], [3, 4]] and then some words", [[1, 2], [3, 4]]),
])
def test_parse_reply_finds_the_grid(reply, grid):
    parsed, reason = parse_reply(reply)
    assert reason is None and parsed.tolist() == grid


@pytest.mark.parametrize(("reply", "reason"), [
    ("I don't know", "unparsable"), ("output: none", "unparsable"), ("output: [[1, 2], [3, 4]", "unparsable"),
    ("The answer is [[1, 2]] I think", "unparsable"), (None, "unparsable"),
    ("output: [[1, 2], [3]]", "ragged rows"), ("output: [[1, 20]]", "value outside 0-9"),
    ("output: [1, 2]", "not 2-D"),
])
def test_parse_reply_counts_what_it_cannot_use(reply, reason):
    assert parse_reply(reply) == (None, reason)


def test_marker_modes():
    assert parse_reply("[[1]]", marker="output") == (None, "unparsable")
    assert parse_reply("output: [[1]]", marker="raw") == (None, "unparsable")
    assert parse_reply("output: [[1]]", marker="output")[0].tolist() == [[1]]


def test_coded_task_codes_are_deterministic_and_in_spec_order(data):
    experiment = experiment_from_dict(read_split(data, "L-1", "test").manifest["spec"])
    assert task_codes(experiment, "coded") == {"rot90": "t1", "translate_up": "t2", "mirror_horizontal": "t3"}
    assert task_codes(experiment, "explicit") == {"rot90": "rot90", "translate_up": "translate_up",
                                                  "mirror_horizontal": "mirror_horizontal"}


def test_examples_cover_each_test_transformation_with_the_shortest_sequences():
    train = {("rot90",): np.array([0, 1]), ("translate_up",): np.array([2]), ("rot90", "translate_up"): np.array([3]),
             ("mirror_horizontal",): np.array([4, 5])}
    rng = np.random.default_rng(0)
    rows = choose_examples(("translate_up", "mirror_horizontal"), train, 5, rng)
    assert len(rows) == 5 and rows[0] == 2 and rows[1] in (4, 5)  # atomic examples of both, first
    assert {0, 1} & set(rows) and 3 in rows  # then the other sequences
    assert len(choose_examples(("rot90",), {("rot90",): np.array([7])}, 5, rng)) == 5  # repeats when short


def test_cogitao_export_is_deterministic_and_labels_examples(data, tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert export_prompts(data, "L-1", "test_ood", first, regime="coded") == 6
    export_prompts(data, "L-1", "test_ood", second, regime="coded")
    assert first.read_bytes() == second.read_bytes()
    record = json.loads(first.read_text().splitlines()[0])
    assert record["id"] == "L-1-test_ood-0" and len(record["examples"]) == 5
    assert record["setting"] == "ood_composition" and record["task_codes"]["rot90"] == "t1"
    prompt = record["prompt"]
    assert "out-of-distribution composition" in prompt and "Test Input: [[" in prompt
    assert "Now, apply the following transformations: ['t2', 't3'] to the test input below." in prompt
    assert prompt.count("Here is a new example with transformations") == 5 and "rot90" not in prompt
    other = tmp_path / "c.jsonl"
    export_prompts(data, "L-1", "test_ood", other, regime="coded", seed=1)
    examples = [json.loads(line)["examples"] for line in first.read_text().splitlines()]
    assert [json.loads(line)["examples"] for line in other.read_text().splitlines()] != examples  # the seed matters
    explicit = tmp_path / "d.jsonl"
    export_prompts(data, "L-1", "test", explicit, regime="explicit")
    record = json.loads(explicit.read_text().splitlines()[0])
    assert record["setting"] == "id_composition" and "out-of-distribution" not in record["prompt"]


def test_cogitao_round_trip_prompts_replies_eval(data, tmp_path):
    prompts = tmp_path / "prompts.jsonl"
    export_prompts(data, "L-1", "test_ood", prompts)
    answers = {row["id"]: row["output"] for row in read_split(data, "L-1", "test_ood").table.to_pylist()}
    replies = tmp_path / "replies.jsonl"
    with replies.open("w") as out:
        for k, line in enumerate(prompts.read_text().splitlines()):
            name = json.loads(line)["id"]
            reply = "Sorry, I cannot." if k == 0 else json.dumps(answers[name])  # bare list, as COGITAO asks
            out.write(json.dumps({"id": name, "reply": reply}) + "\n")
    report = parse_replies(replies, tmp_path / "preds.jsonl")
    assert (report.total, report.parsed, report.reasons) == (6, 5, {"unparsable": 1})
    metrics = evaluate(data, "L-1", "test_ood", tmp_path / "preds.jsonl")
    assert metrics["grid_accuracy"] == pytest.approx(5 / 6) and metrics["grid_accuracy_valid"] == 1.0
    assert metrics["format_errors"]["reasons"] == {"null": 1}


def test_prompts_cli_round_trip(data, tmp_path):
    prompts, replies, preds = tmp_path / "p.jsonl", tmp_path / "r.jsonl", tmp_path / "preds.parquet"
    result = runner.invoke(app, ["prompts", "export", "-d", str(data), "-c", "L-1", "-s", "test_ood", "--regime",
                                 "coded", "-o", str(prompts)])
    assert result.exit_code == 0, result.output
    assert "wrote 6 prompts" in result.stdout
    rows = [json.loads(line) for line in prompts.read_text().splitlines()]
    replies.write_text("".join(json.dumps({"id": r["id"], "response": "output: [[0]]"}) + "\n" for r in rows)
                       + "not json\n")
    result = runner.invoke(app, ["prompts", "parse", "--replies", str(replies), "--out", str(preds)])
    assert result.exit_code == 0, result.output
    assert "6 of 6 replies parsed" in result.stdout and "1 unreadable lines" in result.stdout
    metrics = evaluate(data, "L-1", "test_ood", preds)
    assert metrics["n_valid"] == 6 and metrics["grid_accuracy"] == 0.0


def test_carc_prompts_follow_the_papers_template(tmp_path):
    pytest.importorskip("cogen.families.carc.build")
    out = tmp_path / "carc"
    build("carc", out, scale=0.001, workers=1, only=["carc-systematicity-1860", "carc-3shot-1860"])
    prompts = tmp_path / "prompts.jsonl"
    count = export_prompts(out, "carc-systematicity-1860", "test", prompts)
    split = read_split(out, "carc-systematicity-1860", "test")
    assert count == split.table.num_rows  # one query per episode by default, as the paper
    record = json.loads(prompts.read_text().splitlines()[0])
    prompt = record["prompt"]
    assert record["id"].endswith("-q0") and record["query"] == 0
    assert "12 pairs of input-output examples" in prompt and "The first 6 example pairs" in prompt
    assert "'output: [...]'" in prompt and "example input 12:" in prompt and "Final input: [[" in prompt
    row = split.table.slice(0, 1).to_pylist()[0]
    final = prompt.split("Final input: ", 1)[1]
    assert parse_reply("output: " + final)[0].tolist() == row["query_inputs"][0]
    replies = tmp_path / "replies.jsonl"
    answers = {f"{r['id']}-q0": r["query_outputs"][0] for r in split.table.to_pylist()}
    replies.write_text("".join(json.dumps({"id": name, "reply": f"output: {json.dumps(grid)}"}) + "\n"
                               for name, grid in answers.items()))
    parse_replies(replies, tmp_path / "preds.jsonl", marker="output")
    metrics = evaluate(out, "carc-systematicity-1860", "test", tmp_path / "preds.jsonl", queries="first")
    assert metrics["exact_match"] == 1.0 and metrics["valid_rate"] == 1.0
    export_prompts(out, "carc-3shot-1860", "test", prompts)
    prompt = json.loads(prompts.read_text().splitlines()[0])["prompt"]
    assert "3 pairs of input-output examples" in prompt and "primitive" not in prompt
    assert "example input 3:" in prompt and "example input 4:" not in prompt
