"""Paper-exact in-context runs: COGITAO's example selection and sampling (50 prompts per condition,
each condition's rule), Compositional-ARC text+image prompts and the no-code line, and the papers'
k / n_valid count beside cogen's."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cogen.card._png import read_png_text
from cogen.cli import app
from cogen.errors import EvalError
from cogen.eval import evaluate
from cogen.eval.counts import valid_counts
from cogen.families.carc.prompts import NO_CODE_LINE
from cogen.folder import read_split
from cogen.llm import export_prompts, parse_replies
from cogen.pipeline import build

runner = CliRunner()
_ATOMIC = "[[translate_up], [rot90], [mirror_horizontal], "
SPEC = """\
setting: PP
family: cogitao
seed: 3
defaults:
  grid: {height: [6, 7], width: [6, 7]}
  objects: {count: [1, 1], where: {is_shape_fully_connected: true, rows: [1, 2], cols: [1, 2]}}
  sizes: {train: 4, validation: 2, test: 50, validation_ood: 2, test_ood: 15}
experiments:
""" + "".join(f"""  PP-{k}:
    in_domain: {{sequences: {_ATOMIC}[translate_up, rot90], [rot90, mirror_horizontal], [mirror_horizontal, rot90]]}}
    out_of_domain: {{sequences: [[rot90, translate_up], [{'mirror_horizontal, translate_up' if k % 2 else 'translate_up, mirror_horizontal'}]]}}
""" for k in range(1, 6)) + """  PP-composed:
    degenerate: keep  # [mirror_horizontal, mirror_horizontal] stays: the selection must handle a repeated step
    sizes: {train: 4, validation: 2, test: 150, validation_ood: 2, test_ood: 15}
    in_domain: {sequences: [[translate_up, rot90], [rot90, mirror_horizontal], [mirror_horizontal, rot90], [rot90, rot90], [translate_up, translate_up], [mirror_horizontal, mirror_horizontal]]}
    out_of_domain: {sequences: [[rot90, translate_up]]}
  PP-deeper:
    in_domain: {sequences: [[translate_up], [rot90], [mirror_horizontal], [translate_up, rot90], [rot90, mirror_horizontal]]}
    out_of_domain: {sequences: [[rot90, translate_up, rot90]]}
  PP-grid:
    shift: environment
    in_domain: {sequences: [[rot90]]}
    out_of_domain: {grid: {height: [8, 9], width: [8, 9]}, sequences: [[rot90]]}
  PP-tiny:
    sizes: {train: 4, validation: 2, test: 3, validation_ood: 2, test_ood: 3}
    in_domain: {sequences: [[translate_up], [rot90], [translate_up, rot90]]}
    out_of_domain: {sequences: [[rot90, translate_up]]}
