"""``cogen prompts export`` / ``cogen prompts parse``: in-context evaluation of language models."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cogen.cli import _console
from cogen.cli._options import ConfigOpt, DataOpt, SplitOpt, output_file
from cogen.cli._progress import progress_bar

__all__ = ["register"]

app = typer.Typer(help="Export LLM prompts for a split; parse the replies into predictions for `cogen eval`.",
                  no_args_is_help=True)


@app.command("export")
def export(
    data: DataOpt,
    config: ConfigOpt,
    out: Annotated[Path, typer.Option("--out", "-o", help="Prompts file to write (JSONL: id, prompt, ...).")],
    split: SplitOpt = "test_ood",
    regime: Annotated[str | None, typer.Option(help="COGITAO task codes: explicit (names) or coded (t1, t2, ...). [default: explicit]")] = None,
    examples: Annotated[int | None, typer.Option(min=1, help="COGITAO: in-context examples per prompt (from train). [default: 5]")] = None,
    seed: Annotated[int | None, typer.Option(help="COGITAO: seed of the in-context example draw. [default: 0]")] = None,
    queries: Annotated[str | None, typer.Option(help="Compositional-ARC: first query of each episode, or all. [default: first]")] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Progress bar on stderr.")] = True,
) -> None:
    """Write one prompt per expected prediction id."""
    from cogen.llm import export_prompts

    output_file(out, "--out")
    with progress_bar(progress, {"prompts": "writing prompts"}) as bar:
        count = export_prompts(data, config, split, out, regime=regime, examples=examples, seed=seed, queries=queries,
                               progress=bar)
    _console.out.print(f"wrote {count} prompts to {out}")


@app.command("parse")
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
