"""cogen build end to end: Hub-ready output, exact counts, leak-free, deterministic, resumable."""

from __future__ import annotations

from pathlib import Path

import pytest
from folder_digests import digests

from cogen.errors import BuildInterrupted, GenerationError
from cogen.pipeline import build
from cogen.pipeline.verify import failed, verify
from cogen.specs import packaged_specs

#: The scale of the small build of every packaged spec, shared by the session (test_card_snippets, test_hub_merge).
PACKAGED_SCALE = 0.002

TINY = """\
setting: T
seed: 3
defaults:
  grid: {height: [6, 8], width: [6, 8]}
  objects: {count: [1, 2], where: {is_shape_fully_connected: true, rows: [1, 3], cols: [1, 3]}}
  sizes: {train: 120, validation: 20, test: 20, validation_ood: 10, test_ood: 10}
experiments:
  T-1:
    in_domain: {sequences: [[translate_up], [rot90], [mirror_horizontal, rot90]]}
    out_of_domain: {sequences: [[rot90, mirror_horizontal]]}
  T-2:
    in_domain: {sequences: [[change_shape_color]]}
"""


@pytest.fixture
def tiny_spec(tmp_path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY)
    return path


@pytest.fixture(scope="module")
def c1_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("c1")
    report = build("c1", out, scale=0.002, workers=1, rows_per_shard=80)
    return out, report


def test_build_loads_with_datasets_and_exact_counts(c1_build):
    import datasets

    out, report = c1_build
    assert datasets.get_dataset_config_names(str(out)) == [f"C1-{i}" for i in range(1, 6)]
    for config in report.configs:
        loaded = datasets.load_dataset(str(out), config.config)
        assert {split: ds.num_rows for split, ds in loaded.items()} == config.rows == {
            "train": 200, "validation": 2, "test": 2, "validation_ood": 2, "test_ood": 2}
        assert len(list((out / "data" / config.config).glob("train-*.parquet"))) == 3  # 200 rows / 80 per shard
    row = datasets.load_dataset(str(out), "C1-1", split="test_ood")[0]
    assert row["transformations"] in (["translate_up", "rot90"], ["rot90", "translate_up"])
    assert len(row["input"]) == 20 and len(row["input"][0]) == 20


def test_verify_passes_on_a_fresh_build(c1_build):
    checks = verify(c1_build[0])
    assert not failed(checks), failed(checks)
    assert {c.name for c in checks} >= {"card", "files and schema", "held-out sequences", "unique (input, sequence)",
                                        "determinism"}


def test_verify_catches_a_missing_shard_and_a_tampered_row(tiny_spec, tmp_path):
    out = tmp_path / "out"
    build(tiny_spec, out, workers=1)
    shard = out / "data/T-1/test-00000-of-00001.parquet"
    import pyarrow.parquet as pq

    table = pq.read_table(shard)
    pq.write_table(table.slice(0, table.num_rows - 1), shard)  # a row lost behind the builder's back
    bad = {(c.config, c.name) for c in failed(verify(out))}
    assert ("T-1", "files and schema") in bad
    shard.unlink()
    assert ("T-1", "files and schema") in {(c.config, c.name) for c in failed(verify(out))}


@pytest.mark.slow
def test_worker_count_never_changes_a_byte(tmp_path, pooled):
    options = dict(scale=0.01, only=["C1-1", "C1-4"], rows_per_shard=400)
    build("c1", tmp_path / "one", workers=1, **options)
    build("c1", tmp_path / "two", workers=2, **options)
    assert digests(tmp_path / "one") == digests(tmp_path / "two")
    assert len(digests(tmp_path / "one")) == 2 * (3 + 4)  # train 1,000 rows in 3 shards, 4 small splits


