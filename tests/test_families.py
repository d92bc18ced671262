"""The family registry: every family it lists builds, verifies, scores and prompts its tiny build end to end.

Each family is found from the registry, and what these tests need of it is in its own folder (its ``testing``
role: the tiny build, the tampers; :mod:`cogen.kit.testing`), so a new family is tested here without a line
added. A family made in ``tests/toy_family/`` alone with the family kit goes through the same tests, and is also
carded and rebuilt by ``cogen verify --regenerate``, without a line of cogen's generic code knowing it.
"""

from __future__ import annotations

import inspect
import json
import re
from types import MappingProxyType

import pytest
from conftest import tiny_of

from cogen.card.preview import caption_columns, read_bands
from cogen.errors import EvalError, UnknownNameError
from cogen.eval import baseline_records, evaluate, expected_ids, write_baseline, write_predictions
from cogen.family import COMMANDS, FAMILIES, OPTIONAL_ROLES, ROLES, Builder, Evaluator, Family, family
from cogen.folder import read_manifests, read_split
from cogen.kit.testing import TinyBuild
from cogen.llm import export_prompts
from cogen.pipeline import build
from cogen.pipeline.verify import failed, verify
from cogen.specs import load_spec, parse_spec_text


def roles_keep_their_protocols(record: Family) -> None:
    """Every role of ``record`` resolves and keeps its protocol; its ``testing`` role gives a tiny build."""
    from cogen.card.family_card import FamilyCard
    from cogen.view.drawing import Viewer

    for role in ROLES:
        assert record.load(role) is not None
    for role in OPTIONAL_ROLES:
        assert (record.load(role) is None) == (not getattr(record, role))
    builder = record.load("builder")
    builder_methods = {m for m in dir(Builder) if not m.startswith("_")} - {"family"}
    assert inspect.isclass(builder) and all(callable(getattr(builder, m, None)) for m in builder_methods)
    assert builder.family == record.name
    evaluator = record.evaluation()
    assert {m for m in dir(Evaluator) if not m.startswith("_")} <= set(dir(evaluator))
    viewer = record.load("viewer")
    assert {m for m in dir(Viewer) if not m.startswith("_")} <= set(dir(viewer))
    assert "data" in inspect.signature(record.load("prompts")).parameters
    assert isinstance(record.load("card"), FamilyCard)
    assert record.title and record.description and record.column_notes.get("id")
    tiny = record.load("testing").TINY
    setting = parse_spec_text(tiny.spec) if "\n" in tiny.spec else load_spec(tiny.spec)
    assert isinstance(tiny, TinyBuild) and setting.family == record.name


def tiny_build_verifies_scores_and_prompts(record: Family, folder, tmp_path) -> None:
    """The family's tiny build (at ``folder``) verifies; its config scores 100 % with the target baseline and
    prompts every row; every column has a note and every declared caption is a column."""
    tiny = record.load("testing").TINY
    assert not failed(verify(folder, shards_per_config=1))
    manifests = read_manifests(folder)
    assert all(m["family"] == record.name for m in manifests.values())
    manifest = manifests[tiny.config]
    assert set(manifest["columns"]) <= set(record.column_notes), "every column has a note on the card"
    captions = record.load("card").captions
    assert caption_columns(manifest) == dict(captions), "every declared preview caption is a column"
    for band in read_bands(folder, manifest, tiny.split, 3):
        assert len(band.captions) == (len(band.pairs) if band.label.removeprefix(tiny.split).strip() in captions else 0)

    data = read_split(folder, tiny.config, tiny.split)
    predictions = tmp_path / "target.jsonl"
    assert write_baseline(predictions, data, "target") == len(expected_ids(data))
    metrics = evaluate(folder, tiny.config, tiny.split, predictions)
    assert metrics["family"] == record.name and metrics["n"] == len(expected_ids(data)) > 0
    assert metrics.get("n_valid", metrics["n"]) == metrics["n"] and not metrics["format_errors"]["total"]

    prompts = tmp_path / "prompts.jsonl"
    count = export_prompts(folder, tiny.config, tiny.split, prompts)
    records = [json.loads(line) for line in prompts.read_text().splitlines()]
    assert count == len(records) > 0 and {r["id"] for r in records} <= set(expected_ids(data))


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_role_resolves_and_keeps_its_protocol(name):
    roles_keep_their_protocols(FAMILIES[name])


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_the_options_a_family_declares_are_those_its_code_takes(name):
    """A family's record declares its options (name, type, default, help, checks); what it declares for
    ``eval`` is its evaluator's ``OPTIONS`` with the same defaults, what it declares for ``report`` exactly what
    its report takes (the command line reads them from the record, so --help imports no report), what it
    declares for ``prompts`` its prompt maker's keyword parameters, with the same defaults where the
    maker names one (None: the maker decides, as the declaration's default and help say)."""
    record = FAMILIES[name]
    evaluation = record.options_for("eval")
    assert {k: o.default for k, o in evaluation.items()} == dict(record.evaluation().OPTIONS)
    report = record.load("report")
    if report:
        assert set(inspect.signature(report).parameters) - {"data", "predictions", "split", "configs"} == \
            set(record.options_for("report")) <= set(evaluation)
    else:
        assert not record.options_for("report")
    maker = {k: p.default for k, p in inspect.signature(record.load("prompts")).parameters.items()
             if k not in ("data", "split")}
    prompts = record.options_for("prompts")
    assert set(prompts) == set(maker)
    assert all(maker[k] is None or maker[k] == o.default for k, o in prompts.items()), (maker, prompts)
    for option in record.options:
        assert option.help.endswith(".") and set(option.commands) <= set(COMMANDS)
        if option.default is not None:
            assert option.check(option.default) == option.default  # a default passes its own checks


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_a_tiny_build_verifies_scores_and_prompts(name, tiny_builds, tmp_path):
    tiny_build_verifies_scores_and_prompts(FAMILIES[name], tiny_builds[name], tmp_path)


