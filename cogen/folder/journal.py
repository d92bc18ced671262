"""The journal of an unfinished build: the shards of a config finished so far, with their records.

A config's manifest is written only when every shard is done. Until then, each finished shard's
record (:func:`cogen.folder.integrity.shard_record`) is appended to
``.cogen/<config>.journal.jsonl``, so an interrupted build that is run again keeps a shard only
when its bytes still match the SHA-256 recorded when it was written. The journal is deleted once
the manifest holds the records. Each line is flushed to the disk (``fsync``) before the build goes on.

A journal's lines carry a *key*, the digest of the inputs the shards were built from
(:func:`cogen.folder.inputs.inputs_key`): lines of another key (a build with other inputs, or
other code) are ignored, so their shards are rebuilt.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from cogen.errors import BuildError, os_error_text
from cogen.folder.layout import journal_path

__all__ = ["append_journal", "clear_journal", "read_journal"]


def append_journal(folder: str | Path, config: str, key: str, relpath: str, record: dict) -> None:
    """Record that shard ``relpath`` of ``config`` (built under the inputs ``key``) is finished."""
    path = journal_path(folder, config)
    line = json.dumps({"key": key, "file": relpath, **record}, sort_keys=True)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as error:
        raise BuildError(f"cannot write {path}: {os_error_text(error)}") from None


def read_journal(folder: str | Path, config: str, key: str) -> dict[str, dict]:
    """Path -> record of the shards the journal lists for ``config`` built under the inputs ``key``.

    Unreadable lines (a line cut short by a crash) are ignored: their shards are rebuilt.
    """
    path = journal_path(folder, config)
    records: dict[str, dict] = {}
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return records
    for line in lines:
        try:
            entry = json.loads(line)
            if entry.get("key") == key:
                records[entry["file"]] = {key: entry[key] for key in ("sha256", "bytes", "rows", "row_groups")}
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
    return records


def clear_journal(folder: str | Path, config: str) -> None:
    """Forget the journal of ``config`` (its manifest now holds the records)."""
    journal_path(folder, config).unlink(missing_ok=True)
