"""Re-signed forgeries of a finished folder, checked at every level of ``cogen verify`` (issue 36).

The fourth reliability review forged 65 folders the way someone holding cogen's code would: a
changed split is encoded again with cogen's own writer (its footer stamp and statistics kept
unless the forgery is about them), its record (SHA-256, bytes, rows, row groups) and row count
written into the manifest, and the card signed again as ``cogen card`` does; card forgeries edit
README.md afterwards. This file makes the same 64 forgeries of a folder (the 65th, an installed
object bank mirrored and re-signed, is the last test) and states, for each, what every level must
say. Every forgery that changes what ``datasets.load_dataset`` returns, or a claim the card makes
about the data, must fail **every** level, the default included (``cogen push`` runs the default):

* ``EVERY_LEVEL`` (the default, ``--full`` and ``--regenerate`` fail it);
* ``REGENERATE_ONLY``: the rows a user loads are the true rows; only the bytes or the generation
  statistics changed (a shard encoded again, with other row groups or another compression;
  statistics on the card): ``--regenerate`` rebuilds and compares every byte, the other levels
  compare rows;
* ``TRUTHFUL``: the folder says what it is (a real build with seed 2 or scale 0.03, the byte
  counts of the card, a licence and text of the card that ``cogen push`` renders again, a folder
  under ``data/`` that no card and no push reads); a build from a modified ``c3.yaml`` is one of
  them because its manifest and card say it is not cogen's packaged spec.

The reference is the review's: C3-1 of the packaged ``c3`` at ``--scale 0.02`` (2,080 rows: train
2,000, the other four splits 20 each, one shard each).
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cogen.card import write_card
from cogen.folder import arrow_schema, shard_record, write_json_atomic
from cogen.pipeline import build
from cogen.pipeline.parquet import read_stamp, stamped_schema, write_parquet, writer_options
from cogen.pipeline.verify import REGENERATED_ROWS, failed, verify

CONFIG = "C3-1"
SPLITS = ("train", "validation", "test", "validation_ood", "test_ood")
EVERY_LEVEL, REGENERATE_ONLY, TRUTHFUL = (True, True, True), (False, False, True), (False, False, False)
LEVELS = ("default", "full", "regenerate")
OPTIONS = {"scale": 0.02, "workers": 1, "only": [CONFIG]}
#: ``--regenerate``'s object-bank check compares the installed bank with one bank rebuild, made once here.
pytestmark = pytest.mark.usefixtures("bank_rebuilt_once")

#: The review's modified c3.yaml: C3-1 trains on the held-out triple [translate_up]*3.
HELD_OUT_TRIPLE = "        - [translate_up, translate_up, translate_up]\n"


def _evil_spec(path: Path) -> Path:
    from cogen._resources import packaged_specs

    text = packaged_specs()["c3"].read_text()
    moved = text.replace("        - [mirror_horizontal, rot90]\n        # [mirror_horizontal, mirror_horizontal] left out",
                         "        - [mirror_horizontal, rot90]\n" + HELD_OUT_TRIPLE +
                         "        # [mirror_horizontal, mirror_horizontal] left out", 1)
    moved = moved.replace("    out_of_domain:\n      sequences:\n" + HELD_OUT_TRIPLE, "    out_of_domain:\n      sequences:\n", 1)
    assert moved.count(HELD_OUT_TRIPLE) == text.count(HELD_OUT_TRIPLE), "c3.yaml changed: update the forgery"
    path.write_text(moved)
    return path


def mirrored_bank(target: Path) -> Path:
    """A copy of the installed object bank with every object mirrored left-right, its manifest re-signed."""
    import numpy as np

    from cogen._resources import objects_dir
    from cogen.bank._store import encode_container, read_container, read_manifest, write_files

    source = objects_dir()
    manifest = read_manifest(source)
    arrays, columns, meta = read_container(source / "bank.bin", None)
    pixels = np.array(arrays["pixels"])
    for start, stop, (height, width) in zip(arrays["offsets"][:-1], arrays["offsets"][1:], arrays["shapes"], strict=True):
        pixels[start:stop] = pixels[start:stop].reshape(height, width)[:, ::-1].ravel()
    data = encode_container(pixels, arrays["offsets"], arrays["shapes"], columns, meta)
    files = {name: (source / name).read_bytes() for name in manifest["files"] if name != "bank.bin"}
    from cogen.bank._store import sha256_hex

    write_files(target, {**files, "bank.bin": data}, {**manifest, "bank_sha256": sha256_hex(data)})
    return target


@pytest.fixture(scope="module")
def refs(tmp_path_factory) -> dict[str, Path]:
    """The reference build and the seed-2 build the forgeries take rows from (module scope, read-only)."""
    root = tmp_path_factory.mktemp("resigned")
    folders = {"ref": root / "ref", "seed2": root / "seed2"}
    build("c3", folders["ref"], **OPTIONS)
    build("c3", folders["seed2"], seed=2, **OPTIONS)
    return folders


@pytest.fixture(scope="module")
def all_refs(refs, tmp_path_factory) -> dict[str, Path]:
    """``refs`` and the other builds of the review: scale 0.03, the modified c3.yaml, a mirrored object bank."""
    root = tmp_path_factory.mktemp("resigned-more")
    folders = {**refs, "scale003": root / "scale003", "evilspec": root / "evilspec", "evilbank": root / "evilbank"}
    build("c3", folders["scale003"], **{**OPTIONS, "scale": 0.03})
    build(_evil_spec(root / "c3.yaml"), folders["evilspec"], **OPTIONS)
    folders["bank"] = mirrored_bank(root / "bank")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("cogen._resources.objects_dir", lambda: folders["bank"])
        build("c3", folders["evilbank"], **OPTIONS)
    return folders


class Forger:
    """A copy of the reference folder, changed with cogen's own code and signed again."""

    def __init__(self, folder: Path, refs: dict[str, Path]):
        self.folder, self.refs = folder, refs
        self.path = folder / "manifests" / f"{CONFIG}.json"
        self.manifest = json.loads(self.path.read_text())

    def file(self, split: str) -> str:
        return self.manifest["splits"][split]["files"][0]

    def rows(self, split: str, source: str | None = None) -> pa.Table:
        folder = self.refs[source] if source else self.folder
        return pq.read_table(folder / self.file(split)).replace_schema_metadata(None)

    def put(self, split: str, table: pa.Table, stamp: dict | None = None, stats: dict | None = None,
            group_rows: int | None = None, **encoding) -> None:
        """Encode ``table`` as the split's shard with cogen's writer, stamp and statistics kept but for the
        given changes, and record it in the manifest (rows, SHA-256, bytes, row groups)."""
        path = self.folder / self.file(split)
        old_stamp, old_stats = read_stamp(path)
        stamp, stats = {**old_stamp, **(stamp or {})}, {**old_stats, **(stats or {})}
        schema = arrow_schema(self.manifest["columns"])
        table = table.cast(schema.remove_metadata())
        if group_rows or encoding:
            stamped = stamped_schema(schema, stamp)
            options = {**writer_options(), **encoding}
            if "compression" in encoding:  # another codec: its own default level
                options.pop("compression_level")
            with pq.ParquetWriter(path, stamped, **options) as writer:
                for start in range(0, table.num_rows, group_rows or max(1, table.num_rows)):
                    writer.write_table(table.slice(start, group_rows or table.num_rows).cast(stamped))
                writer.add_key_value_metadata({"cogen_stats": json.dumps(stats, sort_keys=True)})
        else:
            write_parquet(path, schema, iter([table]), stamp, stats)
        self.record(split)

    def record(self, split: str) -> None:
        record = shard_record(self.folder / self.file(split))
        self.manifest["splits"][split]["shards"][self.file(split)] = record
        self.manifest["splits"][split]["rows"] = record["rows"]

    def sign(self) -> None:
        """Write the manifest and sign the card again, as `cogen card` does."""
        write_json_atomic(self.path, self.manifest)
        write_card(self.folder)

    def card(self, old: str, new: str) -> None:
        text = (self.folder / "README.md").read_text()
        assert old in text, old
        (self.folder / "README.md").write_text(text.replace(old, new, 1))

    def take_folder(self, name: str) -> None:
        shutil.rmtree(self.folder)
        shutil.copytree(self.refs[name], self.folder)


