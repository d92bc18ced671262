"""Spec files: every packaged spec validates; bad specs fail with file, line, field and fix."""

from __future__ import annotations

import textwrap

import pytest

from cogen.errors import SpecError, UnknownNameError
from cogen.families.cogitao.schema import OOD_SPLITS, experiment_from_dict
from cogen.specs import load_spec, locate_configs, packaged_specs, parse_spec_text

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


@pytest.mark.parametrize("variant,prefix", [("", ""), ("as_run/", "as-run-")])
def test_paper_studies_have_five_experiments_and_paper_sizes(variant, prefix):
    for name in ("c1", "c2", "c3", "g1", "g2", "g3", "g4", "g5"):
        setting = load_spec(variant + name)
        assert [e.name for e in setting.experiments] == [f"{prefix}{name.upper()}-{i}" for i in range(1, 6)]
        assert setting.variant == ("as-run" if prefix else "paper-text")
        for experiment in setting.experiments:
            assert dict(experiment.sizes) == {"train": 100_000, "validation": 1000, "test": 1000,
                                              "validation_ood": 1000, "test_ood": 1000}


@pytest.mark.parametrize("name,prefix", [("s", ""), ("as_run/s", "as-run-")])
def test_sample_efficiency_spec_has_four_train_sizes_per_transformation(name, prefix):
    setting = load_spec(name)
    sizes = {e.name: e.size("train") for e in setting.experiments}
    assert len(sizes) == 40
    assert {sizes[f"{prefix}S-{x}-1"] for x in range(1, 5)} == {100, 1000, 10_000, 100_000}
    assert all(not set(e.splits()) & set(OOD_SPLITS) for e in setting.experiments)


def test_every_packaged_config_name_is_unique_and_as_run_ones_say_so():
    """`cogen build --config C1-1` must name one config of one packaged spec."""
    owners: dict[str, list[str]] = {}
    for name in packaged_specs():
        setting = load_spec(name)
        for config in setting.configs:
            owners.setdefault(config.name, []).append(name)
            if name.startswith("as_run/"):
                assert config.name.startswith("as-run-") and setting.variant == "as-run", (name, config.name)
    assert {config: specs for config, specs in owners.items() if len(specs) > 1} == {}
    assert locate_configs("C1-1")[0].name == "c1.yaml"
    assert locate_configs("as-run-C1-1")[0].as_posix().endswith("split_specs/as_run/c1.yaml")
    assert locate_configs("as_run/c3") == (packaged_specs()["as_run/c3"], None)


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


def test_sampling_keys_default_to_reject_and_difficulty_and_override_per_experiment():
    setting = parse(BASE)
    domain = setting.experiment("T-1").in_domain
    assert (domain.degenerate, domain.balance, setting.variant) == ("reject", (), "custom")
    text = BASE.replace("seed: 1\n", "seed: 1\ndegenerate: keep\nbalance: none\nvariant: as-run\n").replace(
        "  T-1:\n", "  T-1:\n    degenerate: reject\n").replace("count: [2, 2]", "count: [1, 3]")
    setting = parse(text)
    experiment = setting.experiment("T-1")
    assert setting.variant == "as-run" and experiment.in_domain.degenerate == "reject"
    assert experiment.in_domain.balance == ()


def test_balance_resolves_to_what_each_domain_can_balance():
    """The count where it varies; heights only out of domain, and only when the experiment shifts sizes."""
    g1, g3, g5, c1 = (load_spec(name) for name in ("g1", "g3", "g5", "c1"))
    assert g1.experiment("G1-5").in_domain.balance == ("count",) == g1.experiment("G1-5").out_of_domain.balance
    assert (g3.experiment("G3-1").in_domain.balance, g3.experiment("G3-1").out_of_domain.balance) == ((), ("size",))
    assert g5.experiment("G5-1").out_of_domain.balance == ("count", "size")
    assert g5.experiment("G5-5").out_of_domain.balance == ("count",)  # `balance: count` in g5.yaml
    assert all(e.in_domain.balance == () == e.out_of_domain.balance for e in c1.experiments)
    assert all(d.balance == () for e in load_spec("as_run/g5").experiments for d in (e.in_domain, e.out_of_domain))


