"""Every check of ``cogen verify`` fails, by name, on the damage it exists to catch (and only that check).

For each registered family and each check, the family's tiny build is copied, broken in one way, and verified.
The tampers of a family's own checks are in its ``testing`` module (``cogen/families/<name>/testing.py``); the
generic checks are broken the same way for every family (:func:`cogen.kit.testing.generic_tampers`). A last test
makes sure the matrix covers every check that ``verify`` runs, so a new check needs a tamper.

A shard changed behind the builder's back fails the *file hashes* check before anything else is
read. To reach the checks behind it, most tampers also record the changed shard in its manifest
and the manifest in the card, as a build that wrote wrong rows would (:func:`cogen.kit.testing.rerecord`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import tiny_of

from cogen.carc.grammar import KINDS
from cogen.errors import PublishError
from cogen.families.carc.testing import static_split_rule
from cogen.families.cogitao.testing import TINY_SPEC
from cogen.family import FAMILIES, family
from cogen.hub.publish import push
from cogen.kit.testing import edit_shard, generic_tampers, shard_of
from cogen.pipeline import build
from cogen.pipeline.verify import failed, verify


def tampers(name: str) -> dict:
    """``{(config, check): tamper}`` of family ``name``: the generic checks' and its own (which win)."""
    return {**generic_tampers(tiny_of(name).config), **family(name).load("testing").TAMPERS}


MATRIX = [(name, config, check) for name in FAMILIES for config, check in tampers(name)]


def assert_only_its_check_fails(name: str, build_folder: Path, folder: Path, config: str, check: str) -> None:
    """Copy ``build_folder`` to ``folder``, apply the tamper of (``config``, ``check``), and verify."""
    shutil.copytree(build_folder, folder)
    tampers(name)[config, check](folder)
    regenerate = 2 if check == "determinism" else 0  # other damage would also fail a regeneration
    bad = {(c.config or config, c.name) for c in failed(verify(folder, shards_per_config=regenerate))}
    assert bad == {(config, check)}


def assert_every_check_has_a_tamper(name: str, build_folder: Path) -> None:
    checks = verify(build_folder, shards_per_config=2)
    assert not failed(checks), failed(checks)
    assert {c.name for c in checks} == {check for _, check in tampers(name)}, name


@pytest.mark.parametrize("name, config, check", MATRIX, ids=[" / ".join(k) for k in MATRIX])
def test_each_check_reports_the_damage_it_exists_for(tiny_builds, tmp_path, name, config, check):
    assert_only_its_check_fails(name, tiny_builds[name], tmp_path / name, config, check)


@pytest.mark.parametrize("name", list(FAMILIES))
def test_untouched_builds_pass_and_every_check_has_a_tamper(tiny_builds, name):
    assert_every_check_has_a_tamper(name, tiny_builds[name])


@pytest.fixture(scope="module")
def built(tiny_builds):
    """The shared tiny build of every family (read-only: every tamper copies it first)."""
    return tiny_builds


def test_the_static_split_rule_names_the_leaked_episode(built, tmp_path):
    folder = tmp_path / "carc"
    shutil.copytree(built["carc"], folder)
    static_split_rule(folder)
    detail = next(c.detail for c in verify(folder, shards_per_config=0) if c.name == "split rule" and not c.ok)
    test = pq.read_table(shard_of(folder, "carc-static", "test"), columns=["episode", "query_roles"]).to_pydict()
    assert test["query_roles"][0] == [KINDS[-1]]  # the leaked row is a level-2 query of the held-out episode
    assert detail == f"1 held-out queries in train (episodes [{test['episode'][0]}])"


def test_an_edited_manifest_fails_the_card_check(built, tmp_path):
    folder = tmp_path / "cogitao"
    shutil.copytree(built["cogitao"], folder)
    path = folder / "manifests" / "V-1.json"  # the manifest says seed 2 where the build used 5; the card knows better
    path.write_text(path.read_text().replace('"seed": 5', '"seed": 2'))
    bad = failed(verify(folder, shards_per_config=0))
    assert [(c.config, c.name) for c in bad] == [("", "card"), ("V-1", "spec")]  # seed 2 gives another fingerprint
    assert "manifests/V-1.json changed after the card was written" in bad[0].detail