def renumber(table: pa.Table, split: str) -> pa.Table:
    ids = pa.array([f"{CONFIG}-{split}-{i}" for i in range(table.num_rows)], pa.string())
    return table.set_column(table.column_names.index("id"), "id", ids)


def put_row(table: pa.Table, index: int, row: pa.Table) -> pa.Table:
    return pa.concat_tables([table.slice(0, index), row.cast(table.schema), table.slice(index + 1)])


def set_cell(table: pa.Table, column: str, index: int, value) -> pa.Table:
    rows = table.to_pylist()
    rows[index][column] = value
    return pa.Table.from_pylist(rows, schema=table.schema)


def recoloured(grid: list[list[int]]) -> list[list[int]]:
    """The grid with its first coloured cell given the next colour."""
    grid = [list(row) for row in grid]
    for row in grid:
        for x, value in enumerate(row):
            if value:
                row[x] = value % 9 + 1
                return grid
    grid[0][0] = 3
    return grid


def swap(f: Forger, a: str, i: int, b: str, j: int, number: bool = True) -> None:
    ta, tb = f.rows(a), f.rows(b)
    ta, tb = put_row(ta, i, tb.slice(j, 1)), put_row(tb, j, ta.slice(i, 1))
    f.put(a, renumber(ta, a) if number else ta)
    f.put(b, renumber(tb, b) if number else tb)


