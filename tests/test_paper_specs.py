"""The paper-text specs say what the COGITAO paper says, and the as-run specs what the authors ran.

Every sequence list of ``split_specs/{c1,c2,c3}.yaml`` is derived here from the paper's words,
transcribed with their line numbers in ``tests/fixtures/cogitao_paper_experiments.yaml``; a
sequence the paper names may be missing from a spec only when the registry's algebra makes it the
identity (no sample survives ``degenerate: reject``) or when a comment of the spec names it and
says why. Grids, object counts, sizes and kinds of EnvGen and the sample-efficiency study are
compared the same way.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
import yaml

from cogen.engine import resolve
from cogen.families.cogitao.spec import always_identity
from cogen.specs import load_spec, packaged_specs

PAPER = yaml.safe_load((Path(__file__).parent / "fixtures" / "cogitao_paper_experiments.yaml").read_text())


def names(items) -> tuple[str, ...]:
    return tuple(resolve(name).name for name in items)


def paper_lists(setting: str, k: int) -> tuple[list, list]:
    """The (training, held-out) sequences the paper's text gives experiment ``setting-k``."""
    experiment = PAPER["compgen"]["experiments"][k]
    atomics = names(experiment["transformations"]["names"])
    held_out = [names(s) for s in experiment["held_out"]["sequences"]]
    pairs = list(itertools.product(atomics, repeat=2))
    if setting == "C1":
        return [(a,) for a in atomics] + [p for p in pairs if p not in held_out], held_out
    if setting == "C2":
        return [p for p in pairs if p not in held_out], held_out
    return [(a,) for a in atomics] + pairs, list(itertools.product(atomics, repeat=3))


def commented(spec: str) -> str:
    """Every comment of a packaged spec file, as one text."""
    lines = packaged_specs()[spec].read_text().splitlines()
    return "\n".join(line.split("#", 1)[1] for line in lines if "#" in line)


def check_departures(spec: str, expected: list, actual: tuple) -> None:
    """``actual`` holds nothing the paper does not name, and misses only explained sequences."""
    assert set(actual) <= set(expected), set(actual) - set(expected)
    comments = commented(spec)
    for sequence in set(expected) - set(actual):
        assert f"[{', '.join(sequence)}]" in comments, f"{spec}: {list(sequence)} left out without a comment"
        # A spec drops a sequence for a stated reason: the identity, or no sample can exist.
        reason = re.search(re.escape(f"[{', '.join(sequence)}]") + r"[^\n]*left out: ([^\n]+)", comments)
        assert reason, f"{spec}: say why {list(sequence)} is left out"
        assert always_identity(sequence) == ("identity" in reason.group(1))


@pytest.mark.parametrize("setting", ["C1", "C2", "C3"])
def test_compgen_sequence_lists_follow_the_paper(setting):
    spec = load_spec(setting.lower())
    assert [e.name for e in spec.experiments] == [f"{setting}-{k}" for k in range(1, 6)]
    for k, experiment in enumerate(spec.experiments, 1):
        train, held_out = paper_lists(setting, k)
        check_departures(setting.lower(), train, experiment.in_domain.sequences.sequences)
        check_departures(setting.lower(), held_out, experiment.out_of_domain.sequences.sequences)
    dropped = {seq for k, e in enumerate(spec.experiments, 1) for seq in
               set(paper_lists(setting, k)[0]) - set(e.in_domain.sequences.sequences)}
    assert all(always_identity(seq) for seq in dropped)  # training departs only where it must


def test_compgen_environment_follows_the_paper():
    compgen = PAPER["compgen"]
    for setting in ("c1", "c2", "c3"):
        for experiment in load_spec(setting).experiments:
            for domain in (experiment.in_domain, experiment.out_of_domain):
                assert domain.grid.height == (compgen["grid"],) * 2 == domain.grid.width
                assert domain.objects.count == (compgen["objects"],) * 2
                where = dict(domain.objects.where)
                assert where["rows"] == (1, compgen["max_side"]) == where["cols"]
                assert where["is_shape_fully_connected"] is True


def test_c3_holds_out_every_triple_but_the_impossible_one():
    spec = load_spec("c3")
    counts = {e.name: len(e.out_of_domain.sequences.sequences) for e in spec.experiments}
    assert counts == {"C3-1": 27, "C3-2": 27, "C3-3": 27, "C3-4": 26, "C3-5": 27}
    assert ("crop_contours",) * 3 not in spec.experiment("C3-4").out_of_domain.sequences.sequences


def where_of(domain) -> dict:
    return dict(domain.objects.where)


