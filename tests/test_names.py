"""A config name is a name, never a path: every attack is refused where the spec is read, and
nothing cogen writes can land outside the output folder (issue 26, item 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cogen.errors import BuildError, CogenError, SpecError
from cogen.folder import config_dir, journal_path, manifest_path, preview_path
from cogen.folder.layout import inside
from cogen.folder.names import NAME_MAX, name_problem
from cogen.specs import parse_spec_text

COGITAO = """\
setting: T
seed: 3
defaults:
  grid: {{height: [6, 8], width: [6, 8]}}
  objects: {{count: [1, 2], where: {{is_shape_fully_connected: true, rows: [1, 3], cols: [1, 3]}}}}
  sizes: {{train: 20, validation: 5, test: 5}}
experiments:
  {first}:
    in_domain: {{sequences: [[translate_up], [rot90]]}}
  {second}:
    in_domain: {{sequences: [[change_shape_color]]}}
"""

ATTACKS = {
    "absolute path": ('"/tmp/victim"', "the character '/'"),
    "parent folder": ('"../../escaped"', "the character '/'"),
    "dot dot": ('".."', "starts with the character '.'"),
    "separator": ('"a/b"', "the character '/'"),
    "backslash": ('"a\\\\b"', "the character '\\\\'"),
    "empty": ('""', "the name is empty"),
    "very long": ("x" * (NAME_MAX + 1), f"more than {NAME_MAX}"),
    "cyrillic look-alike": ("С1-1", "U+0421"),  # a Cyrillic Es, not a Latin C
    "newline": ('"C1\\n1"', "U+000A"),
    "space": ('"C1 1"', "U+0020"),
    "hidden": ('".C1"', "starts with the character '.'"),
    "null": ("null", "a name must be text"),
    "number": ("11", "a name must be text"),
}


def spec(first: str, second: str = "T-2") -> str:
    return COGITAO.format(first=first, second=second)


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_every_name_attack_is_refused_with_file_line_name_and_rule(attack):
    name, rule = ATTACKS[attack]
    with pytest.raises(SpecError) as caught:
        parse_spec_text(spec(name), "attack.yaml")
    message = str(caught.value)
    assert "attack.yaml, line 8" in message  # the line of the experiment's key
    assert "experiment name" in message and rule in message
    assert "ASCII letters, digits" in message  # the rule, stated in the fix


def test_names_that_differ_only_in_case_are_refused():
    with pytest.raises(SpecError, match=r"line 10.*config names 'T-1' and 't-1' differ only in upper and lower case"):
        parse_spec_text(spec("T-1", "t-1"), "case.yaml")


def test_good_names_are_accepted():
    for name in ("C1-1", "carc-systematicity-1860", "a.b_c-1", "x" * NAME_MAX, "11a"):
        assert name_problem(name) is None
        assert [e.name for e in parse_spec_text(spec(name)).configs] == [name, "T-2"]


@pytest.mark.parametrize("family,body", [
    ("carc", "setting: {name}\nfamily: carc\nseed: 1\nepisodes: 10\ntransformations: {{}}\n"),
    ("programs", "setting: {name}\nfamily: programs\nseed: 1\nfunctions: 10\nsettings: [horizontal]\n"),
])
def test_a_prefix_of_config_names_obeys_the_rule_too(family, body):
    with pytest.raises(SpecError, match=r"setting name '\.\./\.\./escape' cannot be used"):
        parse_spec_text(body.format(name='"../../escape"'), f"{family}.yaml")


def test_a_prefix_that_makes_too_long_names_is_refused():
    text = "setting: {name}\nfamily: programs\nseed: 1\nfunctions: 10\nsettings: [horizontal]\n".format(name="p" * 60)
    with pytest.raises(SpecError, match=r"line 1, field setting: config name .p{60}-horizontal. cannot be used.*more than 64"):
        parse_spec_text(text, "long.yaml")


def test_a_build_of_an_attack_spec_writes_nothing_anywhere(tmp_path):
    from cogen.pipeline import build

    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    attack = tmp_path / "spec.yaml"
    attack.write_text(spec('"../../escaped"'))
    with pytest.raises(SpecError):
        build(attack, tmp_path / "a" / "b" / "out", workers=1)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == [*before, Path("spec.yaml")]


@pytest.mark.parametrize("where", [manifest_path, preview_path, journal_path, config_dir])
@pytest.mark.parametrize("name", ["../x", "/etc/passwd", "a/b", "..", ""])
def test_no_path_is_made_from_a_hostile_name(tmp_path, where, name):
    with pytest.raises(BuildError, match="cannot be used"):
        where(tmp_path, name)


@pytest.mark.parametrize("relpath", ["../x", "/etc/passwd", "data/../../x", ".", ""])
def test_a_path_outside_the_folder_is_refused(tmp_path, relpath):
    with pytest.raises(BuildError, match="not a path inside the dataset folder"):
        inside(tmp_path, relpath)
    assert inside(tmp_path, "data/C1-1/../C1-2/x.parquet") == tmp_path / "data/C1-2/x.parquet"


def test_a_store_never_writes_outside_its_folder(tmp_path):
    from cogen.pipeline.stores import LocalStore

    store = LocalStore(tmp_path / "out")
    with pytest.raises(BuildError):
        store.write("../victim.parquet", b"data")
    with pytest.raises(BuildError):
        store.remove("../../victim")
    assert not (tmp_path / "victim.parquet").exists()


def test_a_hostile_manifest_name_is_refused_by_the_readers(tmp_path):
    from cogen.pipeline.verify import verify

    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "x.json").write_text(json.dumps({"config": "../../evil", "splits": {}}))
    with pytest.raises(CogenError, match="cannot be used"):
        verify(tmp_path)
    assert sorted(p.name for p in tmp_path.parent.iterdir() if p.name == "evil") == []
