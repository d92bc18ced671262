"""Byte-deterministic files of the object bank, and their checked reading.

``bank.bin`` is cogen's own packed-array container, read with NumPy alone::

    8 bytes  magic b"COGENBNK"
    4 bytes  format version (little-endian uint32)
    4 bytes  header length H (little-endian uint32)
    H bytes  UTF-8 JSON header (sorted keys), space-padded so the data starts on a 64-byte boundary
    data     the arrays, little-endian, each starting on a 64-byte boundary, zero padding between

The header lists each array as ``[name, dtype, shape, offset]`` plus the column encodings
(booleans bit-packed, strings as int8 codes into a vocabulary). ``properties.arrow`` is the same
table as an uncompressed Arrow IPC file (Feather v2) for pandas/pyarrow users, with a ``grid``
column holding each object's row-major pixels. ``manifest.json`` records the SHA-256 of every file;
:func:`read_container` refuses a file whose digest does not match.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from cogen.errors import BankError

MAGIC = b"COGENBNK"
FORMAT_VERSION = 1
BANK_FILE = "bank.bin"
TABLE_FILE = "properties.arrow"
MANIFEST_FILE = "manifest.json"
README_FILE = "README.md"
_ALIGN = 64
_PREFIX = 16


def sha256_hex(data: bytes) -> str:
    """Hex SHA-256 digest of ``data``."""
    return hashlib.sha256(data).hexdigest()


def rebuild_hint(directory: Path | None) -> str:
    """How to rebuild the bank at ``directory`` (the default location needs no ``--out``)."""
    from cogen._resources import objects_dir

    if directory is None or Path(directory).resolve() == objects_dir().resolve():
        return "rebuild it with `cogen objects build` (or reinstall cogen)"
    return f"rebuild it with `cogen objects build --out {directory}`"


def bank_error(path: Path, problem: str) -> BankError:
    """A :class:`BankError` naming the file, the problem and the rebuild command."""
    return BankError(f"object bank file {path}: {problem}; {rebuild_hint(path.parent)}")


# ------------------------------------------------------------------------------------ encoding


def _encode_column(name: str, values: np.ndarray, header: dict, arrays: dict) -> None:
    """Add one table column to ``arrays`` in its stored encoding, noting the encoding in ``header``."""
    if values.dtype == bool:
        header["columns"].append([name, "bits"])
        arrays[f"column/{name}"] = np.packbits(values, bitorder="little")
    elif values.dtype.kind in "US":
        vocabulary = sorted(set(values.tolist()))
        header["columns"].append([name, "codes", vocabulary])
        arrays[f"column/{name}"] = np.searchsorted(vocabulary, values).astype(np.int8)
    else:
        header["columns"].append([name, "int"])
        arrays[f"column/{name}"] = np.ascontiguousarray(values, values.dtype.newbyteorder("<"))


def encode_container(pixels, offsets, shapes, columns: Mapping[str, np.ndarray], meta: Mapping) -> bytes:
    """The ``bank.bin`` bytes for a packed bank and its table columns."""
    header: dict = {"columns": [], "meta": dict(meta), "arrays": []}
    arrays = {"pixels": np.asarray(pixels, "<i1"), "offsets": np.asarray(offsets, "<i8"),
              "shapes": np.asarray(shapes, "<i8")}
    for name, values in columns.items():
        _encode_column(name, np.asarray(values), header, arrays)
    header_bytes = _layout(header, arrays)
    out = io.BytesIO()
    out.write(MAGIC + np.array([FORMAT_VERSION, len(header_bytes)], "<u4").tobytes() + header_bytes)
    for (_, _, _, offset), array in zip(header["arrays"], arrays.values(), strict=True):
        out.write(b"\0" * (_PREFIX + len(header_bytes) + offset - out.tell()))
        out.write(array.tobytes())
    return out.getvalue()


def _layout(header: dict, arrays: Mapping[str, np.ndarray]) -> bytes:
    """Fill ``header["arrays"]`` (offsets relative to the data section, which starts right after
    the padded header); returns the padded header bytes."""
    entries, position = [], 0
    for name, array in arrays.items():
        entries.append([name, array.dtype.str, list(array.shape), position])
        position = _align(position + array.nbytes)
    header["arrays"] = entries
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    return text.ljust(_align(_PREFIX + len(text)) - _PREFIX, b" ")


def _align(position: int) -> int:
    return -(-position // _ALIGN) * _ALIGN


# ------------------------------------------------------------------------------------ decoding


def _parse_header(path: Path, data: bytes) -> tuple[dict, int]:
    """The header and the position where the data section starts."""
    if len(data) < _PREFIX or data[:8] != MAGIC:
        raise bank_error(path, "not a cogen bank file (bad magic bytes)")
    version, length = np.frombuffer(data, "<u4", 2, 8)
    if version != FORMAT_VERSION:
        raise bank_error(path, f"format version {version}, this cogen reads version {FORMAT_VERSION}")
    try:
        return json.loads(data[_PREFIX:_PREFIX + int(length)]), _PREFIX + int(length)
    except ValueError as error:
        raise bank_error(path, f"unreadable header ({error})") from None


def _arrays(path: Path, data: bytes, header: dict, data_start: int) -> dict[str, np.ndarray]:
    arrays = {}
    try:
        for name, dtype, shape, offset in header["arrays"]:
            count, start = int(np.prod(shape)), data_start + offset
            if start + count * np.dtype(dtype).itemsize > len(data):
                raise bank_error(path, f"truncated: array {name!r} runs past the end of the file")
            arrays[name] = np.frombuffer(data, dtype, count, start).reshape(shape)
    except (KeyError, TypeError, ValueError) as error:
        raise bank_error(path, f"wrong layout ({error})") from None
    return arrays


def _decode_columns(path: Path, header: dict, arrays: dict, n: int) -> dict[str, np.ndarray]:
    columns = {}
    for name, encoding, *vocabulary in header["columns"]:
        stored = arrays.get(f"column/{name}")
        if stored is None:
            raise bank_error(path, f"wrong layout (column {name!r} has no data)")
        if encoding == "bits":
            values = np.unpackbits(stored, count=n, bitorder="little").view(bool)
        elif encoding == "codes":
            values = np.asarray(vocabulary[0])[stored]
        else:
            values = stored
        if len(values) != n:
            raise bank_error(path, f"wrong layout (column {name!r} has {len(values)} rows, not {n})")
        values.flags.writeable = False
        columns[name] = values
    return columns


def read_container(path: Path, expected_sha256: str | None) -> tuple[dict, dict, dict]:
    """(arrays, columns, meta) of a ``bank.bin`` file, after checking its SHA-256."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise bank_error(path, "missing") from None
    except OSError as error:
        raise bank_error(path, f"unreadable ({error.strerror})") from None
    if expected_sha256 is not None and sha256_hex(data) != expected_sha256:
        raise bank_error(path, "corrupt (its SHA-256 does not match manifest.json)")
    header, data_start = _parse_header(path, data)
    arrays = _arrays(path, data, header, data_start)
    try:
        n = len(arrays["shapes"])
        offsets = arrays["offsets"]
        if len(offsets) != n + 1 or offsets[-1] != len(arrays["pixels"]):
            raise bank_error(path, "wrong layout (offsets do not match pixels and shapes)")
        columns = _decode_columns(path, header, arrays, n)
    except (KeyError, IndexError, TypeError, ValueError) as error:
        raise bank_error(path, f"wrong layout ({error})") from None
    return arrays, columns, header.get("meta", {})


