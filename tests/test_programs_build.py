"""String-to-grid functions as a cogen family: sampling laws per setting, the spec reader, and
build -> verify -> merge through the shared machinery (a tampered function is caught)."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from cogen.cli import app
from cogen.errors import SpecError
from cogen.families.programs.checks import law_problems
from cogen.families.programs.functions import INPUTS, SETTINGS, grid_text, input_bits, sample, stream_seed
from cogen.folder import read_split
from cogen.pipeline import build
from cogen.pipeline.verify import failed, verify
from cogen.specs import load_spec, parse_spec_text

runner = CliRunner()
SPEC = """\
setting: P
family: programs
seed: 11
functions: 40
settings: [horizontal, block, vertical, random, random_index, horizontal_random]
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("programs")
    (folder / "p.yaml").write_text(SPEC)
    build(folder / "p.yaml", folder / "out", workers=1)
    return folder / "out"


def _brute_outputs(groups: np.ndarray, patterns: np.ndarray) -> np.ndarray:
    """The definition, cell by cell: the first letter writes the pattern, the second its complement."""
    out = np.zeros((16, 16), np.uint8)
    for k, text in enumerate(INPUTS):
        for cell in range(16):
            i = groups[cell]
            rank = int(np.sum(groups[:cell] == i))
            second = text[i] != "ACEG"[i]
            out[k, cell] = patterns[i][rank] ^ second
    return out


@pytest.mark.parametrize("setting", SETTINGS)
def test_outputs_follow_the_definition_and_flipping_a_letter_flips_its_cells(setting):
    batch = sample(setting, stream_seed(5, setting), np.arange(25))
    outputs = batch.outputs()
    for k in range(len(batch)):
        groups = batch.groups[k]
        assert sorted(np.bincount(groups, minlength=4).tolist()) == [4, 4, 4, 4]
        assert np.array_equal(outputs[k], _brute_outputs(groups, batch.patterns[k]))
        for i in range(4):
            flipped = np.arange(16) ^ (1 << (3 - i))
            assert ((outputs[k][flipped] ^ outputs[k]) == (groups == i)).all()


def test_inputs_are_lexicographic_and_bits_match():
    assert list(INPUTS) == sorted(INPUTS) and len(set(INPUTS)) == 16
    assert INPUTS[0] == "ACEG" and INPUTS[-1] == "BDFH"
    assert all(text[i] == "ABCDEFGH"[2 * i + b] for text, bits in zip(INPUTS, input_bits(), strict=True) for i, b in enumerate(bits))
    assert grid_text([1, 0, 0, 0] * 4) == "*...\n*...\n*...\n*..."