def reorder(f: Forger, split: str, order: Callable[[int], list[int]], number: bool = True) -> None:
    table = f.rows(split)
    table = table.take(pa.array(order(table.num_rows), pa.int64()))
    f.put(split, renumber(table, split) if number else table)


def with_ids(f: Forger, split: str, change: Callable[[list[str]], None]) -> None:
    table = f.rows(split)
    ids = table.column("id").to_pylist()
    change(ids)
    f.put(split, table.set_column(table.column_names.index("id"), "id", pa.array(ids, pa.string())))


def shuffled(n: int) -> list[int]:
    order = list(range(n))
    random.Random(5).shuffle(order)
    return order


def two_swapped(n: int) -> list[int]:
    order = list(range(n))
    order[3], order[4] = order[4], order[3]
    return order


def _seed2_manifest(f: Forger) -> None:
    other = json.loads((f.refs["seed2"] / "manifests" / f"{CONFIG}.json").read_text())
    other["splits"] = f.manifest["splits"]  # seed 1's shards and counts under seed 2's manifest
    f.manifest = other


def _copy_data(f: Forger, source: str) -> None:
    for split in SPLITS:
        shutil.copyfile(f.refs[source] / f.file(split), f.folder / f.file(split))
        f.record(split)


def _swap_card_paths(f: Forger) -> None:
    text = (f.folder / "README.md").read_text()
    validation, test = f"path: data/{CONFIG}/validation-*.parquet", f"path: data/{CONFIG}/test-*.parquet"
    (f.folder / "README.md").write_text(text.replace(validation, "@").replace(test, validation).replace("@", test))


def _edit_stats(f: Forger) -> None:
    f.put("test", f.rows("test"), stats={"accepted": 1, "out_of_grid": 10**9})
    f.manifest["splits"]["test"]["stats"].update({"accepted": 1, "out_of_grid": 10**9})


def _other_encoding(f: Forger) -> None:
    f.manifest["versions"] = {**f.manifest["versions"], "numpy": "2.0.0"}
    f.put("test", f.rows("test"), compression="snappy")


def _five_rows_swapped(f: Forger) -> None:
    test, validation = f.rows("test"), f.rows("validation")
    f.put("test", renumber(pa.concat_tables([validation.slice(0, 5), test.slice(5)]), "test"))
    f.put("validation", renumber(pa.concat_tables([test.slice(0, 5), validation.slice(5)]), "validation"))


def _scale(f: Forger) -> None:
    f.manifest["inputs"]["scale"] = 1.0


def _description(f: Forger) -> None:
    f.manifest["description"] = "Official paper split, verified by the authors; test_ood never seen in training."


def _num_bytes(f: Forger) -> None:
    for info in f.manifest["splits"].values():
        info["num_bytes"] *= 100


