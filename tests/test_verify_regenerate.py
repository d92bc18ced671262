"""``cogen verify --regenerate``: the check no re-signing can fool (issue 26, item 3).

Every tamper below is *re-signed*: the shard re-encoded with cogen's own writer (footer stamp and
statistics kept), its record in the manifest updated, the card rewritten, as ``cogen card`` would.
The hash chain then holds, so the file-hash and card checks pass; regenerating every shard from
the spec must catch each one and name the shard and the first differing rows.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_build import TINY as BUILD_TINY
from typer.testing import CliRunner

from cogen.card import write_card
from cogen.folder import arrow_schema, shard_record
from cogen.pipeline import build
from cogen.pipeline.parquet import read_stamp, write_parquet
from cogen.pipeline.verify import failed, verify

#: ``--regenerate``'s object-bank check compares the installed bank with one bank rebuild, made once here.
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("bank_rebuilt_once")]

#: test_build's tiny spec, its first experiment alone, with splits large enough to shuffle and cut.
TINY = BUILD_TINY[:BUILD_TINY.index("  T-2:")].replace("train: 120, validation: 20, test: 20", "train: 60, validation: 12, "
                                                    "test: 12").replace("_ood: 10", "_ood: 8")


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> tuple[Path, Path]:
    """A clean build, and the same spec built with another seed (a source of valid foreign rows)."""
    root = tmp_path_factory.mktemp("regenerate")
    spec = root / "tiny.yaml"
    spec.write_text(TINY)
    build(spec, root / "clean", workers=1, rows_per_shard=40)
    build(spec, root / "other", workers=1, rows_per_shard=40, seed=4)
    return root / "clean", root / "other"


@pytest.fixture
def folder(builds, tmp_path) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(builds[0], copy)
    return copy


def _resign(folder: Path, relpath: str, table: pa.Table, stamp: dict | None = None, rows: int | None = None) -> None:
    """Write ``table`` as the shard ``relpath`` with cogen's writer and re-sign manifest and card."""
    path = folder / relpath
    old_stamp, stats = read_stamp(path)
    manifest_path = folder / "manifests" / "T-1.json"
    manifest = json.loads(manifest_path.read_text())
    write_parquet(path, arrow_schema(manifest["columns"]), iter([table]), stamp or old_stamp, stats)
    split = Path(relpath).name.split("-")[0]
    manifest["splits"][split]["shards"][relpath] = shard_record(path)
    if rows is not None:
        manifest["splits"][split]["rows"] = rows
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    write_card(folder, force=True)


def _table(folder: Path, relpath: str) -> pa.Table:
    return pq.read_table(folder / relpath).replace_schema_metadata(None)


def _replace_row(table: pa.Table, index: int, row: pa.Table) -> pa.Table:
    return pa.concat_tables([table.slice(0, index), row, table.slice(index + 1)])


def _substituted(folder, other):  # one test row replaced by a valid row of the seed-4 build (same id)
    shard = "data/T-1/test-00000-of-00001.parquet"
    _resign(folder, shard, _replace_row(_table(folder, shard), 2, _table(other, shard).slice(2, 1)))
    return shard, "row 2"


def _shuffled(folder, other):  # validation rows rotated by one
    shard = "data/T-1/validation-00000-of-00001.parquet"
    table = _table(folder, shard)
    _resign(folder, shard, pa.concat_tables([table.slice(1), table.slice(0, 1)]))
    return shard, "row 0"


def _swapped_ids(folder, other):
    shard = "data/T-1/validation-00000-of-00001.parquet"
    table = _table(folder, shard)
    ids = table.column("id").to_pylist()
    ids[3], ids[4] = ids[4], ids[3]
    _resign(folder, shard, table.set_column(0, "id", pa.array(ids, pa.string())))
    return shard, "row 3 (id 'T-1-validation-4' in the folder) differs from a fresh build's in id"


