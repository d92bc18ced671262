"""What a family's ``testing`` role gives cogen's shared tests, and the helpers its tampers are written with.

The shared tests find every registered family and read its ``testing`` module (``cogen/families/<name>/
testing.py``), so adding a family touches no shared test file:

* ``TINY``, a :class:`TinyBuild`: a spec that builds in seconds. ``tests/conftest.py: tiny_builds`` builds it
  once per session (read-only, shared by the tests that only read it); ``tests/test_families.py`` verifies,
  scores and prompts its ``config`` and ``split``;
* ``TAMPERS``: ``{(config, check name): tamper(folder)}``, for every check of the family's own, the damage it
  exists to catch: ``tests/test_verify_tamper.py`` copies the tiny build, applies the tamper and requires that
  check, and only it, to fail. The generic checks (card, files and schema, file hashes, spec, decoding,
  determinism, preview) are broken by :func:`generic_tampers`; a family whose checks read what those damage
  gives its own instead.

A tamper that changes rows must record the changed shard in its manifest and the manifest in the card, and
draw the preview from the rows as they are now, as a build that wrote wrong rows would (:func:`edit_shard`
does), or the *file hashes* (or *preview*) check fails first.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

__all__ = ["Columns", "Tamper", "TinyBuild", "copy_row", "edit_shard", "first_file", "generic_tampers", "rerecord",
           "row_of", "set_value", "shard_of"]

#: A tamper: damages the copy of a tiny build at ``folder``.
Tamper = Callable[[Path], None]
#: A shard's columns as Python lists, which a change edits in place.
Columns = dict[str, list]


@dataclass(frozen=True)
class TinyBuild:
    """A build small enough for the tests: ``spec`` (YAML text, or a packaged spec's name) built with ``options``
    (``scale``, ``only`` ...); ``config`` and ``split`` are what the tests score, prompt and tamper."""

    spec: str
    config: str
    split: str
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


def _manifest(folder: Path, config: str) -> dict:
    return json.loads((folder / "manifests" / f"{config}.json").read_text(encoding="utf-8"))


def shard_of(folder: Path, config: str, split: str) -> Path:
    """The first shard file of ``split`` of ``config`` in ``folder``."""
    return folder / _manifest(folder, config)["splits"][split]["files"][0]


def first_file(folder: Path, config: str) -> Path:
    """The first shard file of ``config`` (of its first split; a tiny build's determinism check regenerates
    every row)."""
    splits = _manifest(folder, config)["splits"]
    return folder / next(iter(splits.values()))["files"][0]


def rerecord(path: Path) -> None:
    """Record the shard ``path`` as it is now in its manifest, and the manifest in the card, with the preview
    drawn from the rows as they are now (none when they cannot be decoded: verify then skips the preview)."""
    from cogen.card import write_card
    from cogen.errors import BuildError
    from cogen.folder import shard_record

    folder = path.parents[2]
    relpath = path.relative_to(folder).as_posix()
    manifest_file = folder / "manifests" / f"{path.parent.name}.json"
    manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    for info in manifest["splits"].values():
        if relpath in info["shards"]:
            info["shards"][relpath] = shard_record(path)
    manifest_file.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    (folder / "previews" / f"{path.parent.name}.png").unlink(missing_ok=True)
    try:
        write_card(folder)
    except BuildError:  # rows that cannot be decoded cannot be drawn
        write_card(folder, previews=False)


def edit_shard(path: Path, change: Callable[[Columns], None]) -> None:
    """Rewrite the shard ``path`` with ``change`` applied to its columns (Python lists), footer stamp kept, and
    record it (as if the build itself had written these rows)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    columns = table.to_pydict()
    change(columns)
    pq.write_table(pa.Table.from_pydict(columns, schema=table.schema), path)
    rerecord(path)


def set_value(name: str, row: int, value: Any) -> Callable[[Columns], None]:
    """A change: ``value`` into column ``name`` of ``row``."""
    def change(columns: Columns) -> None:
        columns[name][row] = value
    return change


def copy_row(names: list[str], source: int, target: int) -> Callable[[Columns], None]:
    """A change: columns ``names`` of row ``source`` copied into row ``target``."""
    def change(columns: Columns) -> None:
        for name in names:
            columns[name][target] = columns[name][source]
    return change


def row_of(shard: Path, row: int = 0) -> Callable[[Columns], None]:
    """A change: row 0 takes every value but the ``id`` of ``row`` of ``shard`` (read now, so two shards can
    swap rows)."""
    import pyarrow.parquet as pq

    values = pq.read_table(shard).slice(row, 1).to_pylist()[0]

    def change(columns: Columns) -> None:
        for name in columns:
            if name != "id":
                columns[name][0] = values[name]
    return change


def _largest_column(path: Path) -> tuple[int, int]:
    """``(data page offset, compressed size)`` of the largest column chunk of the first row group of ``path``."""
    import pyarrow.parquet as pq

    group = pq.read_metadata(path).row_group(0)
    chunk = max((group.column(i) for i in range(group.num_columns)), key=lambda c: c.total_compressed_size)
    return chunk.data_page_offset, chunk.total_compressed_size


def _remove_card(folder: Path) -> None:
    (folder / "README.md").unlink()


def _remove_file(config: str) -> Tamper:
    def tamper(folder: Path) -> None:  # a listed file is gone
        first_file(folder, config).unlink()
    return tamper


def _flip_byte(config: str) -> Tamper:
    def tamper(folder: Path) -> None:  # one byte of a data page changes after the build
        path = first_file(folder, config)
        offset, size = _largest_column(path)
        data = bytearray(path.read_bytes())
        data[offset + min(40, size - 1)] ^= 0xFF
        path.write_bytes(bytes(data))
    return tamper


def _break_page(config: str) -> Tamper:
    def tamper(folder: Path) -> None:  # a data page that cannot be decompressed, as the build's disk wrote it
        path = first_file(folder, config)
        offset, _ = _largest_column(path)
        data = bytearray(path.read_bytes())
        data[offset + 20: offset + 60] = bytes(40)
        path.write_bytes(bytes(data))
        rerecord(path)
    return tamper


def _rename_row(config: str) -> Tamper:
    def tamper(folder: Path) -> None:  # every row is sound, but not the row the manifest regenerates at that index
        path = first_file(folder, config)
        edit_shard(path, set_value("id", 0, f"{config}-renamed"))
    return tamper


def _claims_packaged(config: str) -> Tamper:
    def tamper(folder: Path) -> None:  # the manifest says it is cogen's packaged c3 (and the card lists it so)
        from cogen.card import write_card

        path = folder / "manifests" / f"{config}.json"
        manifest = _manifest(folder, config)
        manifest["packaged_spec"] = "c3"
        path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        write_card(folder, previews=False)
    return tamper


def _foreign_preview(config: str) -> Tamper:
    def tamper(folder: Path) -> None:  # the card's preview is some other picture (here, a PNG cut short)
        (folder / "previews").mkdir(exist_ok=True)
        (folder / "previews" / f"{config}.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(32))
    return tamper


def generic_tampers(config: str) -> dict[tuple[str, str], Tamper]:
    """A tamper for each generic check of ``cogen verify``, breaking ``config``'s first file (or the card, the
    manifest's claim of a packaged spec, the preview)."""
    return {(config, "card"): _remove_card, (config, "files and schema"): _remove_file(config),
            (config, "file hashes"): _flip_byte(config), (config, "decoding"): _break_page(config),
            (config, "determinism"): _rename_row(config), (config, "spec"): _claims_packaged(config),
            (config, "preview"): _foreign_preview(config)}