#: name -> (what the forger does, (default, --full, --regenerate) must fail). A forgery signs the
#: card again (Forger.sign) unless its name starts with "card_", "preview_", "extra_" or "consistent_".
FORGERIES: dict[str, tuple[Callable[[Forger], None], tuple[bool, bool, bool]]] = {
    # one row's content
    "train_output_pixel": (lambda f: f.put("train", set_cell(t := f.rows("train"), "output", 7,
                                                             recoloured(t.column("output")[7].as_py()))), EVERY_LEVEL),
    "test_output_is_input": (lambda f: f.put("test", set_cell(t := f.rows("test"), "output", 3,
                                                              t.column("input")[3].as_py())), EVERY_LEVEL),
    "valood_output_pixel": (lambda f: f.put("validation_ood", set_cell(
        t := f.rows("validation_ood"), "output", 2, recoloured(t.column("output")[2].as_py()))), EVERY_LEVEL),
    "test_input_output_from_seed2": (lambda f: f.put("test", set_cell(set_cell(
        f.rows("test"), "input", 4, f.rows("test", "seed2").column("input")[4].as_py()), "output", 4,
        f.rows("test", "seed2").column("output")[4].as_py())), EVERY_LEVEL),
    "test_transformations_relabelled": (lambda f: f.put("test", set_cell(t := f.rows("test"), "transformations", 0,
        ["translate_up"] if t.column("transformations")[0].as_py() == ["rot90"] else ["rot90"])), EVERY_LEVEL),
    "test_object_positions_shifted": (lambda f: f.put("test", set_cell(t := f.rows("test"), "object_positions", 1, [
        [p[0], p[1] + 1] if k == 0 else p for k, p in enumerate(t.column("object_positions")[1].as_py())])),
        EVERY_LEVEL),
    "test_n_objects_changed": (lambda f: f.put("test", set_cell(f.rows("test"), "n_objects", 2, 3)), EVERY_LEVEL),
    "test_object_ids_changed": (lambda f: f.put("test", set_cell(t := f.rows("test"), "object_ids", 5, [
        (i + 1) % 20000 if k == 0 else i for k, i in enumerate(t.column("object_ids")[5].as_py())])), EVERY_LEVEL),
    # valid rows of another build
    "test_row_from_seed2": (lambda f: f.put("test", put_row(f.rows("test"), 4, f.rows("test", "seed2").slice(4, 1))),
                            EVERY_LEVEL),
    "validation_row_from_seed2": (lambda f: f.put("validation", put_row(
        f.rows("validation"), 0, f.rows("validation", "seed2").slice(0, 1))), EVERY_LEVEL),
    "train_row_from_seed2": (lambda f: f.put("train", put_row(f.rows("train"), 10, f.rows("train", "seed2").slice(10, 1))),
                             EVERY_LEVEL),
    "test_split_from_seed2": (lambda f: f.put("test", f.rows("test", "seed2")), EVERY_LEVEL),
    "validation_split_from_seed2": (lambda f: f.put("validation", f.rows("validation", "seed2")), EVERY_LEVEL),
    "valood_split_from_seed2": (lambda f: f.put("validation_ood", f.rows("validation_ood", "seed2")), EVERY_LEVEL),
    # rows moved between splits
    "swap_test_validation_ids_kept": (lambda f: swap(f, "test", 0, "validation", 0, number=False), EVERY_LEVEL),
    "swap_test_validation_renumbered": (lambda f: swap(f, "test", 0, "validation", 0), EVERY_LEVEL),
    "swap_test_validation_5rows_renumbered": (_five_rows_swapped, EVERY_LEVEL),
    "swap_train_test_renumbered": (lambda f: swap(f, "train", 5, "test", 5), EVERY_LEVEL),
    "swap_valood_testood_renumbered": (lambda f: swap(f, "validation_ood", 1, "test_ood", 1), EVERY_LEVEL),
    "swap_validation_valood_renumbered": (lambda f: swap(f, "validation", 2, "validation_ood", 2), EVERY_LEVEL),
    "testood_row_into_train": (lambda f: f.put("train", renumber(put_row(f.rows("train"), 0, f.rows("test_ood").slice(0, 1)),
                                                                 "train")), EVERY_LEVEL),
    "test_row_copied_into_train": (lambda f: f.put("train", renumber(put_row(f.rows("train"), 1,
                                                                             f.rows("test").slice(1, 1)), "train")),
                                   EVERY_LEVEL),
    # rows reordered
    "test_reversed_ids_kept": (lambda f: reorder(f, "test", lambda n: list(range(n))[::-1], number=False), EVERY_LEVEL),
    "test_reversed_renumbered": (lambda f: reorder(f, "test", lambda n: list(range(n))[::-1]), EVERY_LEVEL),
    "validation_rotated_renumbered": (lambda f: reorder(f, "validation", lambda n: [(i + 1) % n for i in range(n)]),
                                      EVERY_LEVEL),
    "valood_two_rows_swapped_renumbered": (lambda f: reorder(f, "validation_ood", two_swapped), EVERY_LEVEL),
    "train_shuffled_renumbered": (lambda f: reorder(f, "train", shuffled), EVERY_LEVEL),
    "test_ids_of_two_rows_swapped": (lambda f: with_ids(f, "test", lambda ids: ids.__setitem__(
        slice(2, 4), [ids[3], ids[2]])), EVERY_LEVEL),
    "test_id_duplicated": (lambda f: with_ids(f, "test", lambda ids: ids.__setitem__(3, ids[2])), EVERY_LEVEL),
    # rows dropped or added, counts "fixed"
    "test_last_row_dropped": (lambda f: f.put("test", (t := f.rows("test")).slice(0, t.num_rows - 1),
                                              stamp={"stop": t.num_rows - 1}), EVERY_LEVEL),
    "test_last_row_dropped_stamp_kept": (lambda f: f.put("test", (t := f.rows("test")).slice(0, t.num_rows - 1)),
                                         EVERY_LEVEL),
    "validation_first_row_dropped_renumbered": (lambda f: f.put("validation", renumber(f.rows("validation").slice(1),
                                                                                       "validation")), EVERY_LEVEL),
    "train_reencoded_4_row_groups": (lambda f: f.put("train", f.rows("train"), group_rows=500), REGENERATE_ONLY),
    "train_row_group_dropped": (lambda f: f.put("train", f.rows("train").slice(0, 1500), group_rows=500), EVERY_LEVEL),
    "test_only_row_group_dropped": (lambda f: f.put("test", f.rows("test").slice(0, 0)), EVERY_LEVEL),
    "test_seed2_row_appended": (lambda f: f.put("test", renumber(pa.concat_tables(
        [f.rows("test"), f.rows("test", "seed2").slice(0, 1)]), "test")), EVERY_LEVEL),
    "valood_seed2_rows_appended": (lambda f: f.put("validation_ood", renumber(pa.concat_tables(
        [f.rows("validation_ood"), f.rows("validation_ood", "seed2").slice(0, 10)]), "validation_ood")), EVERY_LEVEL),
    # footer and manifest fields
    "footer_stats_and_manifest_stats_edited": (_edit_stats, REGENERATE_ONLY),
    "footer_stamp_other_rows": (lambda f: f.put("test", f.rows("test"), stamp={"start": 500, "stop": 520}), EVERY_LEVEL),
    "manifest_description_edited": (_description, EVERY_LEVEL),
    "manifest_num_bytes_edited": (_num_bytes, TRUTHFUL),
    "manifest_regenerated_list_edited": (lambda f: f.manifest["splits"]["train"].update(regenerated=[[0, 1]]),
                                         EVERY_LEVEL),
    "manifest_versions_edited_and_test_reencoded": (_other_encoding, TRUTHFUL),
    "manifest_inputs_scale_edited": (_scale, EVERY_LEVEL),
    # seed, scale, spec
    "manifest_seed_2_fingerprint_kept": (lambda f: (f.manifest.update(seed=2), f.manifest["inputs"].update(seed=2)),
                                         EVERY_LEVEL),
    "manifest_seed2_consistent_data_seed1": (_seed2_manifest, EVERY_LEVEL),
    "manifest_spec_grid_edited": (lambda f: f.manifest["spec"].update(grid={"height": [10, 10], "width": [10, 10]}),
                                  EVERY_LEVEL),
    "consistent_rebuild_seed2": (lambda f: f.take_folder("seed2"), TRUTHFUL),
    "consistent_rebuild_scale003": (lambda f: f.take_folder("scale003"), TRUTHFUL),
    "consistent_rebuild_modified_spec_same_labels": (lambda f: f.take_folder("evilspec"), TRUTHFUL),
    "modified_spec_data_under_packaged_manifest": (lambda f: _copy_data(f, "evilspec"), EVERY_LEVEL),
    # the object bank
    "consistent_bank_mirrored_folder_built_on_it": (lambda f: f.take_folder("evilbank"), EVERY_LEVEL),
    "bank_mirrored_data_manifest_claims_packaged_bank": (lambda f: _copy_data(f, "evilbank"), EVERY_LEVEL),
    # the card (nothing signs it but the manifests' SHA-256 it lists)
    "card_train_data_files_to_test": (lambda f: f.card(f"path: data/{CONFIG}/train-*.parquet",
                                                       f"path: data/{CONFIG}/test-*.parquet"), EVERY_LEVEL),
    "card_train_data_files_glob_all_splits": (lambda f: f.card(f"path: data/{CONFIG}/train-*.parquet",
                                                               f"path: data/{CONFIG}/*.parquet"), EVERY_LEVEL),
    "card_validation_test_paths_swapped": (_swap_card_paths, EVERY_LEVEL),
    "card_test_ood_path_to_test": (lambda f: f.card(f"path: data/{CONFIG}/test_ood-*.parquet",
                                                    f"path: data/{CONFIG}/test-*.parquet"), EVERY_LEVEL),
    "card_feature_dtype_changed": (lambda f: f.card("  - name: n_objects\n    dtype: int16",
                                                    "  - name: n_objects\n    dtype: float32"), EVERY_LEVEL),
    "card_license_and_body_edited": (lambda f: (f.card("license: apache-2.0", "license: cc-by-nc-4.0"),
                                                f.card("2,080 rows", "208,000 rows")), TRUTHFUL),
    "card_extra_config_listed": (lambda f: f.card("configs:\n", f"configs:\n- config_name: {CONFIG}-extra\n  data_files:\n"
                                                  f"  - split: train\n    path: data/{CONFIG}/test-*.parquet\n"),
                                 EVERY_LEVEL),
    "card_default_removed": (lambda f: f.card("  default: true\n", ""), EVERY_LEVEL),
    "preview_png_replaced": (lambda f: shutil.copyfile(f.refs["evilbank"] / "previews" / f"{CONFIG}.png",
                                                       f.folder / "previews" / f"{CONFIG}.png"), EVERY_LEVEL),
    # files nobody listed
    "extra_unlisted_data_folder": (lambda f: (f.folder / "data" / "C3-9").mkdir() or shutil.copyfile(
        f.folder / f.file("test"), f.folder / "data" / "C3-9" / "train-00000-of-00001.parquet"), TRUTHFUL),
    "extra_shard_in_config_folder": (lambda f: shutil.copyfile(
        f.folder / f.file("test"), f.folder / "data" / CONFIG / "test-00001-of-00001.parquet"), EVERY_LEVEL),
}
#: Forgeries the fast lane runs at the default level: one of each finding the review ranked (F1-F5).
FAST = ("card_test_ood_path_to_test", "manifest_description_edited", "test_reversed_renumbered",
        "test_last_row_dropped", "validation_row_from_seed2", "swap_valood_testood_renumbered")
