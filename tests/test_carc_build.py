"""``cogen build`` / ``cogen verify`` of the Compositional-ARC specs: Hub-ready configs that
``datasets`` loads, byte-identical whatever the worker count, verified, tampering caught."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from cogen.carc.mlc import decode_grids, encoder_length, mlc_arrays
from cogen.carc.split import held_out_triplets
from cogen.cli import app
from cogen.kit.testing import rerecord
from cogen.pipeline import build
from cogen.pipeline.verify import failed, verify

SCALE = 0.002  # 200 episodes


def digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.glob("data/**/*.parquet"))}


@pytest.fixture(scope="module")
def carc_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("carc")
    report = build("carc", out, scale=SCALE, workers=1, rows_per_shard=64)
    return out, report


def test_configs_and_exact_counts(carc_build):
    import datasets

    out, report = carc_build
    names = datasets.get_dataset_config_names(str(out))
    assert {"carc-episodes", "carc-systematicity-1860", "carc-3shot-1890", "carc-static"} <= set(names)
    assert len(names) == 10
    rows = {c.config: c.rows for c in report.configs}
    assert rows["carc-episodes"] == {"train": 200}
    for seed in (1860, 1870, 1880, 1890):
        split = rows[f"carc-systematicity-{seed}"]
        assert sum(split.values()) == 200 and split["test"] - split["validation"] in (0, 1)
        assert rows[f"carc-3shot-{seed}"] == split
    assert rows["carc-static"] == {"train": 290, "validation": 14, "test": 14}  # the reference's defaults
    assert len(list((out / "data/carc-episodes").glob("train-*.parquet"))) == 4  # 200 rows / 64 per shard


def test_load_dataset_gives_model_ready_columns(carc_build):
    import datasets

    out, _ = carc_build
    loaded = datasets.load_dataset(str(out), "carc-systematicity-1860")
    assert set(loaded) == {"train", "validation", "test"}
    train = loaded["train"].with_format("numpy")
    assert train[:4]["study_inputs"].shape == (4, 12, 10, 10) and train[:4]["query_outputs"].shape == (4, 10, 10, 10)
    row = loaded["test"][0]
    held = {"+".join(t) for t in held_out_triplets(1860)[0]}
    assert row["triplet"] in held and len(row["transformations"]) == 3 and len(row["transformation_kwargs"]) == 3
    assert row["study_roles"][:2] == ["shape", "shape"] and row["study_roles"][-1] == "color+neighbor"
    assert row["color_indicator"] != row["neighbor_color"]
    assert row["rotation_type_8"] == "counter-clockwise"  # the packaged specs follow the paper
    shots = datasets.load_dataset(str(out), "carc-3shot-1860", split="test").with_format("numpy")[:2]
    assert shots["study_inputs"].shape == (2, 3, 10, 10)
    pool = datasets.load_dataset(str(out), "carc-episodes", split="train").with_format("numpy")
    three_shot = datasets.load_dataset(str(out), "carc-3shot-1860", split="validation").with_format("numpy")
    episode = int(three_shot[0]["episode"])  # the 3-shot study examples are the pool episode's shots
    assert np.array_equal(three_shot[0]["study_inputs"], pool[episode]["shot_inputs"])
    assert np.array_equal(three_shot[0]["query_outputs"], pool[episode]["query_outputs"])


def test_mlc_layout_from_a_loaded_split(carc_build):
    import datasets

    out, _ = carc_build
    rows = datasets.load_dataset(str(out), "carc-systematicity-1860", split="train").with_format("numpy")[:3]
    tokens = mlc_arrays(rows)
    assert tokens["encoder"].shape == (3, 22, encoder_length(12)) == (3, 22, 650)
    assert tokens["decoder_input"].shape == tokens["target"].shape == (3, 22, 26)
    assert tokens["is_copy"][0].tolist() == [True] * 12 + [False] * 10
    assert np.array_equal(decode_grids(tokens["target"][:, 12:, :25]), rows["query_outputs"])
    shots = datasets.load_dataset(str(out), "carc-3shot-1860", split="test").with_format("numpy")[:2]
    assert mlc_arrays(shots, copy_task=False)["encoder"].shape == (2, 10, 182)


@pytest.mark.slow
def test_one_or_two_workers_write_identical_bytes(carc_build, tmp_path, pooled):
    out, _ = carc_build
    build("carc", tmp_path / "two", scale=SCALE, workers=2, rows_per_shard=64)
    assert digests(tmp_path / "two") == digests(out)


def test_verify_passes(carc_build):
    checks = verify(carc_build[0], shards_per_config=1)
    assert not failed(checks), failed(checks)
    assert {c.name for c in checks} >= {"episode layout", "held-out triplets", "unique grammars", "split rule",
                                        "rotation convention", "determinism"}


def test_verify_catches_a_leaked_triplet_and_a_repeated_grammar(carc_build, tmp_path):
    out = tmp_path / "copy"
    shutil.copytree(carc_build[0], out)
    shard = out / "data/carc-systematicity-1860/train-00000-of-00003.parquet"
    table = pq.read_table(shard)
    leaked = held_out_triplets(1860)[0][0]
    triplets = table.column("triplet").to_pylist()
    triplets[0] = "+".join(leaked)
    table = table.set_column(table.schema.get_field_index("triplet"), table.schema.field("triplet"),
                             pa.array(triplets, pa.string()))
    pq.write_table(table, shard)
    episodes = out / "data/carc-episodes/train-00000-of-00004.parquet"
    table = pq.read_table(episodes)
    pq.write_table(pa.concat_tables([table.slice(0, 1), table.slice(0, table.num_rows - 1)]).replace_schema_metadata(
        table.schema.metadata), episodes)
    static = out / "data/carc-static/test-00000-of-00001.parquet"
    table = pq.read_table(static)
    column = table.schema.get_field_index("rotation_type_8")
    pq.write_table(table.set_column(column, table.schema.field(column),
                                    pa.array(["clockwise"] * table.num_rows, pa.string())), static)
    bad = {(c.config, c.name) for c in failed(verify(out, shards_per_config=1))}
    assert bad == {("carc-systematicity-1860", "file hashes"), ("carc-episodes", "file hashes"),
                   ("carc-static", "file hashes")}
    for path in (shard, episodes, static):  # as if the build itself had written these rows: the checks behind
        rerecord(path)                       # the hashes must see them
    bad = {(c.config, c.name) for c in failed(verify(out, shards_per_config=1))}
    assert ("carc-systematicity-1860", "held-out triplets") in bad
    assert ("carc-static", "rotation convention") in bad
    assert ("carc-episodes", "unique grammars") in bad and ("carc-episodes", "split rule") in bad


def test_a_second_build_resumes_and_skips_every_shard(carc_build):
    out, _ = carc_build
    report = build("carc", out, scale=SCALE, workers=1, rows_per_shard=64, only=["carc-systematicity-1860"])
    files = list((out / "data/carc-systematicity-1860").glob("*.parquet"))
    assert report.configs[0].written == 0 and report.configs[0].skipped == len(files) == 5  # 3 train, 1 + 1


def test_extended_spec_builds_and_verifies_through_the_cli(tmp_path):
    runner = CliRunner()
    out = tmp_path / "ext"
    result = runner.invoke(app, ["build", "--config", "carc_extended", "--out", str(out), "--scale", str(SCALE),
                                 "--workers", "1", "--no-progress", "--only",
                                 "carc-extended-episodes,carc-extended-systematicity-1860"])
    assert result.exit_code == 0, result.output
    assert "carc-extended-systematicity-1860" in result.stdout
    result = runner.invoke(app, ["verify", str(out), "--sample", "1000"])
    assert result.exit_code == 0, result.output
    shard = out / "data/carc-extended-episodes/train-00000-of-00001.parquet"
    rows = pq.read_table(shard, columns=["transformation_kwargs"])
    kwargs = {k for row in rows.column(0).to_pylist() for k in row}
    assert '{"direction": "+y"}' in kwargs and any('"step_size": -2' in k for k in kwargs)


def test_the_card_names_generation_switches_away_from_the_defaults():
    from cogen.families.carc.card import carc_shift

    manifest = {"kind": "systematicity", "held_out_triplets": [["translation", "rotation", "grow"]],
                "spec": {"queries": "reference", "rotation": "paper", "degenerate": "reject"}}
    assert carc_shift(manifest) == "held-out triplets in validation and test: translation+rotation+grow"
    manifest["spec"] = {"queries": "distinct", "rotation": "reference", "degenerate": "reject"}
    assert carc_shift(manifest).endswith("; queries: distinct, rotation: reference")
    manifest["spec"] = {"rotation": "paper", "degenerate": "keep"}  # generator 1 wrote no queries key
    assert carc_shift(manifest).endswith("; queries: distinct, degenerate: keep")
