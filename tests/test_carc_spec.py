"""``family: carc`` spec files: the packaged ones validate with paper sizes; bad ones fail with
file, line, field and a fix."""

from __future__ import annotations

import textwrap

import pytest

from cogen.errors import SpecError, UnknownNameError
from cogen.families.carc.spec import CarcSetting, setting_from_dict
from cogen.specs import load_spec, packaged_specs, parse_spec_text

BASE = """\
setting: t
family: carc
seed: 1
episodes: 100
transformations:
  translation: {direction: [x, y], step_size: [1]}
  mirror: {direction: [x, y]}
  rotation: {rotation_type: [0, 8]}
  set_color: {new_color: [1, 2]}
  grow: {direction: [-x, -y]}
split: {seeds: [1860]}
"""
CARC_SPECS = [name for name, path in packaged_specs().items() if "family: carc" in path.read_text()]


def error_of(text: str) -> str:
    with pytest.raises(SpecError) as caught:
        parse_spec_text(textwrap.dedent(text), "t.yaml")
    return str(caught.value)


def test_both_packaged_specs_exist_with_paper_sizes():
    assert sorted(CARC_SPECS) == ["carc", "carc_extended"]
    for name in CARC_SPECS:
        setting = load_spec(name)
        assert isinstance(setting, CarcSetting) and setting.episodes == 100_000
        assert setting.split.seeds == (1860, 1870, 1880, 1890) and setting.split.held_out == 2
        layout = setting.layout
        assert (layout.primitives, layout.compositions, layout.queries, layout.shots) == (2, 2, 10, 3)
        assert setting.rotation == "paper" and setting.degenerate == "reject" and setting.queries == "reference"


def test_config_names():
    names = [c.name for c in load_spec("carc").configs]
    assert names[:2] == ["carc-episodes", "carc-systematicity-1860"]
    assert {"carc-3shot-1890", "carc-static"} <= set(names) and len(names) == 10
    assert [c.name for c in load_spec("carc_extended").configs][0] == "carc-extended-episodes"


def test_parameter_sets_match_the_paper():
    variants = {v.label for v in load_spec("carc").variants()}
    assert variants == {"translation direction_x step_size_1", "translation direction_y step_size_1",
                        "mirror direction_x", "mirror direction_y",
                        "rotation rotation_type_0", "rotation rotation_type_8",
                        "set_color new_color_1", "set_color new_color_2", "grow direction_-x", "grow direction_-y"}
    extended = load_spec("carc_extended").variants()
    assert sum(v.name == "translation" for v in extended) == 8 and sum(v.name == "grow" for v in extended) == 4
    assert sum(v.name == "set_color" for v in extended) == 4


def test_scaling_only_and_seed():
    setting = load_spec("carc").scaled(0.002).only(["carc-systematicity-1870"]).with_seed(7)
    assert setting.episodes == 200 and setting.split.min_label_count == 10 and setting.seed == 7
    assert [c.name for c in setting.configs] == ["carc-systematicity-1870"]
    with pytest.raises(UnknownNameError, match="did you mean"):
        setting.only(["carc-systematicity-1869"])


def test_round_trip_through_the_manifest_dict():
    setting = load_spec("carc_extended")
    again = setting_from_dict(setting.to_dict())
    assert again.to_dict() == setting.to_dict() and again.variants() == setting.variants()
    from cogen.families.carc.build import CarcBuilder

    assert CarcBuilder(setting).fingerprint(setting.configs[0]) == CarcBuilder(again).fingerprint(again.configs[0])


def test_the_query_mode_defaults_to_the_reference_and_old_manifests_read_as_distinct():
    assert parse_spec_text(BASE, "t.yaml").queries == "reference"
    assert parse_spec_text(BASE + "queries: distinct\n", "t.yaml").queries == "distinct"
    data = load_spec("carc").to_dict()
    assert data["queries"] == "reference"
    del data["queries"]  # manifests of generator 1 have no such key; their episodes were the distinct mode's
    assert setting_from_dict(data).queries == "distinct"


@pytest.mark.parametrize("change, expected", [
    (("episodes: 100", "episodes: 100\nepisode: 3"), "line 5, field episode: unknown key 'episode'"),
    (("  mirror: {direction: [x, y]}\n  rotation: {rotation_type: [0, 8]}",
      "  rotation: {rotation_type: [0, 8]}\n  mirror: {direction: [x, y]}"), "reference's order"),
    (("step_size: [1]", "step_size: [0]"), "line 6, field transformations.translation.step_size[0]: 0 is not a value"),
    (("new_color: [1, 2]", "new_color: [1, 1]"), "listed twice"),
    (("rotation_type: [0, 8]", "rotation_type: [0, 3]"), "allowed: 0, 1, 8"),
    (("grow: {direction: [-x, -y]}", "grow: {direction: [-x], size: 2}"), "unknown key 'size'"),
    (("seed: 1", "seed: 1\nrotation: sideways"), "field rotation: unknown value 'sideways'"),
    (("seed: 1", "seed: 1\nqueries: iid"),
     "field queries: unknown value 'iid'\n  fix: use one of: reference, distinct"),
    (("seed: 1", "seed: 1\nlayout: {shots: 0}"), "3shot configs need level-2 shots"),
    (("seed: 1", "seed: 1\nlayout: {queries: 45, shots: 10}"), "at most 50"),
    (("split: {seeds: [1860]}", "split: {seeds: [1860, 1860]}"), "seed 1860 is listed twice"),
    (("split: {seeds: [1860]}", "split: {seeds: [1860], configs: [oneshot]}"), "unknown value 'oneshot'"),
    (("episodes: 100", "episodes: 0"), "below the minimum 1"),
])
def test_bad_specs_fail_with_location_and_fix(change, expected):
    old, new = change
    assert old in BASE
    assert expected in error_of(BASE.replace(old, new))


def test_missing_transformation_is_named():
    text = BASE.replace("  grow: {direction: [-x, -y]}\n", "")
    assert "missing required key 'grow'" in error_of(text)
