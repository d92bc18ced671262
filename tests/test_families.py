"""The family registry: every family it lists builds, verifies, scores and prompts a tiny spec end to end.

A new family fails here until it has a tiny spec below and every role of its record works. A fourth
family made in ``tests/toy_family/`` alone (the checklist of ``docs/architecture.md``) is built,
verified, scored, prompted and carded without a line of cogen's generic code knowing it.
"""

from __future__ import annotations

import inspect
import json
import re
from types import MappingProxyType

import pytest

from cogen.card.preview import caption_columns, read_bands
from cogen.errors import EvalError, UnknownNameError
from cogen.eval import baseline_records, evaluate, expected_ids, write_baseline, write_predictions
from cogen.family import FAMILIES, OPTIONAL_ROLES, ROLES, Builder, Evaluator, family
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
    from cogen.card.family_card import FamilyCard

    record = FAMILIES[name]
    for role in ROLES:
        assert record.load(role) is not None
    for role in OPTIONAL_ROLES:
        assert (record.load(role) is None) == (not getattr(record, role))
    builder = record.load("builder")
    builder_methods = {m for m in dir(Builder) if not m.startswith("_")} - {"family"}
    assert inspect.isclass(builder) and all(callable(getattr(builder, m, None)) for m in builder_methods)
    assert builder.family == name
    evaluator = record.evaluation()
    assert {m for m in dir(Evaluator) if not m.startswith("_")} <= set(dir(evaluator))
    assert "data" in inspect.signature(record.load("prompts")).parameters
    assert isinstance(record.load("card"), FamilyCard)
    assert record.title and record.description and record.column_notes.get("id")


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_the_option_help_of_a_family_names_options_it_takes(name):
    """``cogen eval`` and ``cogen prompts export`` show each family's own help for its options: an
    option a family describes is one its evaluator (or report) and prompt maker take."""
    record = FAMILIES[name]
    report = record.load("report")
    taken = set(record.evaluation().OPTIONS) | {"predictions", "markdown"}
    taken |= set(inspect.signature(report).parameters) if report else set()
    assert set(record.eval_help) <= taken
    assert set(record.prompt_help) <= set(inspect.signature(record.load("prompts")).parameters) - {"data", "split"}


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
    captions = FAMILIES[name].load("card").captions
    assert caption_columns(manifests[config]) == dict(captions), "every declared preview caption is a column"
    for band in read_bands(folder, manifests[config], split, 3):
        assert len(band.captions) == (len(band.pairs) if band.label.removeprefix(split).strip() in captions else 0)

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


@pytest.fixture
def toy(monkeypatch):
    """The family of ``tests/toy_family/`` registered for one test (``FAMILIES`` itself stays read-only)."""
    from toy_family import TOY

    import cogen.family

    monkeypatch.setattr(cogen.family, "FAMILIES", MappingProxyType({**cogen.family.FAMILIES, TOY.name: TOY}))
    return TOY


TOY_SPEC = "setting: tm\nfamily: toy\nseed: 5\nside: 4\nrows: 6\n"


def _section(card: str, title: str) -> str:
    return card.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_a_family_made_in_tests_alone_builds_verifies_scores_prompts_and_has_its_card(toy, tmp_path):
    spec = tmp_path / "toy.yaml"
    spec.write_text(TOY_SPEC)
    folder = tmp_path / "data"
    build(spec, folder, workers=1)
    checks = verify(folder, shards_per_config=2)
    assert not failed(checks) and {"mirrored outputs", "determinism"} <= {c.name for c in checks}
    assert not failed(verify(folder, regenerate=True))  # its builder rebuilds it from the manifests

    data = read_split(folder, "tm-mirror", "test")
    scores = {}
    for kind in ("target", "identity"):
        write_baseline(tmp_path / f"{kind}.jsonl", data, kind)
        scores[kind] = evaluate(folder, "tm-mirror", "test", tmp_path / f"{kind}.jsonl")["grid_accuracy"]
    assert scores["target"] == 1 > scores["identity"]
    assert export_prompts(folder, "tm-mirror", "test", tmp_path / "prompts.jsonl") == 6

    card = (folder / "README.md").read_text(encoding="utf-8")
    paper = toy.load("card").papers[0]
    assert "from **1 study**" in card and "**tm** (Toy mirrors; 1 config, `tm-mirror`)" in card
    measured = _section(card, "What the benchmark measures")
    assert re.findall(r"(?m)^- .*$", measured) == ["- **Toy mirrors (tm).** Whether a model mirrors a grid."]
    assert f"{paper.key}: *{paper.title}*" in _section(card, "Papers") and paper.bibtex in _section(card, "Citation")
    assert "Toy Mirrors" in card and "nothing held out: every grid is mirrored" in _section(card, "Configs")
    for other in FAMILIES.values():  # no other family's paper, paragraph, differences or sections
        for cited in other.load("card").papers:
            assert cited.title not in card and cited.arxiv not in card
        assert other.title not in measured
    assert "## Transformations" not in card and _section(card, "Differences from the reference implementations"
                                                         ).strip().endswith("|---|---|---|---|")


def test_a_family_without_a_stream_is_refused_by_name(toy, tmp_path):
    from cogen.errors import SpecError
    from cogen.stream import SampleStream

    spec = tmp_path / "toy.yaml"
    spec.write_text(TOY_SPEC)
    with pytest.raises(SpecError, match="Toy mirrors specs have no streams.*COGITAO samples"):
        SampleStream(spec)


@pytest.mark.parametrize("command, path", [("eval", ["eval"]), ("prompts", ["prompts", "export"])])
def test_each_family_option_shows_the_familys_own_help_after_its_title(command, path):
    """The help of a family option on the command line is what the families' records say of it."""
    import typer.main

    from cogen.cli import app

    click_command = typer.main.get_command(app)
    for name in path:
        click_command = click_command.commands[name]
    helps = {param.name: param.help or "" for param in click_command.params}
    field = "eval_help" if command == "eval" else "prompt_help"
    described = {option for record in FAMILIES.values() for option in getattr(record, field)}
    assert described and described <= set(helps)
    for record in FAMILIES.values():
        for option, text in getattr(record, field).items():
            assert f"{record.title}: {text}" in helps[option], (option, helps[option])