"""
FIVE = [f"PP-{k}" for k in range(1, 6)]


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("paper")
    (folder / "pp.yaml").write_text(SPEC)
    build(folder / "pp.yaml", folder / "out", workers=1)
    return folder / "out"


def _export(data, config, split, path, **options) -> list[dict]:
    export_prompts(data, config, split, path, **options)
    return [json.loads(line) for line in path.read_text().splitlines()]


def _sequences(data, config, split) -> dict[str, tuple]:
    table = read_split(data, config, split).table
    return {i: tuple(s) for i, s in zip(table.column("id").to_pylist(), table.column("transformations").to_pylist(), strict=True)}


def _check_atomic_and_composed(examples: list[tuple]) -> list[tuple]:
    depths = Counter(len(s) for s in examples)
    assert depths == {1: 3, 2: 2} and len(set(examples)) == 5
    return [s for s in examples if len(s) == 2]


@pytest.mark.parametrize("split", ["test", "test_ood"])
def test_cogitao_paper_selection_gives_50_prompts_per_condition_that_obey_its_rule(data, tmp_path, split):
    total = 0
    for config in FIVE:
        records = _export(data, config, split, tmp_path / f"{config}.jsonl", selection="paper", per_experiment=10,
                          seed=42)
        assert len(records) == 10 and len({r["id"] for r in records}) == 10
        context, tests = _sequences(data, config, "test"), _sequences(data, config, split)
        for record in records:
            assert record["condition"] == ("CompGen-ID1" if split == "test" else "CompGen-OOD1")
            assert record["selection"] == "paper" and record["seed"] == 42
            shown = [context[i] for i in record["examples"]]   # examples come from the in-domain test split
            composed = _check_atomic_and_composed(shown)
            assert record["id"] in tests and record["id"] not in record["examples"]
            if split == "test":  # the test sample's sequence is one of the two shown compositions
                assert tests[record["id"]] in composed
            assert record["prompt"].count("Here is a new example with transformations") == 5
        total += len(records)
    assert total == 50


def test_the_other_conditions_follow_their_rules(data, tmp_path):
    context = _sequences(data, "PP-composed", "test")
    id2 = _export(data, "PP-composed", "test", tmp_path / "id2.jsonl", selection="paper")
    assert {r["condition"] for r in id2} == {"CompGen-ID2"} and len(id2) == 10  # the paper's 10 by default
    rows = [i for r in id2 for i in r["examples"]]
    assert len(set(rows)) == len(rows)  # the scan moves on: consecutive rows, no row shown twice
    assert all(context[r["id"]] in {context[i] for i in r["examples"]} for r in id2)
    ood2 = _export(data, "PP-composed", "test_ood", tmp_path / "ood2.jsonl", selection="paper")
    assert {r["condition"] for r in ood2} == {"CompGen-OOD2"}
    assert all(len({context[i] for i in r["examples"]}) == 5 for r in ood2)
    ood3 = _export(data, "PP-deeper", "test_ood", tmp_path / "ood3.jsonl", selection="paper", per_experiment=4)
    assert {r["condition"] for r in ood3} == {"CompGen-OOD3"} and len(ood3) == 4
    grid = _export(data, "PP-grid", "test_ood", tmp_path / "grid.jsonl", selection="paper", per_experiment=15)
    assert {r["condition"] for r in grid} == {"EnvGen-Grid"} and len({r["id"] for r in grid}) == 15
    assert all(r["setting"] == "grid" and len(r["examples"]) == 5 for r in grid)


def test_paper_sampling_is_deterministic_and_seeded(data, tmp_path):
    first = _export(data, "PP-1", "test_ood", tmp_path / "a.jsonl", selection="paper", seed=42)
    again = _export(data, "PP-1", "test_ood", tmp_path / "b.jsonl", selection="paper", seed=42)
    other = _export(data, "PP-1", "test_ood", tmp_path / "c.jsonl", selection="paper", seed=43)
    assert first == again and [r["examples"] for r in first] != [r["examples"] for r in other]
    sampled = _export(data, "PP-1", "test_ood", tmp_path / "d.jsonl", per_experiment=6, seed=1)
    assert len(sampled) == 6 and all("selection" not in r for r in sampled)  # cogen's rule, on 6 drawn rows
    assert sampled == _export(data, "PP-1", "test_ood", tmp_path / "e.jsonl", per_experiment=6, seed=1)


@pytest.mark.parametrize(("config", "split", "options", "message"), [
    ("PP-tiny", "test", {"selection": "paper"}, "distinct depth-1"),
    ("PP-1", "test_ood", {"selection": "paper", "per_experiment": 16}, "16 prompts asked"),
    ("PP-grid", "test", {"selection": "paper"}, "out-of-domain split only"),
    ("PP-1", "train", {"selection": "paper"}, "not 'train'"),
    ("PP-1", "test", {"selection": "nearest"}, "selection must be one of"),
])
def test_impossible_selections_are_clear_errors(data, tmp_path, config, split, options, message):
    with pytest.raises(EvalError, match=message):
        export_prompts(data, config, split, tmp_path / "x.jsonl", **options)


def test_cli_paper_export_and_the_papers_count(data, tmp_path):
    prompts = tmp_path / "p.jsonl"
    result = runner.invoke(app, ["prompts", "export", "-d", str(data), "-c", "PP-2", "-s", "test_ood", "--selection",
                                 "paper", "--per-experiment", "10", "--seed", "42", "-o", str(prompts)])
    assert result.exit_code == 0, result.output
    assert "wrote 10 prompts" in result.stdout
    answers = {r["id"]: r["output"] for r in read_split(data, "PP-2", "test_ood").table.to_pylist()}
    ids = [json.loads(line)["id"] for line in prompts.read_text().splitlines()]
    replies = tmp_path / "r.jsonl"  # 2 unparsable, 5 right, 3 wrong
    replies.write_text("".join(json.dumps({"id": name, "reply": "no idea" if k < 2 else
                                           json.dumps(answers[name] if k < 7 else [[0]])}) + "\n"
                               for k, name in enumerate(ids)))
    parse_replies(replies, tmp_path / "preds.jsonl")
    metrics = evaluate(data, "PP-2", "test_ood", tmp_path / "preds.jsonl")
    counts = valid_counts(metrics, prompted=10)["grid_accuracy_valid"]
    assert (counts["k"], counts["n_valid"], counts["n"]) == (5, 8, 10)
    assert counts["paper"] == 5 / 8 and counts["cogen"] == 5 / 10
    sampled = evaluate(data, "PP-2", "test_ood", tmp_path / "preds.jsonl", rows=ids)  # only the prompted rows
    assert sampled["n"] == 10 and sampled["grid_accuracy"] == 0.5 and sampled["grid_accuracy_valid"] == 5 / 8
    assert sampled["format_errors"]["reasons"] == {"null": 2} and metrics["format_errors"]["reasons"]["missing"] == 5
    with pytest.raises(EvalError, match="none of the 1 requested rows"):
        evaluate(data, "PP-2", "test_ood", tmp_path / "preds.jsonl", rows=["PP-2-test-0"])
    result = runner.invoke(app, ["eval", "-d", str(data), "-c", "PP-2", "-p", str(tmp_path / "preds.jsonl"),
                                 "--prompts", str(prompts), "--no-breakdown", "--json-out", str(tmp_path / "m.json")])
    assert result.exit_code == 0, result.output
    lines = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in result.stdout.splitlines()
             if line.count("│") == 3}
    assert lines["grid_accuracy: k / n_valid (papers)"] == "5 / 8" and lines["grid_accuracy: k / n (cogen)"] == "5 / 10"
    assert json.loads((tmp_path / "m.json").read_text())["valid_counts"]["grid_accuracy_valid"]["k"] == 5


@pytest.fixture(scope="module")
def carc(tiny_carc) -> Path:
    """The shared tiny Compositional-ARC build (conftest.py; read-only)."""
    return tiny_carc


def test_carc_text_and_image_prompts_with_the_no_code_line(carc, tmp_path):
    plain = _export(carc, "carc-3shot-1860", "test", tmp_path / "plain.jsonl")
    images = tmp_path / "images"
    result = runner.invoke(app, ["prompts", "export", "-d", str(carc), "-c", "carc-3shot-1860", "-s", "test",
                                 "--images", str(images), "--no-code", "--selection", "paper", "-o",
                                 str(tmp_path / "mm.jsonl")])
    assert result.exit_code == 0, result.output
    rich = [json.loads(line) for line in (tmp_path / "mm.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rich] == [r["id"] for r in plain] and len(rich) == read_split(
        carc, "carc-3shot-1860", "test").table.num_rows  # one query per episode
    record = rich[0]
    png = Path(record["image"])
    assert png.parent == images and png.read_bytes().startswith(b"\x89PNG") and read_png_text(png) == {}
    assert "image comes with this prompt: it shows the 3 study example pairs" in record["prompt"]
    assert NO_CODE_LINE in record["prompt"] and NO_CODE_LINE not in plain[0]["prompt"]
    assert "image" not in plain[0]["prompt"] and record["no_code"] is True
    assert record["row"] + "-q0" == record["id"]
    stripped = record["prompt"].replace(NO_CODE_LINE + "\n", "")
    stripped = stripped.split("An image comes")[0] + "Input:" + stripped.split("\n\nInput:", 1)[1]
    assert stripped == plain[0]["prompt"]  # nothing else changes


def test_carc_image_draws_the_study_pairs_and_the_query(carc, tmp_path):
    import struct

    from cogen.families.carc.prompt_images import episode_image

    row = read_split(carc, "carc-systematicity-1860", "test").table.slice(0, 1).to_pylist()[0]
    png = episode_image(row["study_inputs"], row["study_outputs"], row["query_inputs"][0])
    width, height = struct.unpack(">II", png[16:24])
    three = episode_image(row["study_inputs"][:3], row["study_outputs"][:3], row["query_inputs"][0])
    assert struct.unpack(">II", three[16:24])[0] < width  # twelve pairs side by side are wider than three
    assert height > 2 * 100  # a study band (input above output) and a query band


def test_carc_paper_selection_refuses_all_queries(carc, tmp_path):
    with pytest.raises(EvalError, match="one query per episode"):
        export_prompts(carc, "carc-systematicity-1860", "test", tmp_path / "x.jsonl", selection="paper", queries="all")
    result = runner.invoke(app, ["prompts", "export", "-d", str(carc), "-c", "carc-systematicity-1860", "-s", "test",
                                 "--per-experiment", "3", "-o", str(tmp_path / "y.jsonl")])
    assert result.exit_code != 0 and "does not apply" in str(result.exception)
