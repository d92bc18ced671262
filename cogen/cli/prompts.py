"""``cogen prompts export`` / ``cogen prompts parse``: in-context evaluation of language models."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cogen.cli import _console
from cogen.cli._help import examples
from cogen.cli._options import ConfigOpt, DataOpt, SplitOpt, output_file
from cogen.cli._progress import progress_bar
from cogen.family import option_help

__all__ = ["register"]

app = typer.Typer(help="Export LLM prompts for a split; parse the replies into predictions for `cogen eval`.",
                  no_args_is_help=True,
                  epilog=examples("cogen prompts export -d cogen-data -c C1-1 -s test_ood -o prompts.jsonl",
                                  "cogen prompts parse -r replies.jsonl -o preds.jsonl"))


@app.command("export", epilog=examples("cogen prompts export -d cogen-data -c C1-1 -o prompts.jsonl --selection paper "
                                       "--per-experiment 10"))
def export(
    data: DataOpt,
    config: ConfigOpt,
    out: Annotated[Path, typer.Option("--out", "-o", help="Prompts file to write (JSONL: id, prompt, ...).")],
    split: SplitOpt = "test_ood",
    regime: Annotated[str | None, typer.Option(help=option_help("prompts", "regime"))] = None,
    examples: Annotated[int | None, typer.Option(min=1, help=option_help("prompts", "examples"))] = None,
    seed: Annotated[int | None, typer.Option(help=option_help("prompts", "seed"))] = None,
    queries: Annotated[str | None, typer.Option(help=option_help("prompts", "queries"))] = None,
    selection: Annotated[str | None, typer.Option(help=option_help("prompts", "selection", "cogen (cogen's example rule) or paper (the paper's)."))] = None,
    per_experiment: Annotated[int | None, typer.Option("--per-experiment", min=1, help=option_help("prompts", "per_experiment"))] = None,
    images: Annotated[Path | None, typer.Option(help=option_help("prompts", "images"))] = None,
    no_code: Annotated[bool, typer.Option("--no-code", help=option_help("prompts", "no_code"))] = False,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Progress bar on stderr.")] = True,
) -> None:
    """Write one prompt per expected prediction id (or per sampled one, with --per-experiment)."""
    from cogen.llm import export_prompts

    output_file(out, "--out")
    with progress_bar(progress, {"prompts": "writing prompts"}) as bar:
        count = export_prompts(data, config, split, out, regime=regime, examples=examples, seed=seed, queries=queries,
                               selection=selection, per_experiment=per_experiment,
                               images=None if images is None else str(images), no_code=no_code or None, progress=bar)
    _console.out.print(f"wrote {count} prompts to {out}" + (f"; images in {images}" if images is not None else ""))


@app.command("parse", epilog=examples("cogen prompts parse -r replies.jsonl -o preds.jsonl --marker output:"))
def parse(
    replies: Annotated[Path, typer.Option("--replies", "-r", help="JSONL of {\"id\": ..., \"reply\": ...} records.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Predictions file to write (.jsonl or .parquet).")],
    marker: Annotated[str, typer.Option(help="auto: 'output:' when present, else the bare reply; output: required; raw: bare list only.")] = "auto",
) -> None:
    """Extract each reply's grid; unparsable replies become null predictions (format errors in `cogen eval`)."""
    from cogen.llm import parse_replies

    output_file(out, "--out")
    report = parse_replies(replies, out, marker)
    reasons = ", ".join(f"{name} {count}" for name, count in sorted(report.reasons.items()))
    _console.out.print(f"{report.parsed} of {report.total} replies parsed" + (f" ({reasons})" if reasons else "")
                       + (f"; {report.unreadable_lines} unreadable lines" if report.unreadable_lines else "")
                       + f"; predictions written to {out}")


def register(root: typer.Typer) -> None:
    """Add ``cogen prompts`` to the ``cogen`` app."""
    root.add_typer(app, name="prompts")
