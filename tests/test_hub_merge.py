"""cogen merge: one Hub-ready folder from many builds, conflicts refused, never half-merged."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from cogen.errors import BuildError
from cogen.folder.manifest import read_manifests
from cogen.hub.merging import merge
from cogen.pipeline import build
from cogen.pipeline.verify import failed, verify
from cogen.specs import packaged_specs


def digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def header(folder: Path) -> dict:
    return yaml.safe_load((folder / "README.md").read_text(encoding="utf-8").split("---\n", 2)[1])


@pytest.fixture(scope="module")
def study_builds(shared_build) -> list[Path]:
    """Every packaged spec (every study of every family), built small (test_build's scale), each into its own
    folder (the session's builds, read-only)."""
    from test_build import PACKAGED_SCALE

    return [shared_build(name, scale=PACKAGED_SCALE) for name in sorted(packaged_specs())]


@pytest.mark.slow
def test_merged_folder_loads_every_config_of_every_study(study_builds, tmp_path):
    import datasets
    from datasets.load import dataset_module_factory, get_dataset_builder_class

    merged = tmp_path / "merged"
    report = merge(study_builds, merged)
    manifests = read_manifests(merged)
    assert sorted(report.added) == sorted(manifests) and len(manifests) == sum(
        len(read_manifests(folder)) for folder in study_builds)
    assert {m["setting"] for m in manifests.values()} >= {"C1", "C2", "C3", "G1", "G2", "G3", "G4", "G5", "S", "carc"}
    configs = header(merged)["configs"]
    assert [c["config_name"] for c in configs if c.get("default")] == [next(iter(manifests))]
    card = (merged / "README.md").read_text(encoding="utf-8")
    for name, manifest in manifests.items():  # one card for both families: a table row and a preview each
        assert f"| `{name}` | {manifest['setting']} |" in card and f"![{name}](previews/{name}.png)" in card
    assert "held-out triplets in validation and test: translation+rotation+grow" in card  # seed 1860, Table 7
    assert "object size 1x1–5x5 → 6x6–10x10" in card and "no out-of-domain split" in card
    # load_dataset itself for the first config of each family (every call re-reads the whole card) ...
    firsts = {m["family"]: name for name, m in reversed(manifests.items())}
    for name in firsts.values():
        loaded = datasets.load_dataset(str(merged), name)
        assert {s: d.num_rows for s, d in loaded.items()} == {s: v["rows"] for s, v in manifests[name]["splits"].items()}
    # ... and load_dataset's own module and builder, card read once, for every config: the config list,
    # data files, features and the row counts that datasets verifies against the card.
    module = dataset_module_factory(str(merged))
    assert [c.name for c in module.builder_configs_parameters.builder_configs] == list(manifests)
    builder_class = get_dataset_builder_class(module)
    for name, manifest in manifests.items():
        builder = builder_class(cache_dir=str(tmp_path / "cache"), config_name=name, hash=module.hash,
                                **module.builder_kwargs)
        builder.download_and_prepare()
        loaded = builder.as_dataset()
        assert {s: d.num_rows for s, d in loaded.items()} == {s: v["rows"] for s, v in manifest["splits"].items()}
        assert list(loaded[next(iter(loaded))].features) == list(manifest["columns"])


@pytest.fixture
def two_builds(small_build, shared_build) -> tuple[Path, Path]:
    """The shared small build (C1-1, C1-2, G2-1) and a second shared build holding G2-2 and a C1-1 of another
    scale (both read-only)."""
    other = shared_build.folder(("g2", {"scale": 0.002, "only": ["G2-2"]}), ("c1", {"scale": 0.003, "only": ["C1-1"]}))
    return small_build, other


def test_merge_adds_and_replaces_configs_and_keeps_the_others(two_builds, tmp_path):
    small, other = two_builds
    into = tmp_path / "into"
    shutil.copytree(small, into)
    before = digests(into)
    with pytest.raises(BuildError, match=r"config C1-1 of .* holds other data \(fingerprint \w+, seed 1, scale 0\.002\) "
                                         r"than the one of .* \(fingerprint \w+, seed 1, scale 0\.003\); pass --force"):
        merge([other], into)  # another scale: another build, replaced only on purpose
    assert digests(into) == before
    report = merge([other], into, force=True)
    assert (report.added, report.replaced, report.unchanged) == (["G2-2"], ["C1-1"], [])
    after = digests(into)
    kept = [p for p in before if p.startswith(("data/C1-2/", "data/G2-1/", "manifests/C1-2", "manifests/G2-1"))]
    assert kept and all(after[p] == before[p] for p in kept)
    assert read_manifests(into)["C1-1"] == read_manifests(other)["C1-1"]
    assert [c["config_name"] for c in header(into)["configs"]] == ["C1-1", "C1-2", "G2-1", "G2-2"]
    assert not failed(verify(into, shards_per_config=0))
    again = merge([other, into], into)  # the destination may also be a source; nothing to copy
    assert (again.added, again.replaced, sorted(again.unchanged)) == ([], [], ["C1-1", "C1-2", "G2-1", "G2-2"])
    assert {p: h for p, h in digests(into).items() if p.startswith("data/")} == {
        p: h for p, h in after.items() if p.startswith("data/")}


def test_conflicting_sources_are_refused_before_anything_changes(two_builds, tmp_path):
    small, other = two_builds
    into = tmp_path / "into"
    shutil.copytree(small, into)
    before = digests(into)
    with pytest.raises(BuildError, match=r"config C1-1 is in .* with different contents"):
        merge([small, other], into)
    assert digests(into) == before


def test_incomplete_or_foreign_sources_are_refused(small_build, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(small_build, broken)
    (broken / "data/C1-2/test-00000-of-00001.parquet").unlink()
    with pytest.raises(BuildError, match="config C1-2: data/C1-2/test-00000-of-00001.parquet: missing; rebuild it"):
        merge([broken], tmp_path / "a")
    shard = broken / "data/C1-1/train-00000-of-00001.parquet"
    shard.write_bytes(shard.read_bytes()[:-10])
    (broken / "manifests/C1-2.json").unlink()
    with pytest.raises(BuildError, match=r"config C1-1: data/C1-1/train-00000-of-00001\.parquet: [\d,]+ bytes, the "
                                         "manifest recorded"):
        merge([broken], tmp_path / "b")
    (tmp_path / "empty").mkdir()
    with pytest.raises(BuildError, match="not a cogen build folder"):
        merge([tmp_path / "empty"], tmp_path / "c")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_an_interrupted_merge_never_looks_complete_and_a_rerun_finishes_it(two_builds, tmp_path, monkeypatch):
    import cogen.hub.merging as merging

    small, other = two_builds
    into = tmp_path / "into"
    shutil.copytree(small, into)
    real_copy, calls = merging._copy, []

    def failing_copy(source, target, link):
        calls.append(target)
        if len(calls) == 3:
            raise OSError("disk full")
        real_copy(source, target, link)

    monkeypatch.setattr(merging, "_copy", failing_copy)
    with pytest.raises(BuildError, match="cannot copy config C1-1 into .*: disk full"):
        merge([other], into, force=True)
    assert not (into / "README.md").exists()  # no card: push and load refuse the folder
    assert "C1-1" not in read_manifests(into)  # the config being replaced is not listed as complete
    assert [c.name for c in failed(verify(into, shards_per_config=0))] == ["card"]
    monkeypatch.setattr(merging, "_copy", real_copy)
    merge([other], into, force=True)  # the journal lists what the stopped merge left in data/C1-1/
    assert not failed(verify(into, shards_per_config=0))
    assert not list(into.glob(".cogen/*.journal.jsonl"))
    assert not list(into.glob("data/.*"))


def test_a_merged_folder_takes_another_build_by_merge_not_by_build(small_build, tmp_path):
    into = tmp_path / "into"
    merge([small_build], into)
    with pytest.raises(BuildError, match=r"configs that this spec does not make \(C1-1, C1-2\)"):
        build("g2", into, scale=0.002, workers=1, only=["G2-3"])  # a folder holds one build
    build("g2", tmp_path / "g2", scale=0.002, workers=1, only=["G2-3"])
    merge([tmp_path / "g2"], into)
    assert [c["config_name"] for c in header(into)["configs"]] == ["C1-1", "C1-2", "G2-1", "G2-3"]
    assert (into / "previews" / "G2-3.png").is_file()


def test_merge_command(two_builds, tmp_path):
    from cogen.cli import app

    small, other = two_builds
    result = CliRunner().invoke(app, ["merge", str(small), str(other), "--into", str(tmp_path / "x")])
    assert isinstance(result.exception, BuildError)
    result = CliRunner().invoke(app, ["merge", str(small), "--into", str(tmp_path / "y"), "--link"])
    assert result.exit_code == 0, result.output
    assert "added (3): C1-1, C1-2, G2-1" in result.stdout
    shard = "data/C1-1/train-00000-of-00001.parquet"
    assert (tmp_path / "y" / shard).stat().st_ino == (small / shard).stat().st_ino  # hard-linked, not copied