UNSIGNED = ("card_", "preview_", "extra_", "consistent_")


def forge(name: str, refs: dict[str, Path], folder: Path) -> Path:
    shutil.copytree(refs["ref"], folder, ignore=shutil.ignore_patterns("lock"))
    forger = Forger(folder, refs)
    FORGERIES[name][0](forger)
    if not name.startswith(UNSIGNED):
        forger.sign()
    return folder


def failures(folder: Path, level: str) -> list[str]:
    checks = verify(folder, full=level == "full", regenerate=level == "regenerate", workers=1)
    return [f"{c.config or 'folder'}: {c.name}: {c.detail}" for c in failed(checks)]


def test_the_review_s_sixty_four_folder_forgeries_are_all_here():
    assert len(FORGERIES) == 64 and set(FAST) <= set(FORGERIES)
    harmless = {name for name, (_, expected) in FORGERIES.items() if not expected[0]}
    assert harmless == {"train_reencoded_4_row_groups", "footer_stats_and_manifest_stats_edited",
                        "manifest_num_bytes_edited", "manifest_versions_edited_and_test_reencoded",
                        "consistent_rebuild_seed2", "consistent_rebuild_scale003",
                        "consistent_rebuild_modified_spec_same_labels", "card_license_and_body_edited",
                        "extra_unlisted_data_folder"}