def _flipped_bit(folder, other):  # 0x31 '1' -> 0x30 '0' in one id
    shard = "data/T-1/test_ood-00000-of-00001.parquet"
    table = _table(folder, shard)
    ids = table.column("id").to_pylist()
    ids[5] = ids[5].replace("T-1", "T-0")
    _resign(folder, shard, table.set_column(0, "id", pa.array(ids, pa.string())))
    return shard, "row 5 (id 'T-0-test_ood-5' in the folder)"


def _dropped_rows(folder, other):  # the last 3 test rows dropped, the counts "fixed" in manifest and card
    shard = "data/T-1/test-00000-of-00001.parquet"
    table = _table(folder, shard)
    stamp, _ = read_stamp(folder / shard)
    _resign(folder, shard, table.slice(0, table.num_rows - 3), {**stamp, "stop": table.num_rows - 3},
            rows=table.num_rows - 3)
    return "the manifest records train 60, validation 12, test 9,", "the spec makes splits of train 60, validation 12, test 12"


def _edited_stats(folder, other):  # the manifest's statistics of a split made up, re-signed
    manifest_path = folder / "manifests" / "T-1.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["splits"]["train"]["stats"]["accepted"] = 1
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    write_card(folder, force=True)
    return "statistics of train", "the manifest's statistics of train differ from a fresh build's"


def _edited_stamp(folder, other):  # the footer stamp claims other rows, re-signed
    shard = "data/T-1/validation_ood-00000-of-00001.parquet"
    stamp, _ = read_stamp(folder / shard)
    _resign(folder, shard, _table(folder, shard), {**stamp, "start": 500, "stop": 508})
    return shard, "its footer stamp is not a fresh build's"


TAMPERS = {"substituted valid row": _substituted, "shuffled rows": _shuffled, "swapped ids": _swapped_ids,
           "one flipped bit in an id": _flipped_bit, "dropped rows with fixed counts": _dropped_rows,
           "edited statistics": _edited_stats, "edited footer stamp": _edited_stamp}


def test_a_clean_build_passes_every_level(builds):
    checks = verify(builds[0], regenerate=True)
    assert not failed(checks), failed(checks)
    regenerated = {c.config: c.detail for c in checks if c.name == "regenerated"}
    assert "every row, id and order equal; files byte-identical" in regenerated["T-1"]
    assert [c.name for c in checks if not c.config] == ["card", "object bank"]


@pytest.mark.parametrize("tamper", sorted(TAMPERS))
def test_every_re_signed_tamper_is_caught_by_regenerating(tamper, builds, folder):
    where, detail = TAMPERS[tamper](folder, builds[1])
    plain = {c.name: c.ok for c in verify(folder, shards_per_config=0)}
    assert plain["card"] and plain["file hashes"]  # the re-signing holds: no hash can tell
    bad = {c.name: c.detail for c in failed(verify(folder, regenerate=True))}
    assert "regenerated" in bad, bad
    assert where in bad["regenerated"] and detail in bad["regenerated"], bad["regenerated"]


def test_the_worker_count_does_not_change_the_verdict(builds, folder):
    _shuffled(folder, builds[1])
    one, two = verify(folder, regenerate=True, workers=1), verify(folder, regenerate=True, workers=2)
    assert [(c.name, c.ok, c.detail) for c in one] == [(c.name, c.ok, c.detail) for c in two]


