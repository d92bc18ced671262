"""``cogen export``: write a built config in another tool's file format (the formats of :mod:`cogen.export`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from typer.core import TyperCommand

from cogen.cli import _console
from cogen.cli._help import complete_columns, complete_formats, examples
from cogen.cli._options import ConfigOpt, DataOpt
from cogen.cli._progress import progress_bar

__all__ = ["register"]


def _format_help() -> str:
    from cogen.export import formats

    return "File format: " + "; ".join(f"{f.name}: {f.describe()}" for f in formats().values()) + "."


#: The help of --format until ``cogen export --help`` is shown (:class:`_ExportCommand` fills in the formats).
FORMAT_HELP = "File format (listed by `cogen export --help`)."


class _ExportCommand(TyperCommand):
    """``cogen export``, whose --format help lists every family's formats: read when the help is shown, not
    each time any command builds the command tree (the families' export modules import NumPy and pyarrow)."""

    def format_help(self, ctx, formatter) -> None:
        for param in self.params:
            if param.name == "format":
                param.help = _format_help()
        super().format_help(ctx, formatter)


def _check_format(value: str) -> str:
    from cogen.export import formats

    if value not in formats():
        raise typer.BadParameter(f"{value!r} is not a format; choose from {', '.join(formats())}")
    return value


def export(
    data: DataOpt,
    config: ConfigOpt,
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder to write the files into; it appears whole when "
                                                          "the export is complete (Ctrl-C leaves it as it was).")],
    format: Annotated[str, typer.Option("--format", "-f", callback=_check_format, help=FORMAT_HELP,
                                        autocompletion=complete_formats)],
    name: Annotated[str | None, typer.Option(help="mlc: the trainer's data_file_name (files train_<name>.jsonl, ...).",
                                             show_default="the reference split script's, systematicity_seed_<seed>")] = None,
    shots: Annotated[int | None, typer.Option(help="arc-json and kaggle, families whose rows are grouped into tasks: "
                                                   "demonstration pairs per task; each task has one test pair.",
                                              show_default="3")] = None,
    columns: Annotated[str | None, typer.Option(help="parquet: column view (see --format).", show_default="cogen",
                                                autocompletion=complete_columns)] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace everything in a non-empty --out with the export.")] = False,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Progress bar on stderr.")] = True,
    json_output: Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout (for scripts).")] = False,
) -> None:
    """Write --config of --data (a dataset folder or Hub repo) in --format into --out, with an index.json that
    lists every file written."""
    from cogen.export import export as run_export

    options = {key: value for key, value in (("name", name), ("shots", shots), ("columns", columns)) if value is not None}
    with progress_bar(progress, {"rows": f"exporting {config}"}) as bar:
        report = run_export(data, config, out, format, force=force, progress=bar, **options)
    if json_output:
        _console.print_json({"format": report.format, "config": report.config, "folder": str(report.folder),
                             "index": str(report.index), "notes": report.notes,
                             "files": [{"path": str(f.path), "records": f.rows} for f in report.files]})
        return
    for file in report.files:
        _console.out.print(f"wrote {file.path} ({file.rows} {'record' if file.rows == 1 else 'records'})")
    for note in report.notes:
        _console.out.print(note)


EXAMPLES = examples("cogen export -f arc-json -d cogen-data -c C1-1 -o arc-c1-1 --shots 3",
                    "cogen export -f kaggle -d cogen-data -c C1-1 -o kaggle-c1-1",
                    "cogen export -f chat -d cogen-data -c C1-1 -o sft-c1-1",
                    "cogen export -f parquet -d cogen-data -c C1-1 -o c1-1-parquet --force --json")


def register(root: typer.Typer) -> None:
    """Add ``cogen export`` to the ``cogen`` app."""
    root.command("export", epilog=EXAMPLES, cls=_ExportCommand)(export)