@pytest.mark.parametrize("name", FAST)
def test_the_default_level_catches_each_ranked_finding(refs, tmp_path, name):
    assert failures(forge(name, refs, tmp_path / name), "default")


@pytest.mark.slow
@pytest.mark.parametrize("name", list(FORGERIES))
def test_every_level_says_what_it_must_of_each_forgery(all_refs, tmp_path, name):
    folder = forge(name, all_refs, tmp_path / name)
    for level, must_fail in zip(LEVELS, FORGERIES[name][1], strict=True):
        found = failures(folder, level)
        assert bool(found) == must_fail, f"{level}: {found or 'all checks passed'}"


@pytest.mark.slow
def test_a_build_from_a_modified_packaged_spec_says_so_in_verify_and_on_the_card(all_refs):
    """F2: the modified c3.yaml keeps its name, but neither its manifest nor its card claims the packaged spec."""
    folder = all_refs["evilspec"]
    manifest = json.loads((folder / "manifests" / f"{CONFIG}.json").read_text())
    assert manifest["spec_file"] == "c3.yaml" and manifest["packaged_spec"] is None
    spec = next(c for c in verify(folder, sample=0) if c.name == "spec")
    assert spec.ok and "not recorded as one of cogen's packaged specs" in spec.detail
    assert "`c3.yaml`, a spec file of the builder's own, **not one of cogen's packaged specs**" in \
        (folder / "README.md").read_text()
    forged = folder.parent / "claims-packaged"
    shutil.copytree(folder, forged, ignore=shutil.ignore_patterns("lock"))
    manifest["packaged_spec"] = "c3"
    write_json_atomic(forged / "manifests" / f"{CONFIG}.json", manifest)
    write_card(forged)
    spec = next(c for c in verify(forged, sample=0) if c.name == "spec")
    assert not spec.ok and "names the packaged spec c3 but is not what it makes" in spec.detail
    assert "(spec, fingerprint differ)" in spec.detail  # the held-out triple moved into training