@pytest.fixture
def resigned_bank(tmp_path) -> Path:
    """A copy of the shipped object bank with one pixel recoloured and its manifest re-signed."""
    import hashlib

    import numpy as np

    from cogen._resources import objects_dir
    from cogen.bank._store import _PREFIX

    bank = tmp_path / "objects"
    shutil.copytree(objects_dir(), bank)
    data = bytearray((bank / "bank.bin").read_bytes())
    pixel = _PREFIX + int(np.frombuffer(bytes(data[12:16]), "<u4")[0]) + 100  # the data section opens with the pixels
    data[pixel] = data[pixel] % 9 + 1  # one pixel recoloured
    (bank / "bank.bin").write_bytes(bytes(data))
    manifest = json.loads((bank / "manifest.json").read_text())
    digest = hashlib.sha256(bytes(data)).hexdigest()
    manifest["files"]["bank.bin"] = {"bytes": len(data), "sha256": digest}
    manifest["bank_sha256"] = digest
    (bank / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return bank


def test_a_re_signed_object_bank_is_caught(builds, resigned_bank, monkeypatch):
    from cogen.bank import check_rebuilt, verify_bank

    verify_bank(resigned_bank)  # its own manifest vouches for it
    assert "is not the one `cogen objects build` makes" in check_rebuilt(resigned_bank)
    result = CliRunner().invoke(_app(), ["objects", "verify", "--path", str(resigned_bank), "--regenerate"])
    assert result.exit_code == 1 and "is not the one `cogen objects build` makes" in str(result.exception)
    monkeypatch.setattr("cogen._resources.objects_dir", lambda: resigned_bank)  # installed in place of the real one
    bad = {c.name: c.detail for c in failed(verify(builds[0], regenerate=True))}
    assert {"object bank", "regenerated"} <= set(bad)  # (the determinism check notices another bank too)
    assert "the manifest or the installed object bank was changed" in bad["regenerated"]


def _app():
    from cogen.cli import app

    return app


def test_the_cli_and_push_run_it_on_request(builds, folder):
    """A re-signed change is caught by the default level too (it regenerates a sample of every split's
    rows, all of a build this small), by --regenerate, and by push's checks; --no-verify pushes it."""
    _swapped_ids(folder, builds[1])
    runner = CliRunner()
    for level, check in (("default", "determinism"), ("regenerate", "regenerated")):
        flags = ["--regenerate"] if level == "regenerate" else []
        result = runner.invoke(_app(), ["verify", str(folder), *flags, "--no-progress", "--json"])
        assert result.exit_code == 1, level
        checks = {c["check"]: c for c in json.loads(result.stdout)["checks"] if not c["ok"]}
        assert list(checks) == [check], level
        assert "row 3" in checks[check]["detail"] and "validation-00000" in checks[check]["detail"]
        pushed = runner.invoke(_app(), ["push", str(folder), "--repo", "me/x", "--dry-run", "--verify", level])
        assert pushed.exit_code == 1 and "refusing to push" in str(pushed.exception)
        assert f"{check}: " in str(pushed.exception)
    assert runner.invoke(_app(), ["push", str(folder), "--repo", "me/x", "--dry-run", "--no-verify"]).exit_code == 0


@pytest.mark.parametrize("name", ["carc", "programs"])
def test_every_family_regenerates_its_own_build(name, tiny_builds):
    checks = verify(tiny_builds[name], regenerate=True)
    assert not failed(checks), failed(checks)
    assert all("every row, id and order equal" in c.detail for c in checks if c.name == "regenerated")


def test_a_manifest_that_claims_a_huge_spec_is_not_rebuilt(folder):
    manifest_path = folder / "manifests" / "T-1.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["spec"]["sizes"] = [[split, 10**8 if split == "train" else rows] for split, rows in manifest["spec"]["sizes"]]
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    write_card(folder, force=True)
    bad = {c.name: c.detail for c in failed(verify(folder, regenerate=True))}
    assert "makes 100,000,040 rows, the folder holds 100" in bad["regenerated"]


def test_a_build_with_content_defined_chunking_regenerates_byte_for_byte(builds, tmp_path):
    spec = builds[0].parent / "tiny.yaml"
    build(spec, tmp_path / "cdc", workers=1, rows_per_shard=40, parquet_cdc=True)
    checks = verify(tmp_path / "cdc", regenerate=True)
    assert not failed(checks), failed(checks)
    assert "files byte-identical" in next(c.detail for c in checks if c.name == "regenerated")
