"""``cogen eval``: score a predictions file; ``cogen eval baseline``: write trivial predictions."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated

import typer
from typer.core import TyperGroup

from cogen.cli import _console
from cogen.cli._family_options import with_family_options
from cogen.cli._help import examples
from cogen.cli._options import ConfigOpt, DataOpt, SplitOpt, output_file
from cogen.family import FAMILIES, Family

__all__ = ["register"]


class _EvalGroup(TyperGroup):
    """``cogen eval``: reads the old ``--json FILE`` (before ``--json`` became the flag that prints JSON on
    stdout, as on every other command) as ``--json-out FILE``, with a note, for one release."""

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        return super().parse_args(ctx, _old_json_out(args, set(self.commands)))


def _old_json_out(args: list[str], commands: set[str]) -> list[str]:
    """``args`` with ``--json FILE`` / ``--json=FILE`` written as ``--json-out``, saying so once on stderr."""
    out, renamed = [], False
    for position, arg in enumerate(args):
        following = args[position + 1] if position + 1 < len(args) else None
        if arg == "--json" and following is not None and not following.startswith("-") and following not in commands:
            arg, renamed = "--json-out", True
        elif arg.startswith("--json="):
            arg, renamed = "--json-out=" + arg.removeprefix("--json="), True
        out.append(arg)
    if renamed:
        _console.note("`--json FILE` is now `--json-out FILE` (the old form is read until the next release); "
                      "`--json` alone prints the metrics as JSON on stdout")
    return out


app = typer.Typer(help="Score predictions against a split of a built dataset ("
                       + ", ".join(record.title for record in FAMILIES.values()) + " configs).",
                  invoke_without_command=True, no_args_is_help=False, cls=_EvalGroup,
                  epilog=examples("cogen eval -d cogen-data -c C1-1 -s test_ood -p preds.jsonl --json-out metrics.json",
                                  "cogen eval baseline -d cogen-data -c C1-1 -s test_ood --kind identity -o preds.jsonl"))

PredictionsOpt = Annotated[Path, typer.Option("--predictions", "-p", help=(
    "Predictions (.jsonl or .parquet): columns id, prediction (a grid); or ARC Prize's submission.json of a "
    "`cogen export --format kaggle` (attempt_1, attempt_2: pass@1 and pass@2); for a family scored on the code a "
    "model writes, its replies (JSONL: id, reply, model, prompt_version)."))]
MarkdownOpt = Annotated[Path | None, typer.Option("--markdown", help=(
    "Also write the family's Markdown report (the paper's tables), for families that make one."))]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print every metric as JSON on stdout (for scripts), not the tables.")]


@app.callback()
@with_family_options("eval")
def evaluate(
    ctx: typer.Context,
    data: DataOpt = None,
    config: ConfigOpt = None,
    split: SplitOpt = "test_ood",
    predictions: Annotated[Path | None, typer.Option("--predictions", "-p", help=PredictionsOpt.__metadata__[0].help)] = None,
    json_output: JsonOpt = False,
    json_out: Annotated[Path | None, typer.Option("--json-out", help="Also write every metric to this JSON file.")] = None,
    breakdown: Annotated[bool, typer.Option("--breakdown/--no-breakdown", help="Print the per-transformation and per-sequence tables.")] = True,
    markdown: MarkdownOpt = None,
    prompts: Annotated[Path | None, typer.Option("--prompts", help="Score only the rows these exported prompts ask about (a --per-experiment sample).")] = None,
    family_options: dict | None = None,
) -> None:
    """Score --predictions against --split of --config; print a table (or --json), optionally write --json-out.

    The other options belong to families: each applies to the configs of the families its help names.
    """
    if ctx.invoked_subcommand is not None:
        return
    if data is None or config is None or predictions is None:
        raise typer.BadParameter("--data, --config and --predictions are required (or use `cogen eval baseline`)")
    from cogen.eval import evaluate as run_evaluate

    if json_out is not None:
        output_file(json_out, "--json-out")
    if markdown is not None:
        output_file(markdown, "--markdown")
    with unconfined_note():
        metrics = run_evaluate(data, config, split, predictions, rows=None if prompts is None else _prompted(prompts),
                               **family_options)
    _refuse_unread(metrics)
    show_metrics(metrics, json_output, breakdown)
    _finish(metrics, markdown, json_out, json_output, "metrics")


def show_metrics(metrics: dict, json_output: bool = False, breakdown: bool = True) -> None:
    """Add the papers' k / n_valid counts to ``metrics`` and print what ``cogen eval`` prints (unless ``json_output``):
    the explanations asked for, the summary table, the breakdowns."""
    from cogen.eval.counts import valid_counts

    metrics["valid_counts"] = valid_counts(metrics)
    if not json_output:
        for line in (line for lines in metrics.get("explanations", {}).values() for line in lines):
            _console.out.print(line, markup=False, highlight=False, soft_wrap=True)
        _print(metrics, breakdown)


@app.command("baseline", epilog=examples("cogen eval baseline -d cogen-data -c C1-1 -s test_ood --kind identity "
                                         "-o preds.jsonl"))
@with_family_options("baseline")
def baseline(
    data: DataOpt,
    config: ConfigOpt,
    out: Annotated[Path, typer.Option("--out", "-o", help="Predictions file to write (.jsonl or .parquet).")],
    split: SplitOpt = "test_ood",
    kind: Annotated[str, typer.Option(help="identity (the input), target (the answer: 100 %) or zeros.")] = "identity",
    family_options: dict | None = None,
) -> None:
    """Write trivial predictions for a split, to smoke-test an evaluation pipeline."""
    from cogen.eval import write_baseline
    from cogen.folder import read_split

    output_file(out, "--out")
    count = write_baseline(out, read_split(data, config, split), kind, **family_options)
    _console.out.print(f"wrote {count} {kind} predictions to {out}")


def _report_command(record: Family):
    """``cogen eval <family>``: the family's report over every config the predictions name (its ``report`` role),
    with the options the family declares for it (its record says which, so the report is imported only to run)."""

    @with_family_options("report", records=[record])
    def report(
        data: DataOpt,
        predictions: PredictionsOpt,
        split: Annotated[str, typer.Option("--split", "-s", help="Split of the configs.")] = "test",
        json_output: JsonOpt = False,
        json_out: Annotated[Path | None, typer.Option("--json-out", help="Also write the report and every config's metrics to this JSON file.")] = None,
        markdown: MarkdownOpt = None,
        family_options: dict | None = None,
    ) -> None:
        for path, name in ((json_out, "--json-out"), (markdown, "--markdown")):
            if path is not None:
                output_file(path, name)
        options = {name: record.options_for("report")[name].check(value) for name, value in family_options.items()}
        with unconfined_note():
            result = record.load("report")(data, predictions, split, **options)
        if not json_output:
            _console.out.print(result["markdown"], markup=False, highlight=False, soft_wrap=True)
            _console.out.print(f"{sum(m['n'] for m in result['configs'].values())} predictions scored in "
                               f"{result['seconds']:.2f} s")
        _finish(result, markdown, json_out, json_output, "report")

    return report


for _record in FAMILIES.values():
    if _record.report:
        app.command(_record.name, help=_record.report_help, epilog=examples(
            f"cogen eval {_record.name} -d cogen-data -p replies.jsonl --markdown report.md"))(_report_command(_record))


@contextlib.contextmanager
def unconfined_note():
    """Untrusted code about to run without isolation, whatever chose it (the flag, the environment
    variable, a library default): one note on stderr, once per command (the sandbox warns,
    :class:`cogen.sandbox.isolation.UnconfinedWarning`)."""
    import warnings

    from cogen.sandbox.isolation import UnconfinedWarning

    shown = []

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, UnconfinedWarning):
            if not shown:
                shown.append(message)
                _console.note(str(message))
        else:
            original(message, category, filename, lineno, file, line)

    with warnings.catch_warnings():
        original = warnings.showwarning
        warnings.simplefilter("always", UnconfinedWarning)
        warnings.showwarning = show
        yield


def _prompted(path: Path) -> set[str]:
    """The rows a prompts file asks about (a record's ``row``, else its ``id``)."""
    from cogen.errors import EvalError
    from cogen.eval.predictions import read_records

    if not path.is_file():
        raise EvalError(f"{path}: no such prompts file")
    records, _ = read_records(path)
    if not records:
        raise EvalError(f"{path}: no prompt records (JSONL lines with an id)")
    return {str(r.get("row", r["id"])) for r in records}


def _finish(metrics: dict, markdown: Path | None, json_out: Path | None, json_output: bool, what: str) -> None:
    """Write the Markdown and JSON files asked for, and print the JSON asked for on stdout."""
    if markdown is not None:
        _write_markdown(markdown, metrics, quiet=json_output)
    if json_out is not None:
        _write_json(json_out, metrics)
        if not json_output:
            _console.out.print(f"{what} written to {json_out}")
    if json_output:
        _console.print_json(_clean(metrics))


def _write_markdown(path: Path, metrics: dict, quiet: bool = False) -> None:
    if "markdown" not in metrics:
        makers = [record.title for record in FAMILIES.values() if record.report]
        raise typer.BadParameter(f"--markdown writes a family's Markdown report; only {', '.join(makers) or 'no'} "
                                 "configs make one")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(metrics["markdown"], encoding="utf-8")
    if not quiet:
        _console.out.print(f"Table-1 report written to {path}")


def _refuse_unread(metrics: dict) -> None:
    """Exit 1 when not one expected sample has a prediction record: an empty, binary or foreign file."""
    from cogen.errors import EvalError

    errors = metrics["format_errors"]
    if metrics["n"] and errors["missing"] == metrics["n"]:
        found = [f"{errors['unreadable_lines']} unreadable lines"] if errors["unreadable_lines"] else []
        if errors["extra_ids"]:
            found.append(f"{errors['extra_ids']} ids that {metrics['config']} {metrics['split']} does not hold "
                         f"(e.g. {', '.join(errors['extra_examples'][:2])})")
        raise EvalError(f"no prediction could be read from {metrics['predictions']} for the {metrics['n']} samples of "
                        f"{metrics['config']} {metrics['split']}: {'; '.join(found) or 'no records'}; write one "
                        'record per sample, e.g. {"id": ..., "prediction": [[0, 1], [1, 0]]}')


def _clean(value):
    """``value`` with every NaN as ``None``: JSON has no NaN."""
    from cogen.eval import json_ready

    return json_ready(value)


def _write_json(path: Path, metrics: dict) -> None:
    import json

    from cogen.errors import EvalError, os_error_text

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(_clean(metrics), indent=2) + "\n", encoding="utf-8")
    except OSError as error:
        raise EvalError(f"cannot write {path}: {os_error_text(error)}") from None