def read_manifest(directory: Path) -> dict:
    """The bank's ``manifest.json`` as a dict."""
    path = directory / MANIFEST_FILE
    try:
        manifest = json.loads(path.read_text())
        manifest["files"][BANK_FILE]["sha256"]
    except FileNotFoundError:
        raise bank_error(path, "missing") from None
    except (ValueError, KeyError, TypeError) as error:
        raise bank_error(path, f"unreadable ({error})") from None
    return manifest


def verify_files(directory: Path) -> dict:
    """Check every file listed in the manifest against its SHA-256; returns the manifest."""
    manifest = read_manifest(directory)
    for name, entry in sorted(manifest["files"].items()):
        path = directory / name
        if not path.is_file():
            raise bank_error(path, "missing")
        if sha256_hex(path.read_bytes()) != entry["sha256"]:
            raise bank_error(path, "corrupt (its SHA-256 does not match manifest.json)")
    return manifest


# ------------------------------------------------------------------------------- Arrow (users)


def encode_arrow(pixels, offsets, columns: Mapping[str, np.ndarray], meta: Mapping) -> bytes:
    """The ``properties.arrow`` bytes: an ``id`` column, the table columns, and ``grid``."""
    import pyarrow as pa

    n = len(offsets) - 1
    fields = {"id": pa.array(np.arange(n, dtype=np.int32))}
    for name, values in columns.items():
        values = np.asarray(values)
        if values.dtype.kind in "US":
            vocabulary = sorted(set(values.tolist()))
            codes = pa.array(np.searchsorted(vocabulary, values).astype(np.int8))
            fields[name] = pa.DictionaryArray.from_arrays(codes, pa.array(vocabulary, pa.string()))
        else:
            fields[name] = pa.array(values)
    fields["grid"] = pa.ListArray.from_arrays(pa.array(np.asarray(offsets, np.int32)),
                                              pa.array(np.asarray(pixels, np.int8)))
    metadata = {f"cogen.{key}": str(value) for key, value in meta.items()}
    table = pa.table(fields).replace_schema_metadata(metadata)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema, options=pa.ipc.IpcWriteOptions(compression=None)) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def write_files(directory: Path, files: Mapping[str, bytes], manifest: dict) -> dict:
    """Write ``files`` and a manifest recording their sizes and SHA-256; returns the manifest."""
    directory.mkdir(parents=True, exist_ok=True)
    manifest = dict(manifest)
    manifest["files"] = {name: {"bytes": len(data), "sha256": sha256_hex(data)}
                         for name, data in sorted(files.items())}
    for name, data in files.items():
        (directory / name).write_bytes(data)
    text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    (directory / MANIFEST_FILE).write_text(text)
    return manifest