def test_options_of_another_family_are_refused_with_the_family_named(tiny_cogitao, tmp_path):
    tiny = tiny_of("cogitao")
    predictions = tmp_path / "p.jsonl"
    write_predictions(predictions, baseline_records(read_split(tiny_cogitao, tiny.config, tiny.split), "identity"))
    with pytest.raises(EvalError, match="option --queries does not apply to COGITAO configs.*Compositional-ARC"):
        evaluate(tiny_cogitao, tiny.config, tiny.split, predictions, queries="first")
    with pytest.raises(EvalError, match="option --queries does not apply to COGITAO configs such as"):
        export_prompts(tiny_cogitao, tiny.config, tiny.split, tmp_path / "prompts.jsonl", queries="first")


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


@pytest.fixture
def toy_build(toy, tmp_path):
    """The toy's tiny build, in ``tmp_path``."""
    spec = tmp_path / "toy.yaml"
    spec.write_text(toy.load("testing").TINY.spec)
    build(spec, tmp_path / "data", workers=1)
    return tmp_path / "data"


def _section(card: str, title: str) -> str:
    return card.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_a_family_made_in_tests_alone_keeps_the_contract_of_every_family(toy, toy_build, tmp_path):
    from test_verify_tamper import assert_every_check_has_a_tamper, assert_only_its_check_fails

    roles_keep_their_protocols(toy)
    tiny_build_verifies_scores_and_prompts(toy, toy_build, tmp_path / "contract")
    assert_every_check_has_a_tamper("toy", toy_build)
    for config, check in toy.load("testing").TAMPERS:
        assert_only_its_check_fails("toy", toy_build, tmp_path / check, config, check)
    assert not failed(verify(toy_build, regenerate=True))  # its builder rebuilds it from the manifests


def test_a_family_made_in_tests_alone_dedups_scores_and_has_its_card(toy, toy_build, tmp_path):
    manifest = read_manifests(toy_build)["tm-mirror"]
    assert sum(len(info["regenerated"]) for info in manifest["splits"].values()) > 0  # 18 grids of 2 x 2 and 3 x 3
    assert {split: info["stats"]["accepted"] for split, info in manifest["splits"].items()} == \
        {"train": 6, "test": 6, "test_ood": 6}
    data = read_split(toy_build, "tm-mirror", "test")
    scores = {}
    for kind in ("target", "identity"):
        write_baseline(tmp_path / f"{kind}.jsonl", data, kind)
        scores[kind] = evaluate(toy_build, "tm-mirror", "test", tmp_path / f"{kind}.jsonl")["grid_accuracy"]
    assert scores["target"] == 1 > scores["identity"]

    card = (toy_build / "README.md").read_text(encoding="utf-8")
    paper = toy.load("card").papers[0]
    assert "from **1 study**" in card and "**tm** (Toy mirrors; 1 config, `tm-mirror`)" in card
    measured = _section(card, "What the benchmark measures")
    assert re.findall(r"(?m)^- .*$", measured) == ["- **Toy mirrors (tm).** Whether a model mirrors a grid.",
                                                   "- Toy mirrors configs: `train` and `test` in domain; `test_ood` out of "
                                                   "domain, held out of training."]
    assert f"{paper.key}: *{paper.title}*" in _section(card, "Papers") and paper.bibtex in _section(card, "Citation")
    assert "Toy Mirrors" in card and "larger grids out of domain (3 cells a side)" in _section(card, "Configs")
    for other in FAMILIES.values():  # no other family's paper, paragraph, differences or sections
        for cited in other.load("card").papers:
            assert cited.title not in card and cited.arxiv not in card
        assert other.title not in measured
    assert "## Transformations" not in card and "## Differences from the reference implementations" not in card
    # the generic card says only what is true of every family: no other family's concepts (issue 38)
    body = card.split("-->", 1)[1].lower()
    for concept in ("object bank", "bank.bin", "transformation", "token", "degenerate", "no-op", "re-implement",
                    "validation_ood", "exact-match"):
        assert concept not in body, concept


def test_a_family_without_a_stream_is_refused_by_name(toy, tmp_path):
    from cogen.errors import SpecError
    from cogen.stream import SampleStream

    spec = tmp_path / "toy.yaml"
    spec.write_text(toy.load("testing").TINY.spec)
    with pytest.raises(SpecError, match="Toy mirrors specs have no streams.*COGITAO samples"):
        SampleStream(spec)


@pytest.mark.parametrize("command, path", [("eval", ["eval"]), ("baseline", ["eval", "baseline"]),
                                           ("prompts", ["prompts", "export"]), ("prompts", ["prompts", "run"]),
                                           ("eval", ["prompts", "run"])])
def test_each_family_option_shows_the_familys_own_help_after_its_title(command, path):
    """Every option a family declares reaches its commands through the registry, with the family's help."""
    import typer.main

    from cogen.cli import app

    click_command = typer.main.get_command(app)
    for name in path:
        click_command = click_command.commands[name]
    params = {param.name: param for param in click_command.params}
    declared = [(record, option) for record in FAMILIES.values() for option in record.options_for(command).values()]
    assert declared
    for record, option in declared:
        assert option.option in params[option.name].opts
        if path != ["prompts", "run"] or command == "prompts" or option.name not in record.options_for("prompts"):
            assert f"{record.title}: {option.help}" in params[option.name].help, (option.name, params[option.name].help)
