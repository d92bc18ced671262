"""``cogen export``: write a built config in the file format another tool reads.

>>> report = export("cogen-data", "carc-systematicity-1860", "mlc-data", format="mlc")   # doctest: +SKIP
>>> [(f.path.name, f.rows) for f in report.files]                                       # doctest: +SKIP
[('train_systematicity_seed_1860.jsonl', 82908), ('val_systematicity_seed_1860.jsonl', 8546), ...]

Every format is one record of :data:`FORMATS`: its name (the ``--format`` value), a line of
description, and a *writer*, named ``"module:function"`` and imported on first use. A writer is
``write(data, config, folder, **options) -> ExportReport``: it reads the config's splits with
:func:`cogen.folder.read_split` (``data`` is a dataset folder or a Hub repo id), refuses data it
cannot write with a :class:`~cogen.errors.DataError` (:func:`require_family` says which family a
format takes), writes its files under ``folder`` and says what it wrote. Its keyword options
(``name`` for ``mlc``) are the ones :func:`export` accepts for it; any other is refused.

Adding a format: write its function in a module of this package (``cogen/export/<format>.py``),
add one record to :data:`FORMATS`, and a test; ``cogen export --format`` offers it at once.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from cogen.errors import DataError, UnknownNameError

__all__ = ["FORMATS", "ExportFormat", "ExportReport", "ExportedFile", "export", "require_family"]


@dataclass(frozen=True)
class ExportedFile:
    """One written file and how many records it holds."""

    path: Path
    rows: int


@dataclass(frozen=True)
class ExportReport:
    """What an export wrote."""

    format: str
    config: str
    folder: Path
    files: list[ExportedFile] = field(default_factory=list)


@dataclass(frozen=True)
class ExportFormat:
    """One export format: ``writer`` is ``"module:function"`` with the signature in the module docstring."""

    name: str
    description: str
    writer: str

    def load(self):
        """The writer function, imported on first use."""
        module, _, function = self.writer.partition(":")
        return getattr(importlib.import_module(module), function)


FORMATS: Mapping[str, ExportFormat] = MappingProxyType({
    "mlc": ExportFormat(
        "mlc", "Compositional-ARC split configs as the reference MLC trainer's JSONL files "
               "(train_/val_/test_<name>.jsonl and config_<name>.json)",
        "cogen.families.carc.export_mlc:write_mlc"),
    "arc-json": ExportFormat(
        "arc-json", "ARC task files (<split>/<task>.json: {\"train\": [{\"input\", \"output\"}], \"test\": [...]}); "
                    "COGITAO samples of one sequence grouped --shots + 1 to a task, a Compositional-ARC episode "
                    "per task; index.json traces tasks to rows",
        "cogen.export.arc_json:write_arc_json"),
    "parquet": ExportFormat(
        "parquet", "one <split>.parquet per split under a --columns view (cogitao-release: the official COGITAO "
                   "release's file and column names, int64 grids)",
        "cogen.export.parquet:write_parquet"),
})


def export(data: str | Path, config: str, folder: str | Path, format: str, **options: Any) -> ExportReport:
    """Write ``config`` of ``data`` (a dataset folder or a Hub repo id) into ``folder`` in ``format``."""
    if format not in FORMATS:
        raise UnknownNameError("export format", format, FORMATS)
    writer = FORMATS[format].load()
    accepted = list(inspect.signature(writer).parameters)[3:]
    for option in options:
        if option not in accepted:
            raise DataError(f"option {option!r} does not apply to the {format} format"
                            + (f" (it takes {', '.join(accepted)})" if accepted else " (it takes none)"))
    folder = Path(folder).expanduser()
    if folder.exists() and not folder.is_dir():
        raise DataError(f"{folder} is a file; --out must be a folder to write the {format} files into")
    return writer(data, config, folder, **options)


def require_family(manifest: dict, families: tuple[str, ...], format: str) -> None:
    """A clear :class:`DataError` unless the config of ``manifest`` belongs to one of ``families``."""
    family = manifest.get("family", "cogitao")
    if family not in families:
        from cogen.families import FAMILIES

        titles = ", ".join(FAMILIES[name].title for name in families)
        raise DataError(f"config {manifest.get('config')} is a {FAMILIES[family].title} config; the {format} "
                        f"format writes {titles} configs")
