"""Bank files: missing, corrupt, truncated or mis-laid-out files give a BankError that says how
to rebuild; loading is cached per folder and file state."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from cogen._resources import objects_dir
from cogen.bank import load_bank, verify_bank
from cogen.bank._store import BANK_FILE, MANIFEST_FILE, TABLE_FILE, encode_container, sha256_hex
from cogen.errors import BankError


@pytest.fixture
def copy(tmp_path):
    target = tmp_path / "objects"
    shutil.copytree(objects_dir(), target)
    return target


def _reseal(directory):
    """Make the manifest agree with the (tampered) bank.bin, to reach the layout checks."""
    manifest = json.loads((directory / MANIFEST_FILE).read_text())
    manifest["files"][BANK_FILE]["sha256"] = sha256_hex((directory / BANK_FILE).read_bytes())
    (directory / MANIFEST_FILE).write_text(json.dumps(manifest))


def _error(directory) -> str:
    with pytest.raises(BankError) as caught:
        load_bank(directory)
    return str(caught.value)


def test_a_copy_loads_and_matches_the_shipped_bank(copy):
    bank, shipped = load_bank(copy), load_bank()
    assert bank is not shipped and bank.sha256 == shipped.sha256
    assert load_bank(copy) is bank  # cached
    assert np.array_equal(bank.pixels, shipped.pixels)


def test_missing_bank_file(copy):
    (copy / BANK_FILE).unlink()
    message = _error(copy)
    assert "bank.bin" in message and "missing" in message and "cogen objects build" in message


def test_missing_manifest(copy):
    (copy / MANIFEST_FILE).unlink()
    message = _error(copy)
    assert "manifest.json" in message and "cogen objects build" in message


def test_bad_checksum(copy):
    data = bytearray((copy / BANK_FILE).read_bytes())
    data[-1] ^= 1
    (copy / BANK_FILE).write_bytes(bytes(data))
    message = _error(copy)
    assert "bank.bin" in message and "SHA-256" in message and f"--out {copy}" in message


def test_truncated_file(copy):
    (copy / BANK_FILE).write_bytes((copy / BANK_FILE).read_bytes()[:100_000])
    assert "SHA-256" in _error(copy)
    _reseal(copy)
    assert "truncated" in _error(copy)


def test_wrong_magic_and_layout(copy):
    data = (copy / BANK_FILE).read_bytes()
    (copy / BANK_FILE).write_bytes(b"NOTABANK" + data[8:])
    _reseal(copy)
    assert "magic" in _error(copy)
    (copy / BANK_FILE).write_bytes(encode_container(np.zeros(4, np.int8), np.array([0, 4]),
                                                    np.array([[1, 4], [2, 2]]), {}, {}))
    _reseal(copy)
    assert "wrong layout" in _error(copy)


def test_reload_after_rewrite_is_not_served_from_cache(copy):
    first = load_bank(copy)
    (copy / BANK_FILE).write_bytes(b"garbage")
    assert "SHA-256" in _error(copy)
    assert first.sha256 == load_bank().sha256


def test_verify_checks_every_file(copy):
    manifest = verify_bank(copy)
    assert set(manifest["files"]) >= {BANK_FILE, TABLE_FILE}
    (copy / TABLE_FILE).write_bytes(b"x")
    with pytest.raises(BankError, match="properties.arrow"):
        verify_bank(copy)


def test_the_arrow_table_holds_the_same_table():
    pyarrow = pytest.importorskip("pyarrow")
    bank = load_bank()
    with pyarrow.memory_map(str(objects_dir() / TABLE_FILE)) as source:
        table = pyarrow.ipc.open_file(source).read_all()
    assert table.num_rows == len(bank)
    assert table.column_names == ["id", *bank.column_names, "grid"]
    for name in bank.column_names:
        column = table.column(name)
        values = column.to_numpy() if not hasattr(column.type, "value_type") else column.to_pylist()
        assert np.array_equal(np.asarray(values), bank.column(name)), name
    grids = table.column("grid").combine_chunks()
    assert np.array_equal(grids.values.to_numpy(), bank.pixels)
    assert np.array_equal(grids.offsets.to_numpy(), bank.offsets)
