"""``cogen eval``: score a predictions file; ``cogen eval baseline``: write trivial predictions."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cogen.cli import _console
from cogen.cli._options import ConfigOpt, DataOpt, SplitOpt

__all__ = ["register"]

app = typer.Typer(help="Score predictions against a split of a built dataset (COGITAO or Compositional-ARC).",
                  invoke_without_command=True, no_args_is_help=False)

_QUERIES_HELP = "Compositional-ARC: score all queries of each episode, or only the first (the paper's LLM protocol)."


@app.callback()
def evaluate(
    ctx: typer.Context,
    data: DataOpt = None,
    config: ConfigOpt = None,
    split: SplitOpt = "test_ood",
    predictions: Annotated[Path | None, typer.Option("--predictions", "-p",
                                                     help="Predictions (.jsonl or .parquet): columns id, prediction.")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write every metric to this JSON file.")] = None,
    pad: Annotated[str | None, typer.Option(help="Fixed HxW of the padded per-pixel accuracy (default: the experiment's largest grid).")] = None,
    stubbornness: Annotated[bool | None, typer.Option("--stubbornness/--no-stubbornness", help="COGITAO: compute stubbornness (OOD splits of composition experiments; default on).", show_default=False)] = None,
    queries: Annotated[str | None, typer.Option(help=_QUERIES_HELP + " [default: all]")] = None,
    breakdown: Annotated[bool, typer.Option("--breakdown/--no-breakdown", help="Print the per-transformation and per-sequence tables.")] = True,
) -> None:
    """Score --predictions against --split of --config; print a table, optionally write --json."""
    if ctx.invoked_subcommand is not None:
        return
    if data is None or config is None or predictions is None:
        raise typer.BadParameter("--data, --config and --predictions are required (or use `cogen eval baseline`)")
    from cogen.eval import evaluate as run_evaluate

    metrics = run_evaluate(data, config, split, predictions, pad=_pad(pad), stubbornness=stubbornness,
                           queries=queries)
    _print(metrics, breakdown)
    if json_out is not None:
        _write_json(json_out, metrics)
        _console.out.print(f"metrics written to {json_out}")


@app.command("baseline")
def baseline(
    data: DataOpt,
    config: ConfigOpt,
    out: Annotated[Path, typer.Option("--out", "-o", help="Predictions file to write (.jsonl or .parquet).")],
    split: SplitOpt = "test_ood",
    kind: Annotated[str, typer.Option(help="identity (the input), target (the answer: 100 %) or zeros.")] = "identity",
    queries: Annotated[str | None, typer.Option(help=_QUERIES_HELP + " [default: all]")] = None,
) -> None:
    """Write trivial predictions for a split, to smoke-test an evaluation pipeline."""
    from cogen.eval import baseline_records, write_predictions
    from cogen.folder import read_split

    count = write_predictions(out, baseline_records(read_split(data, config, split), kind, queries=queries))
    _console.out.print(f"wrote {count} {kind} predictions to {out}")


def _pad(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise typer.BadParameter(f"--pad {text!r} is not HxW (e.g. 30x30)")
    return int(parts[0]), int(parts[1])


def _write_json(path: Path, metrics: dict) -> None:
    import json
    import math

    def clean(value):  # JSON has no NaN: write null
        if isinstance(value, float) and math.isnan(value):
            return None
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(clean(metrics), indent=2) + "\n", encoding="utf-8")


def _print(metrics: dict, breakdown: bool) -> None:
    from rich.table import Table

    from cogen.eval import summary_rows

    title = f"{metrics['config']} / {metrics['split']}: {metrics['predictions']} ({metrics['seconds']:.2f} s)"
    table = Table(title=title, title_justify="left", show_header=False)
    table.add_column("metric")
    table.add_column("value")
    for name, value in summary_rows(metrics):
        table.add_row(name, value)
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
