"""``cogen export``: write a built config in another tool's file format (the formats of :mod:`cogen.export`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cogen.cli import _console
from cogen.cli._options import ConfigOpt, DataOpt

__all__ = ["register"]


def _format_help() -> str:
    from cogen.export import FORMATS

    return "File format: " + "; ".join(f"{f.name}: {f.description}" for f in FORMATS.values()) + "."


def _check_format(value: str) -> str:
    from cogen.export import FORMATS

    if value not in FORMATS:
        raise typer.BadParameter(f"{value!r} is not a format; choose from {', '.join(FORMATS)}")
    return value


def export(
    data: DataOpt,
    config: ConfigOpt,
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder to write the files into (created if needed).")],
    format: Annotated[str, typer.Option("--format", "-f", callback=_check_format, help=_format_help())],
    name: Annotated[str | None, typer.Option(help="mlc: the trainer's data_file_name (files train_<name>.jsonl, ...); "
                                                  "by default the reference split script's, systematicity_seed_<seed>.")] = None,
    shots: Annotated[int | None, typer.Option(help="arc-json, COGITAO: demonstration pairs per task (default 3); "
                                                   "each task has one test pair.")] = None,
    columns: Annotated[str | None, typer.Option(help="parquet: column view, cogen (as built) or cogitao-release "
                                                     "(the official COGITAO release's names).")] = None,
) -> None:
    """Write --config of --data (a dataset folder or Hub repo) in --format into --out."""
    from cogen.export import export as run_export

    options = {key: value for key, value in (("name", name), ("shots", shots), ("columns", columns)) if value is not None}
    report = run_export(data, config, out, format, **options)
    for file in report.files:
        _console.out.print(f"wrote {file.path} ({file.rows} {'record' if file.rows == 1 else 'records'})")


def register(root: typer.Typer) -> None:
    """Add ``cogen export`` to the ``cogen`` app."""
    root.command("export")(export)