def test_shards_encoded_by_the_key_pass_are_the_bytes_a_second_pass_writes(tmp_path, monkeypatch):
    from cogen.families.cogitao import build as cogitao
    from cogen.pipeline import shards

    tiny_spec = tmp_path / "crowded.yaml"  # about a thousand distinct samples: dedup regenerates some
    tiny_spec.write_text(TINY.replace("[6, 8]", "[5, 5]").replace("rows: [1, 3], cols: [1, 3]", "rows: [1, 2], cols: [1, 2]")
                         .replace("count: [1, 2]", "count: [1, 1]").replace("train: 120", "train: 300"))

    reused = []
    write_bytes = shards.write_bytes_atomic
    monkeypatch.setattr(shards, "write_bytes_atomic", lambda path, data: (reused.append(path.name), write_bytes(path, data)))
    fused = build(tiny_spec, tmp_path / "fused", workers=1, rows_per_shard=15)
    monkeypatch.setattr(cogitao, "ENCODED_ROWS", 0)  # every shard sampled and encoded in the second pass
    build(tiny_spec, tmp_path / "twice", workers=1, rows_per_shard=15)
    assert digests(tmp_path / "fused") == digests(tmp_path / "twice")
    shards_written = len(digests(tmp_path / "fused"))
    regenerated = sum(s.get("regenerated", 0) for c in fused.configs for s in c.stats.values())
    assert regenerated > 0 and 0 < len(reused) < shards_written  # both paths were taken in the first build
    assert not failed(verify(tmp_path / "fused"))


@pytest.mark.slow
def test_dask_executor_on_a_local_cluster_gives_the_same_bytes(tiny_spec, tmp_path):
    pytest.importorskip("dask.distributed")
    build(tiny_spec, tmp_path / "serial", workers=1)
    build(tiny_spec, tmp_path / "dask", workers=2, executor="dask")
    assert digests(tmp_path / "serial") == digests(tmp_path / "dask")


def test_resume_skips_finished_shards_and_rewrites_missing_ones(tiny_spec, tmp_path):
    out = tmp_path / "out"
    build(tiny_spec, out, workers=1, rows_per_shard=50)
    before = digests(out)
    missing = out / "data/T-1/train-00001-of-00003.parquet"
    missing.unlink()
    report = build(tiny_spec, out, workers=1, rows_per_shard=50)
    t1, t2 = report.configs
    assert (t1.written, t1.skipped, t1.kept) == (1, 6, False)
    assert (t2.written, t2.kept) == (0, True)  # complete and verified: not even its keys are sampled again
    assert digests(out) == before
    assert t1.stats["train"]["accepted"] == 120  # statistics of skipped shards come from their footers


def test_a_shard_without_a_recorded_hash_is_rebuilt_with_a_message(tiny_spec, tmp_path):
    out = tmp_path / "out"
    build(tiny_spec, out, workers=1, rows_per_shard=50)
    before = digests(out)
    (out / "manifests/T-1.json").unlink()  # its records go with it: no shard of T-1 can be trusted
    messages = []
    report = build(tiny_spec, out, workers=1, rows_per_shard=50, notify=messages.append)
    t1 = report.configs[0]
    assert (t1.written, t1.skipped) == (7, 0)
    assert len(messages) == 7 and all("no SHA-256 was recorded" in m for m in messages), messages
    assert digests(out) == before


def test_a_damaged_shard_is_rebuilt_not_kept(tiny_spec, tmp_path):
    out = tmp_path / "out"
    build(tiny_spec, out, workers=1, rows_per_shard=50)
    before = digests(out)
    shard = out / "data/T-1/validation-00000-of-00001.parquet"
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0x01  # one bit, inside a data page: the footer stamp still matches
    shard.write_bytes(bytes(data))
    messages = []
    report = build(tiny_spec, out, workers=1, rows_per_shard=50, notify=messages.append)
    assert (report.configs[0].written, report.configs[0].skipped) == (1, 6)
    assert messages == ["rebuilt data/T-1/validation-00000-of-00001.parquet: its bytes differ from the SHA-256 "
                        "recorded when it was written"]
    assert digests(out) == before
    assert not failed(verify(out))


