"""Spec files: every packaged spec validates; bad specs fail with file, line, field and fix."""

from __future__ import annotations

import textwrap

import pytest

from cogen.errors import SpecError, UnknownNameError
from cogen.specs import load_spec, packaged_specs, parse_spec_text
from cogen.specs.schema import OOD_SPLITS, experiment_from_dict

BASE = """\
setting: T
seed: 1
defaults:
  grid: {height: [10, 10], width: [10, 10]}
  objects: {count: [2, 2], where: {is_shape_fully_connected: true, rows: [1, 5], cols: [1, 5]}}
  sizes: {train: 10, validation: 2, test: 2, validation_ood: 2, test_ood: 2}
experiments:
  T-1:
    in_domain: {sequences: [[translate_up], [rot90]]}
    out_of_domain: {sequences: [[translate_up, rot90]]}
"""


def parse(text: str):
    return parse_spec_text(textwrap.dedent(text), "t.yaml")


def error_of(text: str) -> str:
    with pytest.raises(SpecError) as caught:
        parse(text)
    return str(caught.value)


COGITAO_SPECS = [name for name, path in packaged_specs().items() if "family: cogitao" in path.read_text()]


@pytest.mark.parametrize("name", COGITAO_SPECS)
def test_packaged_spec_validates(name):
    setting = load_spec(name)
    assert setting.experiments
    for experiment in setting.experiments:
        assert experiment.size("train") >= 100
        if experiment.out_of_domain is not None and experiment.shift == "composition":
            held_out = experiment.out_of_domain.sequences.sequences
            assert not set(held_out) & set(experiment.in_domain.sequences.sequences)


def test_paper_studies_have_five_experiments_and_paper_sizes():
    for name in ("c1", "c2", "c3", "g1", "g2", "g3", "g4", "g5"):
        setting = load_spec(name)
        assert [e.name for e in setting.experiments] == [f"{name.upper()}-{i}" for i in range(1, 6)]
        for experiment in setting.experiments:
            assert dict(experiment.sizes) == {"train": 100_000, "validation": 1000, "test": 1000,
                                              "validation_ood": 1000, "test_ood": 1000}


def test_sample_efficiency_spec_has_four_train_sizes_per_transformation():
    setting = load_spec("s")
    sizes = {e.name: e.size("train") for e in setting.experiments}
    assert len(sizes) == 40
    assert {sizes[f"S-{x}-1"] for x in range(1, 5)} == {100, 1000, 10_000, 100_000}
    assert all(not set(e.splits()) & set(OOD_SPLITS) for e in setting.experiments)


def test_reference_leaks_are_removed_from_training():
    c1 = load_spec("c1")
    for name, held_out in (("C1-2", ("change_shape_color", "pad_right")), ("C1-3", ("crop_bottom_side", "rot90")),
                           ("C1-5", ("extend_contours_same_color", "pad_left"))):
        experiment = c1.experiment(name)
        assert held_out in experiment.out_of_domain.sequences.sequences
        assert held_out not in experiment.in_domain.sequences.sequences


def test_minimal_spec_parses_with_defaults():
    setting = parse(BASE)
    experiment = setting.experiment("T-1")
    assert experiment.in_domain.grid.height == (10, 10)
    assert experiment.out_of_domain.sequences.sequences == (("translate_up", "rot90"),)
    assert experiment.splits() == ("train", "validation", "test", "validation_ood", "test_ood")


def test_aliases_resolve_to_config_names():
    setting = parse(BASE.replace("[[translate_up], [rot90]]", "[[translate_up], [rotate_90], [change_object_color]]"))
    assert setting.experiment("T-1").in_domain.sequences.sequences == (("translate_up",), ("rot90",),
                                                                         ("change_shape_color",))


def test_unknown_key_names_line_and_valid_keys():
    message = error_of(BASE.replace("  T-1:\n", "  T-1:\n    colour: red\n"))
    assert "t.yaml, line 9" in message and "unknown key 'colour'" in message and "in_domain" in message