def _print(metrics: dict, breakdown: bool) -> None:
    from rich.table import Table

    from cogen.eval import summary_rows

    title = f"{metrics['config']} / {metrics['split']}: {metrics['predictions']} ({metrics['seconds']:.2f} s)"
    table = Table(title=title, title_justify="left", show_header=False)
    table.add_column("metric")
    table.add_column("value")
    for name, value in summary_rows(metrics):
        table.add_row(name, value)
    for name, count in metrics.get("valid_counts", {}).items():
        table.add_row(f"{name.removesuffix('_valid')}: k / n_valid (papers)", f"{count['k']} / {count['n_valid']}")
        table.add_row(f"{name.removesuffix('_valid')}: k / n (cogen)", f"{count['k']} / {count['n']}")
    _console.out.print(table)
    if breakdown:
        for key in ("by_transformation", "by_sequence", "by_triplet"):
            if metrics.get(key):
                _console.out.print(_breakdown_table(key, metrics[key]))


_SHORT = {"grid_accuracy": "GA %", "per_pixel_accuracy": "PPA %", "object_pixel_accuracy": "Obj-PPA %",
          "format_errors": "format", "no_transformation": "no-op %", "stubbornness": "STBN %",
          "exact_match": "exact %", "color_accuracy": "colour %", "shape_accuracy": "shape %",
          "color_accuracy_counts": "colour (counts) %", "shape_accuracy_counts": "shape (counts) %"}


def _breakdown_table(key: str, groups: dict):
    from rich.table import Table

    columns = [c for c in next(iter(groups.values())) if c != "n"]
    table = Table(title=key.replace("_", " "), title_justify="left")
    table.add_column(key.removeprefix("by_"), overflow="fold")
    table.add_column("n", justify="right", no_wrap=True)
    for column in columns:
        table.add_column(_SHORT.get(column, column), justify="right", no_wrap=True)
    for name, row in groups.items():
        cells = [f"{100 * row[c]:.1f}" if isinstance(row[c], float) else str(row[c]) for c in columns]
        table.add_row(name, str(row["n"]), *cells)
    return table


def register(root: typer.Typer) -> None:
    """Add ``cogen eval`` (and ``cogen eval baseline``) to the ``cogen`` app."""
    root.add_typer(app, name="eval")