def test_fixed_layouts_are_the_papers():
    cells = np.arange(16)
    assert (sample("horizontal", 1, [0]).groups[0] == cells // 4).all()
    assert (sample("vertical", 1, [0]).groups[0] == cells % 4).all()
    assert (sample("block", 1, [0]).groups[0] == (cells // 8) * 2 + (cells % 4) // 2).all()  # TL, TR, BL, BR


def test_random_settings_draw_uniformly():
    n = 6000
    rng_patterns = sample("horizontal", 99, np.arange(n)).patterns
    counts = Counter(int("".join(map(str, p)), 2) for p in rng_patterns[:, 0])
    assert len(counts) == 16 and max(counts.values()) / min(counts.values()) < 1.5  # 16 patterns, ~375 each
    permutations = Counter(tuple(r) for r in sample("random_index", 98, np.arange(n)).rows)
    assert set(permutations) == set(itertools.permutations(range(4)))  # identity allowed
    assert max(permutations.values()) / min(permutations.values()) < 1.6  # ~250 each
    kept = Counter(tuple(np.flatnonzero(r >= 0)) for r in sample("horizontal_random", 97, np.arange(n)).rows)
    assert set(kept) == set(itertools.combinations(range(4), 2)) and max(kept.values()) / min(kept.values()) < 1.3
    cell_owner = np.stack([np.bincount(sample("random", 96, np.arange(n)).groups[:, c], minlength=4)
                           for c in range(16)])
    assert (abs(cell_owner / n - 0.25) < 0.03).all()  # every cell is equally likely to go to each character


def test_horizontal_random_keeps_row_r_for_character_r():
    batch = sample("horizontal_random", 3, np.arange(200))
    for groups, rows in zip(batch.groups, batch.rows, strict=True):
        grid = groups.reshape(4, 4)
        kept = np.flatnonzero(rows >= 0)
        assert len(kept) == 2 and all(rows[i] == i and (grid[i] == i).all() for i in kept)
        others = [i for i in range(4) if i not in kept]
        assert set(grid[[r for r in range(4) if r not in kept]].reshape(-1)) == set(others)


def test_a_function_is_a_pure_function_of_seed_config_index_and_retry():
    first = sample("random", stream_seed(4, "P-random"), [7, 3, 7], [0, 0, 1])
    again = sample("random", stream_seed(4, "P-random"), [3, 7])
    assert (first.keys()[1] == again.keys()[0]).all() and (first.keys()[0] == again.keys()[1]).all()
    assert not (first.keys()[0] == first.keys()[2]).all()  # a retry is another function
    assert not (sample("random", stream_seed(4, "P-other"), [7]).keys() == again.keys()[1]).all()


def test_packaged_spec_has_one_config_per_setting_with_30_functions():
    setting = load_spec("programs")
    assert [c.name for c in setting.configs] == ["programs-horizontal", "programs-block", "programs-vertical",
                                                 "programs-random", "programs-random-index",
                                                 "programs-horizontal-random"]
    assert {c.functions for c in setting.configs} == {30} and setting.family == "programs"


@pytest.mark.parametrize(("text", "message"), [
    (SPEC.replace("functions: 40", "functions: 0"), "below the minimum"),
    (SPEC.replace("functions: 40", "functions: 20000"), "above the maximum"),
    (SPEC.replace("horizontal,", "horizontol,"), "unknown setting 'horizontol'"),
    (SPEC.replace("block,", "horizontal,"), "listed twice"),
    (SPEC + "sizes: 3\n", "unknown key 'sizes'"),
    (SPEC.replace("seed: 11\n", ""), "missing required key 'seed'"),
])
def test_bad_specs_name_the_field(text, message):
    with pytest.raises(SpecError, match=message) as caught:
        parse_spec_text(text, "p.yaml")
    assert "p.yaml" in str(caught.value)


def test_build_writes_one_config_per_setting_and_verify_passes(built):
    checks = verify(built, shards_per_config=1)
    assert not failed(checks), failed(checks)
    names = {c.name for c in checks}
    assert {"function law", "distinct functions", "determinism"} <= names
    row = read_split(built, "P-block", "test").table.slice(0, 1).to_pylist()[0]
    assert row["id"] == "P-block-test-0" and row["setting"] == "block" and row["inputs"] == list(INPUTS)
    assert all(len(text) == 19 and text.count("\n") == 3 for text in row["outputs"])
    card = (built / "README.md").read_text()
    assert "| `P-horizontal` | P | nothing held out" in card and "character i controls row i" in card
    assert "![P-random](previews/P-random.png)" in card and "`cell_groups`" in card


@pytest.mark.slow
def test_build_is_deterministic_and_independent_of_workers(built, tmp_path, pooled):
    (tmp_path / "p.yaml").write_text(SPEC)
    build(tmp_path / "p.yaml", tmp_path / "two", workers=2, rows_per_shard=7)
    for config in ("P-random", "P-horizontal-random"):
        one = read_split(built, config, "test").table
        two = read_split(tmp_path / "two", config, "test").table
        assert one.equals(two)


@pytest.mark.slow
def test_functions_of_a_config_are_distinct_even_when_the_space_is_small(tmp_path):
    spec = tmp_path / "h.yaml"
    spec.write_text(SPEC.replace("functions: 40", "functions: 3000").replace(
        "settings: [horizontal, block, vertical, random, random_index, horizontal_random]", "settings: [horizontal]"))
    build(spec, tmp_path / "out", workers=1)  # 3,000 of 65,536: about 70 repeats to regenerate
    manifest = json.loads((tmp_path / "out" / "manifests" / "P-horizontal.json").read_text())
    assert manifest["splits"]["test"]["regenerated"] and manifest["splits"]["test"]["stats"]["regenerated"] > 0
    outputs = read_split(tmp_path / "out", "P-horizontal", "test").table.column("outputs").to_pylist()
    assert len({"|".join(o) for o in outputs}) == 3000
    assert not failed(verify(tmp_path / "out", shards_per_config=1))


def test_verify_catches_a_function_that_breaks_its_law(built, tmp_path):
    rows = read_split(built, "P-random", "test").table.to_pylist()
    assert law_problems(rows) == []
    broken = dict(rows[3])
    broken["outputs"] = [broken["outputs"][0]] + broken["outputs"][1:]
    first = list(broken["outputs"][5])
    first[0] = "*" if first[0] == "." else "."
    broken["outputs"] = broken["outputs"][:5] + ["".join(first)] + broken["outputs"][6:]
    assert law_problems([broken]) and "P-random-test-3" in law_problems([broken])[0]
    swapped = dict(rows[4], cell_groups=[[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 0]])
    assert "not 4 disjoint groups" in law_problems([swapped])[0]
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    path = copy / "data" / "P-random" / "test-00000-of-00001.parquet"
    table = pq.read_table(path)
    outputs = table.column("outputs").to_pylist()
    outputs[3] = broken["outputs"]
    table = table.set_column(table.schema.get_field_index("outputs"), "outputs",
                             pa.array(outputs, table.schema.field("outputs").type))
    pq.write_table(table, path)
    problems = failed(verify(copy, shards_per_config=1))
    assert {c.name for c in problems if c.config == "P-random"} == {"file hashes"}  # caught before any row is read
    from cogen.kit.testing import rerecord

    rerecord(path)  # as if the build itself had written the broken function: the law and regeneration catch it
    problems = failed(verify(copy, shards_per_config=1))
    assert {c.name for c in problems if c.config == "P-random"} >= {"function law", "determinism"}


def test_cli_builds_verifies_and_merges_programs_beside_cogitao(built, tmp_path, small_build):
    result = runner.invoke(app, ["verify", str(built)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["merge", str(small_build), str(built), "--into", str(tmp_path / "merged")])
    assert result.exit_code == 0, result.output
    card = (tmp_path / "merged" / "README.md").read_text()
    assert "String-to-grid programs configs" in card and "C1-1" in card
    assert not failed(verify(tmp_path / "merged", shards_per_config=1))