@pytest.mark.parametrize("key,value,line,hint", [("degenerate", "rejekt", 3, "reject"), ("balance", "difficult", 3,
                                                                                          "difficulty"),
                                                  ("variant", "paper", 3, "paper-text")])
def test_unknown_sampling_value_names_file_line_field_and_fix(key, value, line, hint):
    message = error_of(BASE.replace("seed: 1\n", f"seed: 1\n{key}: {value}\n"))
    assert f"t.yaml, line {line}, field {key}" in message and f"unknown value {value!r}" in message
    assert f"did you mean {hint!r}" in message and "use one of" in message
    nested = error_of(BASE.replace("  T-1:\n", f"  T-1:\n    {key}: {value}\n"))
    assert key == "variant" or f"line 9, field experiments.T-1.{key}" in nested


def test_identity_sequence_is_refused_unless_degenerate_samples_are_kept():
    text = BASE.replace("[[translate_up], [rot90]]", "[[translate_up], [mirror_horizontal, mirror_horizontal]]")
    message = error_of(text)
    assert "t.yaml, line 9, field experiments.T-1.in_domain.sequences[1]" in message
    assert "is the identity" in message and "degenerate: keep" in message
    assert parse(text.replace("seed: 1\n", "seed: 1\ndegenerate: keep\n"))


def test_always_identity_follows_the_registry_algebra():
    from cogen.families.cogitao.spec import always_identity

    assert always_identity(["rot90"] * 4) and not always_identity(["rot90"] * 3)
    assert always_identity(["pad_shape", "crop_contours"]) and not always_identity(["crop_contours", "pad_shape"])
    assert always_identity(["translate_up", "mirror_vertical", "mirror_vertical", "translate_down"])
    assert always_identity(["change_shape_color"] * 9) and not always_identity(["change_shape_color"] * 8)


def test_a_balanced_count_must_fit_at_its_highest():
    text = BASE.replace("height: [10, 10], width: [10, 10]", "height: [5, 5], width: [5, 5]").replace(
        "count: [2, 2]", "count: [2, 10]")
    message = error_of(text)
    assert "10 objects cannot fit" in message and "balance: none" in message and "line 5" in message
    assert parse(text.replace("seed: 1\n", "seed: 1\nbalance: none\n"))


def test_manifests_of_generator_version_1_read_back_as_kept_and_unbalanced():
    import json
    from dataclasses import asdict

    data = json.loads(json.dumps(asdict(load_spec("g5").experiment("G5-1"))))
    for part in ("in_domain", "out_of_domain"):
        del data[part]["degenerate"], data[part]["balance"]
    old = experiment_from_dict(data)
    assert (old.in_domain.degenerate, old.out_of_domain.balance) == ("keep", ())


@pytest.mark.parametrize("name", ["c1", "c2", "c3", "g1", "g3", "g4"])
def test_rgb_specs_are_the_paper_specs_drawn_as_images(name):
    """split_specs/rgb/: the paper-text spec, renamed and rendered (G2 and G5 left out, as the paper does)."""
    from dataclasses import replace

    from cogen.render import RenderSettings

    source, rgb = load_spec(name), load_spec(f"rgb/{name}")
    assert rgb.seed == source.seed and rgb.variant == source.variant
    assert [e.name for e in rgb.experiments] == [f"rgb-{e.name}" for e in source.experiments]
    for plain, drawn in zip(source.experiments, rgb.experiments, strict=True):
        assert drawn.render == RenderSettings(size=128)
        assert replace(drawn, name=plain.name, render=None) == plain
    assert not {"rgb/g2", "rgb/g5"} & set(packaged_specs())


def test_the_sequential_spec_is_c1_with_frames():
    from dataclasses import replace

    source, sequential = load_spec("c1"), load_spec("c1_sequential")
    for plain, framed in zip(source.experiments, sequential.experiments, strict=True):
        assert framed.name == f"seq-{plain.name}" and framed.frames
        assert replace(framed, name=plain.name, output=()) == plain
