"""``cogen export``: write a built config in the file format another tool reads.

>>> report = export("cogen-data", "C1-1", "arc-c1-1", format="arc-json", shots=3)      # doctest: +SKIP
>>> [(f.path.name, f.rows) for f in report.files]                                       # doctest: +SKIP
[('train', 24994), ('validation', 244), ('test', 244), ('validation_ood', 250), ('test_ood', 250), ('index.json', 25982)]

Every format is one :class:`ExportFormat` record: its name (the ``--format`` value), a line of
description, and a *writer*, named ``"module:function"`` and imported on first use. A writer is
``write(source, folder, **options) -> Written``: it reads the config's splits a batch at a time from
``source`` (an :class:`~cogen.export._source.ExportSource`), refuses data it cannot write with a
:class:`~cogen.errors.DataError`, writes its files under ``folder`` and says what it wrote. Its
keyword options (``name`` for ``mlc``) are the ones :func:`export` accepts for it; any other is refused.

This package holds what every format shares (:func:`export`): the temporary folder renamed into
place (``_place``), the batches and the progress (``_source``), and ``index.json``, which lists
every file written. The formats here are generic (``arc-json``, ``kaggle``, ``chat``, ``parquet``); what a family's rows
become in them, and the formats only one family's configs take (``mlc``), are declared by the
family's ``exporter`` module (``cogen/families/<name>/export.py``), reached through its record.

Adding a format: write its function in a module of this package (any family) or of a family folder
(that family's configs only), add one record to :data:`GENERIC_FORMATS` or to the family's
``FORMATS``, and a test; ``cogen export --format`` offers it at once.
"""

from __future__ import annotations

import importlib
import inspect
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from cogen.errors import DataError, Interrupted, UnknownNameError
from cogen.export._source import ExportSource

__all__ = ["GENERIC_FORMATS", "INDEX_FILE", "ExportFormat", "ExportReport", "ExportSource", "ExportedFile", "Written",
           "export", "formats"]

#: The file beside every export that lists what it holds.
INDEX_FILE = "index.json"


@dataclass(frozen=True)
class ExportedFile:
    """One written file (or folder of files) and how many records it holds."""

    path: Path
    rows: int