@pytest.mark.slow
def test_a_mirrored_installed_bank_is_caught_by_regenerate_alone(all_refs, monkeypatch):
    """The 65th: the verifier's own installed bank mirrored and re-signed, and a folder built on it. Only a
    rebuild of the bank can tell (decided: the default level trusts the installed cogen and its data)."""
    monkeypatch.setattr("cogen._resources.objects_dir", lambda: all_refs["bank"])
    assert not failures(all_refs["evilbank"], "default")
    found = failures(all_refs["evilbank"], "regenerate")
    assert any("object bank" in line and "not the one `cogen objects build` makes" in line for line in found), found


def test_the_cli_default_sample_is_the_library_s():
    from cogen.cli.build import DEFAULT_SAMPLE

    assert DEFAULT_SAMPLE == REGENERATED_ROWS


@pytest.mark.parametrize("change", ["a shard's SHA-256", "missing"])
def test_croissant_json_must_describe_what_the_manifests_describe(refs, tmp_path, change):
    """croissant.json, written with the card, lists every shard with its SHA-256: a forged or lost one fails
    every level (it is rendered again from the manifests, as the card's YAML header is)."""
    folder = tmp_path / "copy"
    shutil.copytree(refs["ref"], folder, ignore=shutil.ignore_patterns("lock"))
    path = folder / "croissant.json"
    if change == "missing":
        path.unlink()
    else:
        croissant = json.loads(path.read_text())
        croissant["distribution"][0]["sha256"] = "0" * 64
        path.write_text(json.dumps(croissant))
    card = next(c for c in verify(folder, sample=0) if c.name == "card")
    assert not card.ok and "croissant.json" in card.detail