def test_interrupted_build_leaves_no_complete_looking_file(tiny_spec, tmp_path, monkeypatch):
    import cogen.families.cogitao.build as cogitao

    out = tmp_path / "out"
    real = cogitao.shard_tables
    calls = {"n": 0}

    def failing(task, stats):
        calls["n"] += 1
        if calls["n"] == 3:
            yield from real(task, stats)
            raise KeyboardInterrupt  # the user hits Ctrl-C half way through a shard
        yield from real(task, stats)

    monkeypatch.setattr(cogitao, "shard_tables", failing)
    monkeypatch.setattr(cogitao, "ENCODED_ROWS", 0)  # every shard sampled again in the second pass
    with pytest.raises(BuildInterrupted, match=r"interrupted while writing shards \(2 of 12 shards written\); run "
                                               r"the same command again to resume"):
        build(tiny_spec, out, workers=1, rows_per_shard=50)
    assert not list(out.glob("data/**/*.tmp")) and not list(out.glob("data/**/.*"))
    assert len(list(out.glob("data/**/*.parquet"))) == 2
    assert not (out / "manifests").exists() or not list((out / "manifests").glob("*.json"))
    monkeypatch.setattr(cogitao, "shard_tables", real)
    report = build(tiny_spec, out, workers=1, rows_per_shard=50)
    assert sum(c.skipped for c in report.configs) == 2  # the journal's two finished shards are kept
    build(tiny_spec, tmp_path / "clean", workers=1, rows_per_shard=50)
    assert digests(out) == digests(tmp_path / "clean")


def test_rebuilding_with_another_scale_is_refused_and_force_replaces_the_whole_folder(tiny_spec, tmp_path):
    from cogen.errors import BuildError

    out = tmp_path / "out"
    build(tiny_spec, out, workers=1, rows_per_shard=50)
    with pytest.raises(BuildError, match=r"holds a build with other inputs: scale 1\.0 in the folder, 0\.5 now"):
        build(tiny_spec, out, workers=1, rows_per_shard=50, scale=0.5, only=["T-1"])
    build(tiny_spec, out, workers=1, rows_per_shard=50, scale=0.5, only=["T-1"], force=True)
    build(tiny_spec, tmp_path / "clean", workers=1, rows_per_shard=50, scale=0.5, only=["T-1"])
    assert digests(out) == digests(tmp_path / "clean")  # T-2, of the old scale, is gone with the rest
    assert not failed(verify(out))


def test_a_hopeless_spec_fails_fast_with_rejection_counts(tmp_path):
    spec = tmp_path / "hopeless.yaml"
    spec.write_text(TINY.replace("[[translate_up], [rot90], [mirror_horizontal, rot90]]",
                                 "[[double_right, double_right, double_right]]")
                    .replace("rows: [1, 3], cols: [1, 3]", "rows: [3, 3], cols: [3, 3]"))
    with pytest.raises(GenerationError, match="out_of_grid"):
        build(spec, tmp_path / "out", workers=1)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(packaged_specs()))
def test_every_packaged_spec_builds_small_and_verifies(name, shared_build):
    """Paper-text and as-run specs alike; where a spec rejects degenerate samples, no row is a no-op. (The
    builds are the session's: test_card_snippets and test_hub_merge read the same ones.)"""
    import json

    import pyarrow.parquet as pq

    folder = shared_build(name, scale=PACKAGED_SCALE)
    assert list((folder / "manifests").glob("*.json"))
    checks = verify(folder, shards_per_config=1)
    assert not failed(checks), failed(checks)
    for manifest_path in (folder / "manifests").glob("*.json"):
        manifest = json.loads(manifest_path.read_text())
        if manifest.get("family") != "cogitao":
            continue
        assert manifest["variant"] == ("as-run" if name.startswith("as_run/") else "paper-text")
        for split, info in manifest["splits"].items():
            if manifest["spec"][("out_of_domain" if split.endswith("_ood") else "in_domain")]["degenerate"] != "reject":
                continue
            assert "noops" in info["stats"]
            for file in info["files"]:
                table = pq.read_table(folder / file, columns=["input", "output"])
                assert table.column("input").to_pylist() != [] and not any(
                    a == b for a, b in zip(table.column("input").to_pylist(), table.column("output").to_pylist(),
                                           strict=True)), (manifest["config"], split)