@pytest.mark.parametrize("setting", ["G1", "G2", "G3", "G4", "G5"])
def test_envgen_follows_the_paper(setting):
    paper = PAPER["envgen"]["settings"][setting]
    transformations = names(PAPER["envgen"]["transformations"]["names"])
    spec = load_spec(setting.lower())
    for experiment, transformation in zip(spec.experiments, transformations, strict=True):
        for part in ("in_domain", "out_of_domain"):
            domain = getattr(experiment, part)
            facts = {**{k: v for k, v in paper.items() if k not in ("in_domain", "out_of_domain", "line")},
                     **paper.get(part, {})}
            assert domain.sequences.sequences == ((transformation,),)
            where = where_of(domain)
            if "grid" in facts:
                assert domain.grid.height == tuple(facts["grid"]) == domain.grid.width, (experiment.name, part)
            if "count" in facts:
                assert domain.objects.count == tuple(facts["count"]), (experiment.name, part)
            if "size" in facts:
                assert where["rows"] == tuple(facts["size"]) == where["cols"], (experiment.name, part)
            if "symmetric" in facts:
                key = "is_shape_symmetric" if facts["symmetric"] else "is_shape_asymmetric"
                assert where[key] is True
                assert where["is_shape_evenly_colored"] is facts["single_colour"]


def test_sample_efficiency_follows_the_paper():
    paper = PAPER["sample_efficiency"]
    spec = load_spec("s")
    transformations = names(paper["transformations"]["names"])
    for experiment in spec.experiments:
        x, i = map(int, experiment.name.split("-")[1:])
        assert experiment.in_domain.sequences.sequences == ((transformations[i - 1],),)
        assert experiment.size("train") == paper["train_sizes"]["values"][x - 1]
        assert experiment.size("test") == paper["test_size"]["value"]
        domain = experiment.in_domain
        assert domain.grid.height == (paper["grid"],) * 2 and domain.objects.count == (paper["objects"],) * 2
        assert where_of(domain)["rows"] == (1, paper["max_side"]) == where_of(domain)["cols"]


@pytest.mark.parametrize("spec,expected", [
    ("c3", {"C3-1": "5 of the 27", "C3-2": "every one of the 27", "C3-4": "every one of the 26"}),
    ("as_run/c3", {f"as-run-C3-{k}": "6 of the 16" for k in range(1, 6)})])
def test_the_card_counts_held_out_triples_with_an_untrained_pair(spec, expected):
    """C3 tests one level deeper; the card says how many held-out triples also hold an unseen pair."""
    import json
    from dataclasses import asdict

    from cogen.families.cogitao.card import cogitao_shift

    setting = load_spec(spec)
    for name, text in expected.items():
        manifest = {"family": "cogitao", "spec": json.loads(json.dumps(asdict(setting.experiment(name))))}
        shift = cogitao_shift(manifest)
        assert text in shift, shift
    c31 = cogitao_shift({"spec": json.loads(json.dumps(asdict(load_spec("c3").experiment("C3-1"))))})
    assert "`mirror_horizontal → mirror_horizontal` (the identity)" in c31


def test_as_run_specs_reproduce_the_authors_conditions():
    """The paper-era code: 15x15 C1/C2, one held-out order, another experiment 4, G3 at most 4x4 then
    6-8, G4 without a size limit, G5-5 on 17-20 grids with 3 objects; no-ops kept, nothing balanced."""
    c1, c3, g3, g4, g5 = (load_spec(f"as_run/{name}") for name in ("c1", "c3", "g3", "g4", "g5"))
    assert c1.experiment("as-run-C1-1").in_domain.grid.height == (15, 15)
    assert c1.experiment("as-run-C1-1").out_of_domain.sequences.sequences == (("translate_up", "rot90"),)
    assert ("mirror_horizontal", "mirror_horizontal") in c1.experiment("as-run-C1-1").in_domain.sequences.sequences
    assert set(c1.experiment("as-run-C1-4").in_domain.sequences.transforms()) == {
        "extend_contours_different_color", "mirror_horizontal", "translate_down"}
    assert [len(e.out_of_domain.sequences.sequences) for e in c3.experiments] == [16] * 5
    assert where_of(g3.experiment("as-run-G3-1").in_domain)["rows"] == (1, 4)
    assert where_of(g3.experiment("as-run-G3-1").out_of_domain)["rows"] == (6, 8)
    assert "rows" not in where_of(g4.experiment("as-run-G4-1").in_domain)
    assert g5.experiment("as-run-G5-5").out_of_domain.objects.count == (3, 3)
    assert g5.experiment("as-run-G5-5").out_of_domain.grid.height == (17, 20)
    for name in packaged_specs():
        if name.startswith("as_run/"):
            for experiment in load_spec(name).experiments:
                for domain in filter(None, (experiment.in_domain, experiment.out_of_domain)):
                    assert (domain.degenerate, domain.balance) == ("keep", ())