def test_unknown_transformation_suggests_close_match():
    with pytest.raises(UnknownNameError) as caught:
        parse(BASE.replace("[rot90]]", "[rot_90x]]"))
    assert "rot90" in caught.value.suggestions
    assert "line 9" in str(caught.value) and "rot_90x" in str(caught.value)


def test_unknown_property_suggests_close_match():
    message = str(pytest.raises(UnknownNameError, parse, BASE.replace("is_shape_fully_connected", "is_shape_fully_conected")).value)
    assert "line 5" in message and "is_shape_fully_connected" in message


def test_empty_range_is_an_error_with_a_fix():
    message = error_of(BASE.replace("height: [10, 10]", "height: [12, 10]"))
    assert "empty range" in message and "line 4" in message and "fix" in message


def test_too_many_objects_for_the_grid():
    message = error_of(BASE.replace("height: [10, 10], width: [10, 10]", "height: [5, 5], width: [5, 5]")
                       .replace("count: [2, 2]", "count: [10, 10]"))
    assert "10 objects cannot fit on a 5x5 grid" in message and "at most 9" in message


def test_held_out_sequence_in_training_is_a_leak():
    message = error_of(BASE.replace("[[translate_up], [rot90]]", "[[translate_up], [rot90], [translate_up, rot90]]"))
    assert "also an in-domain sequence" in message and "line 10" in message


def test_environment_shift_allows_shared_sequences_but_needs_a_change():
    text = BASE.replace("seed: 1\n", "seed: 1\nshift: environment\n").replace(
        "out_of_domain: {sequences: [[translate_up, rot90]]}", "out_of_domain: {sequences: [[rot90]]}")
    assert "same grid and objects" in error_of(text)
    text = text.replace("out_of_domain: {sequences: [[rot90]]}",
                        "out_of_domain: {sequences: [[rot90]], grid: {height: [12, 14], width: [12, 14]}}")
    assert parse(text).experiment("T-1").shift == "environment"


def test_preconditions_that_contradict_the_filter_are_reported():
    text = BASE.replace("is_shape_fully_connected: true", "is_shape_hollow: false").replace(
        "[[translate_up], [rot90]]", "[[fill_holes_same_color]]")
    message = error_of(text)
    assert "preconditions of fill_holes_same_color" in message and "is_shape_hollow" in message


def test_pool_with_depth_and_exclude():
    text = BASE.replace("in_domain: {sequences: [[translate_up], [rot90]]}",
                        "in_domain: {pool: [translate_up, rot90], depth: [1, 2], exclude: [[translate_up, rot90]]}")
    sequences = parse(text).experiment("T-1").in_domain.sequences
    assert sequences.count() == 2 + 4 - 1
    assert ("translate_up", "rot90") not in sequences and ("rot90", "translate_up") in sequences
    leak = BASE.replace("in_domain: {sequences: [[translate_up], [rot90]]}",
                        "in_domain: {pool: [translate_up, rot90], depth: [1, 2]}")
    assert "also an in-domain sequence" in error_of(leak)


def test_duplicate_sequence_and_duplicate_key():
    assert "listed twice" in error_of(BASE.replace("[[translate_up], [rot90]]", "[[rot90], [rot90]]"))
    assert "appears twice" in error_of(BASE + "  T-1:\n    in_domain: {sequences: [[rot90]]}\n")


def test_missing_file_and_unknown_packaged_name():
    with pytest.raises(SpecError, match="file not found"):
        load_spec("no/such/spec.yaml")
    with pytest.raises(UnknownNameError) as caught:
        load_spec("c4")
    assert "c1" in caught.value.suggestions or "c3" in caught.value.suggestions


def test_invalid_yaml_names_the_line():
    message = error_of("setting: T\nseed: [1,\n")
    assert "not valid YAML" in message and "t.yaml" in message


def test_experiment_round_trips_through_a_manifest_dict():
    import json
    from dataclasses import asdict

    for experiment in load_spec("g5").experiments + load_spec("c3").experiments:
        assert experiment_from_dict(json.loads(json.dumps(asdict(experiment)))) == experiment
