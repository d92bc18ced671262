"""The family registry: every family it lists builds, verifies, scores and prompts a tiny spec end to end.

A new family fails here until it has a tiny spec below and every role of its record works.
"""

from __future__ import annotations

import inspect
import json

import pytest

from cogen.errors import EvalError, UnknownNameError
from cogen.eval import baseline_records, evaluate, expected_ids, write_baseline, write_predictions
from cogen.families import FAMILIES, ROLES, Builder, Evaluator, family
from cogen.folder import read_manifests, read_split
from cogen.llm import export_prompts
from cogen.pipeline import build
from cogen.pipeline.verify import failed, verify
from cogen.specs import parse_spec_text

#: A spec small enough to build in seconds, per family, and the split to score.
TINY_SPECS = {
    "cogitao": ("""\
setting: F
seed: 2
defaults:
  grid: {height: [6, 8], width: [6, 8]}
  objects: {count: [1, 2], where: {is_shape_fully_connected: true, rows: [1, 3], cols: [1, 3]}}
  sizes: {train: 40, validation: 6, test: 6, validation_ood: 6, test_ood: 6}
experiments:
  F-1:
    in_domain: {sequences: [[translate_up], [rot90]]}
    out_of_domain: {sequences: [[rot90, translate_up]]}
""", "test_ood"),
    "carc": ("""\
setting: fc
family: carc
seed: 4
episodes: 150
transformations:
  translation: {direction: [x, y], step_size: [1]}
  mirror: {direction: [x, y]}
  rotation: {rotation_type: [0, 8]}
  set_color: {new_color: [1, 2]}
  grow: {direction: [-x, -y]}
split: {seeds: [1860], min_label_count: 3, configs: [systematicity]}
""", "test"),
    "programs": ("""\
setting: fp
family: programs
seed: 6
functions: 12
settings: [horizontal, random]
""", "test"),
}


def test_every_family_has_a_tiny_spec():
    assert set(TINY_SPECS) == set(FAMILIES)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_role_resolves_and_keeps_its_protocol(name):
    record = FAMILIES[name]
    for role in ROLES:
        assert record.load(role) is not None
    builder = record.load("builder")
    assert isinstance(builder, type) and builder.family == name  # its shard tasks reach this family's shard writer
    builder_methods = {m for m in dir(Builder) if not m.startswith("_")} - {"family"}
    assert builder_methods <= set(dir(record.load("builder")))
    evaluator = record.evaluation()
    assert {m for m in dir(Evaluator) if not m.startswith("_")} <= set(dir(evaluator))
    assert "data" in inspect.signature(record.load("prompts")).parameters
    assert record.title and record.description and record.column_notes.get("id")


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_a_tiny_spec_builds_verifies_scores_and_prompts(name, tmp_path):
    text, split = TINY_SPECS[name]
    spec = tmp_path / "tiny.yaml"
    spec.write_text(text)
    assert parse_spec_text(text).family == name
    folder = tmp_path / "data"
    report = build(spec, folder, workers=1)
    assert report.configs and not failed(verify(folder, shards_per_config=1))
    manifests = read_manifests(folder)
    config = next(c for c, m in manifests.items() if split in m["splits"])
    assert all(m["family"] == name for m in manifests.values())
    notes = FAMILIES[name].column_notes
    assert set(manifests[config]["columns"]) <= set(notes), "every column has a note on the card"

    data = read_split(folder, config, split)
    predictions = tmp_path / "target.jsonl"
    assert write_baseline(predictions, data, "target") == len(expected_ids(data))
    metrics = evaluate(folder, config, split, predictions)
    assert metrics["family"] == name and metrics["n"] == len(expected_ids(data)) > 0
    assert metrics.get("n_valid", metrics["n"]) == metrics["n"] and not metrics["format_errors"]["total"]

    prompts = tmp_path / "prompts.jsonl"
    count = export_prompts(folder, config, split, prompts)
    records = [json.loads(line) for line in prompts.read_text().splitlines()]
    assert count == len(records) > 0 and {r["id"] for r in records} <= set(expected_ids(data))


def test_options_of_another_family_are_refused_with_the_family_named(tmp_path):
    text, split = TINY_SPECS["cogitao"]
    spec = tmp_path / "tiny.yaml"
    spec.write_text(text)
    build(spec, tmp_path / "data", workers=1)
    predictions = tmp_path / "p.jsonl"
    write_predictions(predictions, baseline_records(read_split(tmp_path / "data", "F-1", split), "identity"))
    with pytest.raises(EvalError, match="'queries' does not apply to COGITAO configs.*Compositional-ARC"):
        evaluate(tmp_path / "data", "F-1", split, predictions, queries="first")
    with pytest.raises(EvalError, match="'queries' does not apply to prompts for COGITAO"):
        export_prompts(tmp_path / "data", "F-1", split, tmp_path / "prompts.jsonl", queries="first")


def test_an_unknown_family_is_a_clear_error():
    with pytest.raises(UnknownNameError, match="(?s)unknown family 'cogitau'.*did you mean 'cogitao'"):
        family("cogitau")
    with pytest.raises(UnknownNameError, match="(?s)line 2.*family"):
        parse_spec_text("setting: x\nfamily: carcs\n", "x.yaml")
