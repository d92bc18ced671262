"""File integrity of a dataset folder: what a manifest records about each shard, and how to check it.

Each manifest (format :data:`MANIFEST_FORMAT`) lists, per split, a *shard record* for every
Parquet file: its SHA-256, size in bytes, rows and row groups (:func:`shard_record`). The
dataset card lists the SHA-256 of every manifest file (:func:`manifest_sha256`), so an edited
manifest is caught too. ``cogen verify``, ``cogen push`` and a resumed ``cogen build`` compare
the files with these records (:func:`record_problem`).

Manifests written before file hashes existed (no ``manifest_format``) are *legacy*: they can be
read, but not checked, and the fix is to rebuild (same command, same bytes).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from cogen.folder.layout import manifest_path

__all__ = ["MANIFEST_FORMAT", "buffer_record", "file_sha256", "has_shard_records", "manifest_sha256", "record_problem",
           "shard_record", "shard_records"]

#: Version of the manifest layout; 2 added ``manifest_format`` and per-split shard records.
MANIFEST_FORMAT = 2
_CHUNK = 1 << 20


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file's bytes, as 64 hex digits (read in 1 MiB chunks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def shard_record(path: str | Path) -> dict:
    """What a manifest records about a freshly written shard: SHA-256, bytes, rows and row groups."""
    import pyarrow.parquet as pq

    metadata = pq.read_metadata(path)
    return {"sha256": file_sha256(path), "bytes": Path(path).stat().st_size, "rows": metadata.num_rows,
            "row_groups": metadata.num_row_groups}


def buffer_record(data: bytes) -> dict:
    """The shard record (:func:`shard_record`) of a Parquet file held in memory."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    metadata = pq.read_metadata(pa.BufferReader(data))
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data), "rows": metadata.num_rows,
            "row_groups": metadata.num_row_groups}


def has_shard_records(manifest: dict) -> bool:
    """True when ``manifest`` records every file's hash (format 2 or later), False for a legacy one."""
    return manifest.get("manifest_format", 1) >= 2 and all(
        "shards" in info for info in manifest.get("splits", {}).values())


def shard_records(manifest: dict) -> dict[str, dict]:
    """Path -> shard record of every file a manifest lists (empty for a legacy manifest)."""
    if not has_shard_records(manifest):
        return {}
    return {file: record for info in manifest["splits"].values() for file, record in info["shards"].items()}


def record_problem(folder: str | Path, relpath: str, record: dict) -> str | None:
    """Why the file ``relpath`` of ``folder`` is not the one ``record`` describes (None when it is).

    The size is compared first (no reading), then the SHA-256 of the bytes.
    """
    path = Path(folder) / relpath
    try:
        size = path.stat().st_size
        if size != record["bytes"]:
            return f"{relpath}: {size:,} bytes, the manifest recorded {record['bytes']:,} (the file changed after the build)"
        if file_sha256(path) != record["sha256"]:
            return f"{relpath}: SHA-256 differs from the manifest's (the file changed after the build)"
    except FileNotFoundError:
        return f"{relpath}: missing"
    except IsADirectoryError:
        return f"{relpath}: a folder where a shard file should be"
    except OSError as error:
        return f"{relpath}: cannot be read ({error.strerror or error})"
    return None


def manifest_sha256(folder: str | Path, config: str) -> str:
    """SHA-256 of the manifest file of ``config`` (the dataset card lists it)."""
    return file_sha256(manifest_path(folder, config))