@dataclass(frozen=True)
class Written:
    """What a writer wrote: ``files`` maps every file's path (relative to the export folder) to its
    records; ``summary`` is what to report (a folder of many files as one line; ``files`` when empty);
    ``index`` holds the format's own fields of ``index.json``; ``notes`` are lines for the user."""

    files: dict[str, int]
    summary: dict[str, int] = field(default_factory=dict)
    index: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ExportReport:
    """What an export wrote."""

    format: str
    config: str
    folder: Path
    files: list[ExportedFile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def index(self) -> Path:
        """The export's ``index.json``."""
        return self.folder / INDEX_FILE


@dataclass(frozen=True)
class ExportFormat:
    """One export format: ``writer`` is ``"module:function"`` with the signature in the module docstring;
    ``family`` is the one family whose configs it takes (``None``: any family's)."""

    name: str
    description: str
    writer: str
    family: str | None = None

    def load(self) -> Callable[..., Written]:
        """The writer function, imported on first use."""
        module, _, function = self.writer.partition(":")
        return getattr(importlib.import_module(module), function)

    def options(self) -> list[str]:
        """The keyword options the writer takes."""
        return list(inspect.signature(self.load()).parameters)[2:]

    def describe(self) -> str:
        """The description, with what the writer's module adds (its ``describe()``: per-family details)."""
        details = getattr(importlib.import_module(self.writer.partition(":")[0]), "describe", None)
        return f"{self.description}: {details()}" if details else self.description


#: The formats any family's configs may take; what each family's rows become in them is the family's
#: (:meth:`ExportFormat.describe` adds it to the description).
GENERIC_FORMATS: tuple[ExportFormat, ...] = (
    ExportFormat("arc-json", "ARC task files (<split>/<task>.json: {\"train\": [{\"input\", \"output\"}], "
                             "\"test\": [...]}), index.json tracing tasks to rows",
                 "cogen.export.arc_json:write_arc_json"),
    ExportFormat("kaggle", "ARC Prize (Kaggle) files: <config>_<split>_challenges.json and _solutions.json, a task "
                           "per row that holds its test pairs; `cogen eval` scores a submission.json of them (pass@2)",
                 "cogen.export.kaggle:write_kaggle"),
    ExportFormat("chat", "chat rows for fine-tuning (TRL's conversational formats): <split>.parquet with messages, "
                         "prompt and completion, from the family's prompts, the answer as the assistant turn",
                 "cogen.llm.chat:write_chat"),
    ExportFormat("parquet", "one <split>.parquet per split under a --columns view",
                 "cogen.export.parquet:write_parquet"),
)


@cache
def formats() -> Mapping[str, ExportFormat]:
    """Every format by name: the generic ones, then those the families declare (``FORMATS`` of each
    family's ``exporter`` module, which take that family's configs only)."""
    from cogen.family import FAMILIES

    found = {record.name: record for record in GENERIC_FORMATS}
    for family in FAMILIES.values():
        exporter = family.load("exporter")
        for record in exporter.FORMATS if exporter else ():
            found[record.name] = replace(record, family=family.name)
    return MappingProxyType(found)


def _check_options(record: ExportFormat, options: Mapping[str, Any]) -> None:
    accepted = record.options()
    for option in options:
        if option not in accepted:
            raise DataError(f"option {option!r} does not apply to the {record.name} format"
                            + (f" (it takes {', '.join(accepted)})" if accepted else " (it takes none)"))


def _check_family(record: ExportFormat, source: ExportSource) -> None:
    from cogen.family import FAMILIES, family

    if record.family is not None and record.family != source.family:
        raise DataError(f"config {source.config} is a {family(source.family).title} config; the {record.name} "
                        f"format writes {FAMILIES[record.family].title} configs")


def export(data: str | Path, config: str, folder: str | Path, format: str, *, force: bool = False,
           progress: Callable[[str, int, int], None] | None = None, **options: Any) -> ExportReport:
    """Write ``config`` of ``data`` (a dataset folder or a Hub repo id) into ``folder`` in ``format``.

    ``folder`` appears whole when the export is complete, holding exactly the files its ``index.json``
    lists; until then, and after an error or Ctrl-C, it is as it was. A folder that holds anything is
    replaced only with ``force``. ``progress(phase, advance, total)`` hears of every batch of rows
    (phase ``"rows"``; ``advance=0`` announces the total).
    """
    known = formats()
    if format not in known:
        raise UnknownNameError("export format", format, known)
    record = known[format]
    _check_options(record, options)
    folder = Path(folder).expanduser()
    try:
        written = _export(record, data, config, folder, force, progress, options)
    except KeyboardInterrupt:
        raise Interrupted(f"export interrupted; {folder} is as it was (the partial export was removed)") from None
    summary = written.summary or written.files
    return ExportReport(format, config, folder, [ExportedFile(folder / path, rows) for path, rows in summary.items()]
                        + [ExportedFile(folder / INDEX_FILE, len(written.files))], written.notes)


def _export(record: ExportFormat, data, config: str, folder: Path, force: bool, progress, options) -> Written:
    """Check the target and the config, then write the export in place (see :func:`export`)."""
    from cogen.export._place import check_target, write_in_place
    from cogen.export._source import open_source

    check_target(folder, data, force)
    report = progress or (lambda phase, advance, total: None)
    source = open_source(data, config)
    _check_family(record, source)
    total = source.rows()
    source = replace(source, progress=lambda rows: report("rows", rows, total))
    report("rows", 0, total)
    return write_in_place(folder, lambda temporary: _write(record, source, temporary, options))


def _write(record: ExportFormat, source: ExportSource, folder: Path, options: Mapping[str, Any]) -> Written:
    """Run the writer into ``folder``, then write ``index.json`` (which checks the writer's list)."""
    folder.mkdir(parents=True)
    written = record.load()(source, folder, **options)
    on_disk = {path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file()}
    if on_disk != set(written.files):  # a writer that forgot a file would leave index.json wrong
        raise DataError(f"the {record.name} writer listed {len(written.files)} files but wrote {len(on_disk)}; "
                        "this is a bug in cogen, please report it")
    (folder / INDEX_FILE).write_text(json.dumps(_index(record, source, options, written, folder), indent=1) + "\n",
                                     encoding="utf-8")
    return written


def _index(record: ExportFormat, source: ExportSource, options: Mapping[str, Any], written: Written,
           folder: Path) -> dict:
    """``index.json``: what was exported from where (a local folder relative to the export's, so the index
    names no path of this machine), the family's fields (its ``exporter``'s ``index_fields``, such as a
    convention its rows follow), the format's own fields, and every file written."""
    from cogen._version import __version__
    from cogen.family import family

    manifest = source.manifest
    exporter = family(source.family).load("exporter")
    fields = exporter.index_fields(source) if hasattr(exporter, "index_fields") else {}
    return {"format": record.name, "config": source.config, "source": source.relative_data(folder),
            "options": dict(options), "cogen_version": __version__, "generator_version": manifest.get("generator_version"),
            "fingerprint": manifest.get("fingerprint"), **fields, **written.index,
            "files": dict(sorted(written.files.items()))}