def test_a_folder_from_before_file_hashes_is_told_to_rebuild(built, tmp_path):
    """Decided: a legacy manifest fails *file hashes* (and the card its checksum) with the fix, and
    every other check still runs; the same build command then records the hashes."""
    import re

    folder = tmp_path / "cogitao"
    shutil.copytree(built["cogitao"], folder)
    path = folder / "manifests" / "V-1.json"
    manifest = json.loads(path.read_text())
    del manifest["manifest_format"]
    for info in manifest["splits"].values():
        del info["shards"]
    path.write_text(json.dumps(manifest, indent=2) + "\n")
    card = folder / "README.md"
    card.write_text(re.sub(r" \| `[0-9a-f]{64}` \|$", " |", card.read_text(), flags=re.MULTILINE))
    checks = verify(folder, shards_per_config=1)
    bad = {c.name: c.detail for c in failed(checks)}
    assert set(bad) == {"card", "file hashes"}
    assert "records no file hashes" in bad["file hashes"] and "rebuild it with the same `cogen build`" in bad["file hashes"]
    assert {c.name for c in checks} >= {"decoding", "re-derived outputs", "determinism"}
    with pytest.raises(PublishError, match="records no file hashes .* rebuild it with the same `cogen build`"):
        push(folder, "org/x", dry_run=True)
    notes = []
    spec = folder.parent / "v.yaml"
    spec.write_text(TINY_SPEC)
    report = build(spec, folder, workers=1, notify=notes.append)
    assert report.configs[0].written == 5 and all("no SHA-256 was recorded" in n for n in notes)
    assert not failed(verify(folder, shards_per_config=0))


def test_a_single_config_card_in_the_mapping_form_datasets_writes_still_verifies(built, tmp_path):
    """`datasets` writes one config's ``dataset_info`` as a mapping, not a list: verify reads both."""
    import yaml

    folder = tmp_path / "cogitao"
    shutil.copytree(built["cogitao"], folder)
    card = folder / "README.md"
    _, header, body = card.read_text().split("---", 2)
    data = yaml.safe_load(header)
    assert isinstance(data["dataset_info"], list) and len(data["dataset_info"]) == 1
    data["dataset_info"] = {k: v for k, v in data["dataset_info"][0].items() if k != "config_name"}
    card.write_text("---\n" + yaml.safe_dump(data, sort_keys=False) + "---" + body)
    check = next(c for c in verify(folder, shards_per_config=0) if c.name == "card")
    assert check.ok, check.detail
    data["dataset_info"]["splits"][0]["num_examples"] += 1  # and it still compares the counts
    card.write_text("---\n" + yaml.safe_dump(data, sort_keys=False) + "---" + body)
    check = next(c for c in verify(folder, shards_per_config=0) if c.name == "card")
    assert not check.ok and "row counts differ" in check.detail


def _object_cell(step: int):
    def change(columns):  # one cell of the first object's array at ``step``
        array = columns["object_grids"][0][0][step]
        array[0][0] = (array[0][0] + 1) % 10
    return change


def _object_box(columns):  # the first object's box at its last step one row lower, its array unchanged
    columns["object_boxes"][0][0][-1][0] += 1


def _object_steps(columns):  # the first object loses its last step
    del columns["object_boxes"][0][0][-1], columns["object_grids"][0][0][-1]


@pytest.fixture(scope="module")
def object_frames_build(shared_build) -> Path:
    return shared_build("output: {object_frames: true}\n" + TINY_SPEC)


@pytest.mark.parametrize("change, outcome", [
    (_object_cell(-1), "an object frame differs from the engine's step"),
    (_object_cell(0), "object frames do not start at the placed objects"),
    (_object_box, "an object frame differs from the engine's step"),
    (_object_steps, "object frames do not match the row's objects, steps or boxes"),
], ids=["last array", "first array", "box", "steps"])
def test_a_damaged_object_frame_fails_re_derived_outputs_alone(object_frames_build, tmp_path, change, outcome):
    folder = tmp_path / "cogitao"
    shutil.copytree(object_frames_build, folder)
    assert not failed(verify(folder, shards_per_config=0))
    edit_shard(shard_of(folder, "V-1", "train"), change)
    bad = failed(verify(folder, shards_per_config=0))
    assert [(c.config, c.name) for c in bad] == [("V-1", "re-derived outputs")]
    assert f"row 0: {outcome}" in bad[0].detail
