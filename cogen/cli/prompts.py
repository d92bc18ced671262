"""``cogen prompts export`` / ``run`` / ``parse``: in-context evaluation of language models."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cogen.cli import _console
from cogen.cli._family_options import with_family_options
from cogen.cli._help import examples
from cogen.cli._options import ConfigOpt, DataOpt, SplitOpt, number, output_file
from cogen.cli._progress import progress_bar

__all__ = ["register"]

app = typer.Typer(help="Export LLM prompts for a split, run them against an OpenAI-compatible server, parse the replies "
                       "into predictions for `cogen eval`.",
                  no_args_is_help=True,
                  epilog=examples("cogen prompts export -d cogen-data -c C1-1 -s test_ood -o prompts.jsonl",
                                  "cogen prompts parse -r replies.jsonl -o preds.jsonl"))


@app.command("export", epilog=examples("cogen prompts export -d cogen-data -c C1-1 -o prompts.jsonl --selection paper "
                                       "--per-experiment 10"))
@with_family_options("prompts")
def export(
    data: DataOpt,
    config: ConfigOpt,
    out: Annotated[Path, typer.Option("--out", "-o", help="Prompts file to write (JSONL: id, prompt, ...).")],
    split: SplitOpt = "test_ood",
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Progress bar on stderr.")] = True,
    family_options: dict | None = None,
) -> None:
    """Write one prompt per expected prediction id (or per sampled one, with --per-experiment).

    The other options belong to families: each applies to the configs of the families its help names.
    """
    from cogen.llm import export_prompts

    output_file(out, "--out")
    with progress_bar(progress, {"prompts": "writing prompts"}) as bar:
        count = export_prompts(data, config, split, out, progress=bar, **family_options)
    images = family_options.get("images")
    _console.out.print(f"wrote {count} prompts to {out}" + (f"; images in {images}" if images is not None else ""))


@app.command("run", epilog=examples(
    "cogen prompts run -d cogen-data -c C3-1 -s test_ood --base-url http://localhost:8000/v1 -m Qwen/Qwen2.5-7B-Instruct "
    "-o runs/qwen-c3-1",
    "cogen prompts run -d cogen-data -c C3-1 --base-url https://openrouter.ai/api/v1 -m openai/gpt-4o "
    "--api-key-env OPENROUTER_API_KEY --attempts 2 -o runs/gpt-4o",
    "cogen prompts run -d cogen-data -c C3-1 --base-url https://openrouter.ai/api/v1 -m openai/gpt-4o "
    "--attempts 2 -o runs/gpt-4o --dry-run"))
@with_family_options("prompts", "eval")
def run(
    data: DataOpt,
    config: ConfigOpt,
    base_url: Annotated[str, typer.Option("--base-url", help="The server's OpenAI-compatible API, e.g. http://localhost:8000/v1 (vLLM, SGLang, llama.cpp, Ollama) or https://openrouter.ai/api/v1; requests go to {URL}/chat/completions.")],
    model: Annotated[str, typer.Option("--model", "-m", help="The model name the server knows.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder of the run: prompts.jsonl, replies.jsonl, predictions.jsonl, run.json, metrics.json; running the command again resumes it.")],
    split: SplitOpt = "test_ood",
    api_key_env: Annotated[str | None, typer.Option("--api-key-env", help="Environment variable holding the API key (never written anywhere).", show_default="OPENAI_API_KEY when set, else no key")] = None,
    concurrency: Annotated[int, typer.Option(help="Requests in flight at once.", callback=number("--concurrency", 1, 1024))] = 8,
    attempts: Annotated[int, typer.Option(help="Times each prompt is asked; 2 scores ARC-style pass@2 beside pass@1.", callback=number("--attempts", 1, 100))] = 1,
    max_tokens: Annotated[int | None, typer.Option("--max-tokens", help="Reply tokens at most (the request's max_tokens).", show_default="the server's", callback=number("--max-tokens", 1))] = None,
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature (the papers used the APIs' defaults).", show_default="the server's", callback=number("--temperature", 0, 2))] = None,
    param: Annotated[list[str] | None, typer.Option("--param", help="Another field of the request body, NAME=VALUE (VALUE read as JSON when it is JSON), e.g. --param top_p=1 --param reasoning_effort=low; repeatable.")] = None,
    limit: Annotated[int | None, typer.Option(help="Ask only the first N prompts (a later run with a larger --limit asks the rest).", callback=number("--limit", 1))] = None,
    request_timeout: Annotated[float, typer.Option("--request-timeout", help="Seconds to wait for a server's answer before asking again.", callback=number("--request-timeout", above=0))] = 600.0,
    retries: Annotated[int, typer.Option(help="Further requests a prompt may get after a 429, a 5xx, a timeout or a dropped connection.", callback=number("--retries", 0, 100))] = 8,
    force: Annotated[bool, typer.Option("--force", help="Discard the replies in --out when they were made with other settings, and start again.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the requests and tokens the run would cost, send nothing.")] = False,
    breakdown: Annotated[bool, typer.Option("--breakdown/--no-breakdown", help="Print the per-transformation and per-sequence tables.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print the run's record (run.json and the metrics) as JSON on stdout, not tables.")] = False,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Progress bar on stderr.")] = True,
    family_options: dict | None = None,
) -> None:
    """Send every prompt of a split to an OpenAI-compatible server, keep each reply once, and score the run.

    The prompts are those of `cogen prompts export` with the same options; the score table is that of
    `cogen eval`. Rerunning the same command resumes: only what is missing is asked.
    The other options belong to families: each applies to the configs of the families its help names.
    """
    from cogen.llm.run import RunSettings, run_prompts

    settings = RunSettings(data=data, config=config, split=split, base_url=base_url, model=model,
                           options=family_options, attempts=attempts, concurrency=concurrency, max_tokens=max_tokens,
                           temperature=temperature, params=_params(param or []), limit=limit,
                           api_key_env=api_key_env, request_timeout=request_timeout, retries=retries)
    if dry_run:
        plan = run_prompts(settings, out, dry_run=True)
        if json_output:
            _console.print_json(plan)
        else:
            _console.out.print(_plan_text(plan["plan"], settings))
        return
    if not json_output:
        _console.note(f"asking {model} at {base_url}")
    from cogen.cli.evaluate import unconfined_note

    with _reply_bar(progress and not json_output) as bar, unconfined_note():
        result = run_prompts(settings, out, force=force, progress=bar, note=_console.note,
                             announce=lambda plan: _console.note(_plan_text(plan, settings)))
    _show_run(result, out, json_output, breakdown)


def _params(pairs: list[str]) -> dict:
    """``--param NAME=VALUE`` pairs as request fields (VALUE as JSON when it parses)."""
    import json

    fields = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals or not name.strip():
            raise typer.BadParameter(f"--param {pair!r} is not NAME=VALUE (e.g. top_p=1)")
        name = name.strip()
        if name in ("model", "messages", "stream", "max_tokens", "temperature"):
            raise typer.BadParameter(f"--param {name} is set by cogen"
                                     + (f"; use --{name.replace('_', '-')}" if name in ("max_tokens", "temperature") else ""))
        try:
            fields[name] = json.loads(value)
        except ValueError:
            fields[name] = value
    return fields


def _plan_text(plan: dict, settings) -> str:
    replies = ("reply tokens up to the server's limit" if plan["reply_tokens_at_most"] is None
               else f"at most {plan['reply_tokens_at_most']:,} reply tokens")
    done = f" ({plan['already_answered']:,} already answered)" if plan["already_answered"] else ""
    images = f", {plan['images']:,} images" if plan["images"] else ""
    return (f"{plan['prompts']:,} prompts x {plan['attempts']} attempt(s): {plan['requests']:,} requests to send{done}; "
            f"about {plan['prompt_tokens_estimate']:,} prompt tokens (estimated: words and punctuation; the model's "
            f"tokenizer decides){images}, {replies}")


def _reply_bar(enabled: bool):
    """A progress bar of replies kept, with replies/s."""
    from contextlib import contextmanager

    from cogen.cli._progress import counted_bar

    @contextmanager
    def bar():
        with counted_bar(enabled, "replies", "{task.fields[rate]}", rate="") as (progress, task):

            def update(phase: str, advance: int, total: int) -> None:
                if total:
                    progress.update(task, total=total)
                progress.advance(task, advance)
                speed = progress.tasks[0].speed
                progress.update(task, rate=f"{speed:.1f} replies/s" if speed else "")

            yield update

    return bar()


def _show_run(result: dict, out: Path, json_output: bool, breakdown: bool) -> None:
    from cogen.cli.evaluate import _clean, show_metrics

    metrics = result.pop("metrics")
    show_metrics(metrics, json_output, breakdown)
    if json_output:
        _console.print_json(_clean({**result, "metrics": metrics}))
        return
    if "markdown" in metrics:
        _console.out.print(metrics["markdown"], markup=False, highlight=False, soft_wrap=True)
    scores, counts, tokens = result["scores"], result["counts"], result["tokens"]
    passes = "; ".join(f"{name} {100 * scores[name]:.1f} % ({scores['solved'][name]} of {scores['n']})"
                       for name in scores["solved"])
    _console.out.print(f"{passes} (a prompt solved by any of its first k attempts)")
    _console.out.print(f"{counts['replies']:,} of {counts['requests']:,} replies in {out} ({counts['this_run']:,} this "
                       f"run); tokens: {tokens['prompt_tokens']:,} prompt, {tokens['completion_tokens']:,} reply"
                       + (f"; retries {', '.join(f'{k}: {v}' for k, v in counts['retries'].items())}"
                          if counts["retries"] else ""))
    if counts["missing"]:
        from cogen.errors import EvalError

        failed = result.get("failed") or [{"id": "?", "error": "no reply"}]
        raise EvalError(f"{counts['missing']:,} requests got no reply after their retries (first: "
                        f"{failed[0]['id']}: {failed[0]['error']}); they count as missing "
                        "predictions above; run the same command again to ask for them")


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
