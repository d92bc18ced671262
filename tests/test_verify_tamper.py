"""Every check of ``cogen verify`` fails, by name, on the damage it exists to catch (and only that check).

For each (family, check) a tiny build is copied, broken in one way, and verified. A last test
makes sure the matrix covers every check that ``verify`` runs, so a new check needs a tamper.

A shard changed behind the builder's back fails the *file hashes* check before anything else is
read. To reach the checks behind it, most tampers also record the changed shard in its manifest
and the manifest in the card, as a build that wrote wrong rows would (:func:`rerecord`).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import TINY_COGITAO

from cogen.carc.grammar import KINDS
from cogen.carc.split import held_out_triplets
from cogen.errors import BuildError, PublishError
from cogen.family import FAMILIES
from cogen.hub.publish import push
from cogen.pipeline import build
from cogen.pipeline.verify import failed, verify

CARC_CONFIGS = ["carc-systematicity-1860", "carc-static"]  # two of the tiny build's configs the tampers break


@pytest.fixture(scope="module")
def built(tiny_builds) -> dict[str, Path]:
    """The shared tiny build of every family (conftest.py; read-only: every tamper copies it first)."""
    return tiny_builds


def _shard(folder: Path, config: str, split: str) -> Path:
    manifest = json.loads((folder / "manifests" / f"{config}.json").read_text())
    return folder / manifest["splits"][split]["files"][0]


def rerecord(path: Path) -> None:
    """Record the shard ``path`` as it is now in its manifest, and the manifest in the card (with the
    preview drawn from the rows as they are now)."""
    from cogen.card import write_card
    from cogen.folder import shard_record

    folder = path.parents[2]
    relpath = path.relative_to(folder).as_posix()
    manifest_file = folder / "manifests" / f"{path.parent.name}.json"
    manifest = json.loads(manifest_file.read_text())
    for info in manifest["splits"].values():
        if relpath in info["shards"]:
            info["shards"][relpath] = shard_record(path)
    manifest_file.write_text(json.dumps(manifest, indent=2) + "\n")
    (folder / "previews" / f"{path.parent.name}.png").unlink(missing_ok=True)
    try:
        write_card(folder)
    except BuildError:  # rows that cannot be decoded cannot be drawn either (verify then skips the preview)
        write_card(folder, previews=False)


def _edit(path: Path, change: Callable[[dict[str, list]], None]) -> None:
    """Rewrite a shard with ``change`` applied to its columns (as Python lists), footer stamp kept,
    and record it (the build itself wrote these rows)."""
    table = pq.read_table(path)
    columns = table.to_pydict()
    change(columns)
    pq.write_table(pa.Table.from_pydict(columns, schema=table.schema), path)
    rerecord(path)


def _flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


def _file_hashes(config, split="train"):
    def tamper(folder):  # one byte of a data page changes after the build
        shard = _shard(folder, config, split)
        _flip(shard, pq.read_metadata(shard).row_group(0).column(1).data_page_offset + 40)
    return tamper


def _decoding(config, column, split="train"):
    def tamper(folder):  # a data page that cannot be decompressed, as the build's disk wrote it
        shard = _shard(folder, config, split)
        metadata = pq.read_metadata(shard).row_group(0)
        index = next(i for i in range(metadata.num_columns) if metadata.column(i).path_in_schema.startswith(column))
        start = metadata.column(index).data_page_offset
        data = bytearray(shard.read_bytes())
        data[start + 20: start + 60] = bytes(40)
        shard.write_bytes(bytes(data))
        rerecord(shard)
    return tamper


def _reorder_ids(config):
    def tamper(folder):  # every row is sound, but not the row the manifest regenerates at that index
        _edit(_shard(folder, config, "train"), _set("id", 0, f"{config}-train-999"))
    return tamper


def _set(name: str, row: int, value) -> Callable[[dict[str, list]], None]:
    def change(columns):
        columns[name][row] = value
    return change


def _copy_row(names: list[str], source: int, target: int) -> Callable[[dict[str, list]], None]:
    def change(columns):
        for name in names:
            columns[name][target] = columns[name][source]
    return change


# ---------------------------------------------------------------- the damage, per (family, check)
def _cogitao_card(folder):
    (folder / "README.md").unlink()


def _files_and_schema(config, split="validation"):
    def tamper(folder):
        _shard(folder, config, split).unlink()
    return tamper


def _cogitao_held_out(folder):  # an out-of-domain sequence appears in domain (with the output it makes)
    from cogen.bank import load_bank
    from cogen.engine import apply_sequence

    bank, sequence = load_bank(), ["rot90", "mirror_horizontal"]

    def change(columns):
        for row, grid in enumerate(columns["input"]):
            objects = [(r, c, bank.object(i)) for i, (r, c) in
                       zip(columns["object_ids"][row], columns["object_positions"][row], strict=True)]
            result = apply_sequence(sequence, objects, len(grid), len(grid[0]))
            if result.ok:
                columns["transformations"][row], columns["output"][row] = sequence, result.grid.tolist()
                return
        raise AssertionError("no validation row can take the out-of-domain sequence")
    _edit(_shard(folder, "V-1", "validation"), change)


def _cogitao_unique(folder):  # a test sample reappears in validation
    test = pq.read_table(_shard(folder, "V-1", "test")).to_pydict()

    def change(columns):
        for name in columns:
            if name != "id":
                columns[name][0] = test[name][0]
    _edit(_shard(folder, "V-1", "validation"), change)


def _cogitao_rederive(folder):  # one output pixel differs from what the engine makes of the input
    def change(columns):
        grid = columns["output"][0]
        grid[0][0] = (grid[0][0] + 1) % 10
    _edit(_shard(folder, "V-1", "train"), change)


def _carc_layout(folder):
    def change(columns):
        columns["query_inputs"][0][0][0][0] = 11
    _edit(_shard(folder, CARC_CONFIGS[0], "validation"), change)


def _carc_held_out(folder):  # a training triplet among the held-out episodes
    _, train = held_out_triplets(1860)
    _edit(_shard(folder, CARC_CONFIGS[0], "validation"), _set("triplet", 0, "+".join(train[0])))


def _carc_unique(folder):  # a second episode with the grammar (and examples) of the first
    names = ["study_inputs", "study_outputs", "study_roles", "query_inputs", "query_outputs", "query_roles", "triplet",
             "transformations", "transformation_kwargs", "shape_indicator", "color_indicator", "neighbor_indicator",
             "neighbor_color"]
    _edit(_shard(folder, CARC_CONFIGS[0], "validation"), _copy_row(names, 0, 1))


def _carc_split_rule(folder):  # an episode the split rule does not put there
    _edit(_shard(folder, CARC_CONFIGS[0], "validation"), _set("episode", 0, 10**6))


def _carc_static_split_rule(folder):  # a held-out query of the static variant leaks into train
    test = pq.read_table(_shard(folder, "carc-static", "test")).to_pydict()

    def change(columns):
        for name in columns:
            if name != "id":
                columns[name][0] = test[name][0]
    _edit(_shard(folder, "carc-static", "train"), change)


def _carc_rotation(folder):  # a row says rotation_type 8 turns the other way than its spec
    from cogen.carc.grammar import ROTATION_TYPE_8

    def change(columns):
        columns["rotation_type_8"][0] = next(v for v in ROTATION_TYPE_8.values() if v != columns["rotation_type_8"][0])
    _edit(_shard(folder, CARC_CONFIGS[0], "train"), change)


def _carc_rederive(folder):  # one query output cell differs from what the row's grammar makes of its input
    def change(columns):
        grid = columns["query_outputs"][0][0]
        grid[0][0] = (grid[0][0] + 1) % 10
    _edit(_shard(folder, CARC_CONFIGS[0], "train"), change)


def _programs_law(folder):  # one output cell of one function flipped
    def change(columns):
        grid = columns["outputs"][0]
        columns["outputs"][0] = [("." if grid[0][0] == "*" else "*") + grid[0][1:]] + grid[1:]
    _edit(_shard(folder, "vp-block", "test"), change)


def _programs_distinct(folder):
    function = ["inputs", "outputs", "cell_groups", "patterns", "character_rows", "sample_inputs", "sample_outputs"]
    _edit(_shard(folder, "vp-block", "test"), _copy_row(function, 0, 1))


def _programs_determinism(folder):
    _edit(_shard(folder, "vp-block", "test"), _set("id", 0, "vp-block-test-renamed"))


def _claims_packaged(config):
    def tamper(folder):  # the manifest says it is the packaged c3 (and the card lists it so)
        from cogen.card import write_card

        path = folder / "manifests" / f"{config}.json"
        manifest = json.loads(path.read_text())
        manifest["packaged_spec"] = "c3"
        path.write_text(json.dumps(manifest, indent=2) + "\n")
        write_card(folder, previews=False)
    return tamper


def _foreign_preview(config):
    def tamper(folder):  # the card's preview is some other picture
        import numpy as np

        from cogen.card._png import encode_png

        (folder / "previews").mkdir(exist_ok=True)
        (folder / "previews" / f"{config}.png").write_bytes(encode_png(np.zeros((4, 4), np.uint8), [(0, 0, 0)]))
    return tamper


def _cogitao_edited_manifest(folder):  # the manifest says seed 2 where the build used 5; the card knows better
    path = folder / "manifests" / "V-1.json"
    path.write_text(path.read_text().replace('"seed": 5', '"seed": 2'))


TAMPERS = {
    ("cogitao", "V-1", "card"): _cogitao_card,
    ("cogitao", "V-1", "files and schema"): _files_and_schema("V-1"),
    ("cogitao", "V-1", "file hashes"): _file_hashes("V-1"),
    ("cogitao", "V-1", "decoding"): _decoding("V-1", "output"),
    ("cogitao", "V-1", "held-out sequences"): _cogitao_held_out,
    ("cogitao", "V-1", "unique (input, sequence)"): _cogitao_unique,
    ("cogitao", "V-1", "re-derived outputs"): _cogitao_rederive,
    ("cogitao", "V-1", "determinism"): _reorder_ids("V-1"),
    ("cogitao", "V-1", "spec"): _claims_packaged("V-1"),
    ("cogitao", "V-1", "preview"): _foreign_preview("V-1"),
    ("carc", CARC_CONFIGS[0], "files and schema"): _files_and_schema(CARC_CONFIGS[0]),
    ("carc", CARC_CONFIGS[0], "file hashes"): _file_hashes(CARC_CONFIGS[0]),
    ("carc", CARC_CONFIGS[0], "decoding"): _decoding(CARC_CONFIGS[0], "query_outputs"),
    ("carc", CARC_CONFIGS[0], "episode layout"): _carc_layout,
    ("carc", CARC_CONFIGS[0], "held-out triplets"): _carc_held_out,
    ("carc", CARC_CONFIGS[0], "unique grammars"): _carc_unique,
    ("carc", CARC_CONFIGS[0], "split rule"): _carc_split_rule,
    ("carc", "carc-static", "split rule"): _carc_static_split_rule,
    ("carc", CARC_CONFIGS[0], "rotation convention"): _carc_rotation,
    ("carc", CARC_CONFIGS[0], "re-derived outputs"): _carc_rederive,
    ("carc", CARC_CONFIGS[0], "determinism"): _reorder_ids(CARC_CONFIGS[0]),
    ("carc", CARC_CONFIGS[0], "spec"): _claims_packaged(CARC_CONFIGS[0]),
    ("carc", CARC_CONFIGS[0], "preview"): _foreign_preview(CARC_CONFIGS[0]),
    ("programs", "vp-block", "files and schema"): _files_and_schema("vp-block", "test"),
    ("programs", "vp-block", "file hashes"): _file_hashes("vp-block", "test"),
    ("programs", "vp-block", "decoding"): _decoding("vp-block", "outputs", "test"),
    ("programs", "vp-block", "function law"): _programs_law,
    ("programs", "vp-block", "distinct functions"): _programs_distinct,
    ("programs", "vp-block", "determinism"): _programs_determinism,
    ("programs", "vp-block", "spec"): _claims_packaged("vp-block"),
    ("programs", "vp-block", "preview"): _foreign_preview("vp-block"),
}


@pytest.mark.parametrize("family, config, check", list(TAMPERS), ids=[" / ".join(k) for k in TAMPERS])
def test_each_check_reports_the_damage_it_exists_for(built, tmp_path, family, config, check):
    folder = tmp_path / family
    shutil.copytree(built[family], folder)
    TAMPERS[family, config, check](folder)
    regenerate = 2 if check == "determinism" else 0  # other damage would also fail a regeneration
    bad = {(c.config or config, c.name) for c in failed(verify(folder, shards_per_config=regenerate))}
    assert bad == {(config, check)}


def test_untouched_builds_pass_and_every_check_has_a_tamper(built):
    assert {family for family, _, _ in TAMPERS} == set(FAMILIES) == set(built), "every family needs its tampers"
    for family, folder in built.items():
        checks = verify(folder, shards_per_config=2)
        assert not failed(checks), failed(checks)
        names = {c.name for c in checks}
        covered = {check for f, _, check in TAMPERS if f == family}
        assert names == covered | ({"card"} if family != "cogitao" else set()), family


def test_the_static_split_rule_names_the_leaked_episode(built, tmp_path):
    folder = tmp_path / "carc"
    shutil.copytree(built["carc"], folder)
    _carc_static_split_rule(folder)
    detail = next(c.detail for c in verify(folder, shards_per_config=0) if c.name == "split rule" and not c.ok)
    test = pq.read_table(_shard(folder, "carc-static", "test"), columns=["episode", "query_roles"]).to_pydict()
    assert test["query_roles"][0] == [KINDS[-1]]  # the leaked row is a level-2 query of the held-out episode
    assert detail == f"1 held-out queries in train (episodes [{test['episode'][0]}])"


def test_an_edited_manifest_fails_the_card_check(built, tmp_path):
    folder = tmp_path / "cogitao"
    shutil.copytree(built["cogitao"], folder)
    _cogitao_edited_manifest(folder)
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
    spec.write_text(TINY_COGITAO)
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
    return shared_build("output: {object_frames: true}\n" + TINY_COGITAO)


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
    _edit(_shard(folder, "V-1", "train"), change)
    bad = failed(verify(folder, shards_per_config=0))
    assert [(c.config, c.name) for c in bad] == [("V-1", "re-derived outputs")]
    assert f"row 0: {outcome}" in bad[0].detail
