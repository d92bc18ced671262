"""``cogen baselines``: train the papers' models on cogen datasets, tabulate and compare with the papers.

A thin layer over :mod:`cogen_baselines` (installed with the ``baselines`` extra); torch is
imported only when a command runs, so ``cogen --help`` stays fast and torch-free.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cogen.cli import _console
from cogen.cli._help import complete_configs, examples

__all__ = ["register"]

app = typer.Typer(help="Train the papers' model baselines (ResNet, transformers, LLaDA, MLC) and tabulate them beside the papers.",
                  no_args_is_help=True,
                  epilog=examples("cogen baselines models",
                                  "cogen baselines preflight --model grid-tf --data cogen-data --config C1-1",
                                  "cogen baselines train --model grid-tf --data cogen-data --config C1-1 --seed 0"))

_DATA = "A `cogen build` folder, or a Hub dataset repo id (owner/name)."
_SIZE = "paper (the papers' models) or small (a reduced size for CPU smoke runs)."
_DEVICE = "auto (CUDA when present), cuda, cuda:N or cpu."


def _library(module: str, needs_torch: bool = True):
    """Import ``cogen_baselines.<module>``, with a clear error when PyTorch is missing."""
    import importlib

    from cogen.errors import optional_import

    if needs_torch:
        optional_import("torch", "`cogen baselines`")
    return importlib.import_module(f"cogen_baselines.{module}")


def _log_to_console(verbose: bool) -> None:
    import logging

    from rich.logging import RichHandler

    logger = logging.getLogger("cogen_baselines")
    logger.handlers[:] = [RichHandler(console=_console.err, show_path=False, show_time=False)]
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    logger.propagate = False


def _progress_bar(enabled: bool, label: str):
    from contextlib import contextmanager

    from cogen.cli._progress import counted_bar

    @contextmanager
    def bar():
        with counted_bar(enabled, label, "steps", "{task.fields[status]}", status="loading data") as (progress, task):

            def update(step: int, total: int, info: dict) -> None:
                progress.update(task, completed=step, total=total,
                                status=f"epoch {info['epoch']} loss {info['loss']:.4f}")

            yield update

    return bar()


def _options(epochs, batch_size, eval_batch_size, size, device, train_samples, task_codes, compile_, precision,
             grad_accum, follow) -> dict:
    return {"epochs": epochs, "batch_size": batch_size, "eval_batch_size": eval_batch_size, "size": size,
            "device": device, "train_samples": train_samples, "task_codes": task_codes, "compile": compile_,
            "precision": precision, "grad_accum": grad_accum, "follow": follow}


Epochs = Annotated[int | None, typer.Option(min=1, help="Epochs.", show_default="the paper's; 10, LLaDA 20, MLC 200/300")]
BatchSize = Annotated[int | None, typer.Option(min=1, help="Training batch.", show_default="the paper's; 64, PL-TF and LLaDA 32, MLC 200 episodes")]
EvalBatch = Annotated[int, typer.Option(min=1, help="Evaluation batch (any size gives the same scores).")]
Size = Annotated[str, typer.Option(help=_SIZE)]
Device = Annotated[str, typer.Option(help=_DEVICE)]
TrainSamples = Annotated[int | None, typer.Option(min=1, help="Train on the first N training rows only (quick runs).")]
TaskCodes = Annotated[str, typer.Option(help="auto (depth-4 codes for CompGen, none for EnvGen, as the paper), on or off.")]
Compile = Annotated[str, typer.Option("--compile", help="torch.compile: auto (CUDA only), on or off.")]
Precision = Annotated[str, typer.Option(help="auto (fp16 mixed precision on CUDA, fp32 elsewhere), fp32, fp16 or bf16; fp16/bf16 force the GPU's path on any device.")]
GradAccum = Annotated[int | None, typer.Option(min=1, help="Micro-batches per optimiser update. Memory only: an update still sees the paper's batch. `cogen baselines preflight` says which value fits.", show_default="the model's; MLC 8")]
Follow = Annotated[str, typer.Option(help="Where the paper's text and the authors' code differ (checkpoint rule, LLaDA's batch, init, dropout; docs/baselines.md lists them): code (what produced the paper's numbers) or text.")]
ShowProgress = Annotated[bool, typer.Option("--progress/--no-progress", help="Progress bar on stderr.")]
Model = Annotated[str, typer.Option("--model", "-m", help="resnet, resnet-film, vanilla-tf, grid-tf, pl-tf, llada, llada-sft or mlc.")]
Data = Annotated[str, typer.Option("--data", "-d", help=_DATA)]
Config = Annotated[str, typer.Option("--config", "-c", help="Config (experiment) name, e.g. C1-1.",
                                     autocompletion=complete_configs)]


@app.command("train", epilog=examples("cogen baselines train --model grid-tf --data cogen-data --config C1-1 --seed 0",
                                      "cogen baselines train -m resnet -d cogen-data -c C1-1 --size small --device cpu"))
def train(
    model: Model, data: Data, config: Config,
    seed: Annotated[int, typer.Option(help="Seed of the weights, the order and the dropout.")] = 0,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Run folder.", show_default="runs/<model>/<config>/seed<seed>")] = None,
    epochs: Epochs = None, batch_size: BatchSize = None, eval_batch_size: EvalBatch = 500, size: Size = "paper",
    device: Device = "auto", train_samples: TrainSamples = None, task_codes: TaskCodes = "auto",
    compile_: Compile = "auto", precision: Precision = "auto", grad_accum: GradAccum = None, follow: Follow = "code",
    stream: Annotated[str | None, typer.Option(help="Train on fresh samples every epoch: the spec --data was built from (a packaged name such as c1, or a file); each epoch draws as many samples as the training split holds from the config's endless stream, never a stored validation or test pair. Grid models only.")] = None,
    progress: ShowProgress = True,
) -> None:
    """Train one model on one experiment with the paper's protocol; predict and score the test splits."""
    config_type = _library("config").RunConfig
    run_config = config_type(model, data, config, seed, stream=stream,
                             **_options(epochs, batch_size, eval_batch_size, size, device, train_samples, task_codes,
                                        compile_, precision, grad_accum, follow))
    _log_to_console(False)
    with _progress_bar(progress, f"{model} {config} seed {seed}") as bar:
        summary = _library("run").train(run_config, out, bar)
    _print_summary(summary, out or _library("config").default_run_dir(run_config))


def _print_summary(summary: dict, folder) -> None:
    from rich.table import Table

    table = Table(title=f"{summary['model']} on {summary['config']}, seed {summary['seed']} "
                        f"({summary['parameters']:,} parameters, {summary['seconds']:.0f} s, {summary['device']})",
                  title_justify="left")
    for column in ("checkpoint rule", "epoch", "split", "cogen eval", "padded grid acc.", "loss"):
        table.add_column(column, justify="left" if column in ("checkpoint rule", "split") else "right")
    headline = summary.get("headline") or _library("workload", needs_torch=False).headlines(summary)[0]
    for rule, result in summary["results"].items():
        for split, numbers in result.items():
            if isinstance(numbers, dict):
                table.add_row(rule, str(result["epoch"]), split, f"{100 * numbers[headline]:.1f} %",
                              f"{100 * numbers['padded_grid_accuracy']:.1f} %", f"{numbers['loss']:.4f}")
    _console.out.print(table)
    _console.out.print(f"run folder: {folder}")


@app.command("table", epilog=examples("cogen baselines table runs", "cogen baselines table runs --out table.md"))
def table(
    runs: Annotated[list[Path], typer.Argument(help="Run folders, or folders holding run folders.")],
    rule: Annotated[str, typer.Option(help="Checkpoint rule: paper (each run's own: the one its model's authors' code keeps), ood_acc, ood_cell_acc, ood_loss (the grid paper's text), id_val or final.")] = "paper",
    metric: Annotated[str, typer.Option(help="paper (each paper's own metric: the padded grid accuracy; MLC's teacher-forced scores), padded_grid_accuracy or grid_accuracy (cogen eval on the cut-out grids); the other sits beside it.")] = "paper",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Also write the Markdown to this file.")] = None,
) -> None:
    """Print the paper's Table 1 layout (ID / OOD / Δ, mean ± SEM over seeds) beside the paper's numbers; runs
    that do not follow the paper's protocol (size, epochs, rows, batch) are marked †."""
    tables = _library("table", needs_torch=False)
    markdown = tables.results_table(tables.find_runs(runs), rule, metric)
    typer.echo(markdown, nl=False)
    if out is not None:
        from cogen.folder.atomic import atomic_write

        atomic_write(out, lambda temporary: temporary.write_text(markdown, encoding="utf-8"))


@app.command("suite", epilog=examples("cogen baselines suite --models resnet,vanilla-tf --settings c1 --seeds 0,1 "
                                      "--data cogen-data --out runs"))
def suite(
    models: Annotated[str, typer.Option(help="Comma-separated models, e.g. resnet,vanilla-tf.")],
    settings: Annotated[str, typer.Option(help="Comma-separated settings (c1,g3) or configs (C1-1).")],
    data: Annotated[str, typer.Option("--data", "-d", help=_DATA)],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder of the runs; the table goes to OUT/table.md.")],
    seeds: Annotated[str, typer.Option(help="Comma-separated seeds.")] = "0,1,2",
    jobs: Annotated[int, typer.Option(min=1, help="Runs trained side by side (separate processes; they can share one GPU).")] = 1,
    epochs: Epochs = None, batch_size: BatchSize = None, eval_batch_size: EvalBatch = 500, size: Size = "paper",
    device: Device = "auto", train_samples: TrainSamples = None, task_codes: TaskCodes = "auto",
    compile_: Compile = "auto", precision: Precision = "auto", grad_accum: GradAccum = None, follow: Follow = "code",
    progress: ShowProgress = True,
) -> None:
    """Train models x settings x seeds (finished runs are skipped) and print the results table."""
    suites = _library("suite")
    seed_list = [int(s) for s in seeds.split(",") if s.strip()] if seeds else []
    if not seed_list:
        raise typer.BadParameter("--seeds needs at least one seed, e.g. 0,1,2")
    _log_to_console(False)
    options = _options(epochs, batch_size, eval_batch_size, size, device, train_samples, task_codes, compile_,
                       precision, grad_accum, follow)

    def finished(run, summary) -> None:
        _console.err.print(f"done: {run.model} {run.config} seed {run.seed}")

    with _progress_bar(progress and jobs == 1, "suite") as bar:
        markdown = suites.run_suite(_split(models), _split(settings), seed_list, data, out, jobs=jobs,
                                    options=options, on_run=finished, progress=bar)
    typer.echo(markdown, nl=False)


@app.command("preflight", epilog=examples(
    "cogen baselines preflight --model grid-tf --data cogen-data --config C1-1",
    "cogen baselines preflight -m pl-tf -d cogen-data -c C1-1 --device cuda --grad-accum 2 --json"))
def preflight(
    model: Model, data: Data, config: Config,
    batch_size: BatchSize = None, size: Size = "paper", device: Device = "auto", train_samples: TrainSamples = None,
    task_codes: TaskCodes = "auto", compile_: Compile = "auto", precision: Precision = "auto",
    grad_accum: GradAccum = None, follow: Follow = "code",
    memory_gb: Annotated[float | None, typer.Option(min=0.001, help="Card memory to plan for, GB.", show_default="the GPU's; 24 without one")] = None,
    steps: Annotated[int, typer.Option(min=1, help="Timed updates after the first (which compiles).")] = 3,
    json_: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Before a long run: build the model and real batches, run a few updates (compile included), and print
    parameters, step and compile time, peak memory, whether it fits the card (and the --grad-accum that
    does), host syncs per update, and the estimated time of the full paper-protocol run."""
    import json

    run_config = _library("config").RunConfig(
        model, data, config, **_options(None, batch_size, 500, size, device, train_samples, task_codes, compile_,
                                        precision, grad_accum, follow))
    flight = _library("preflight")
    report = flight.preflight(run_config, memory_gb=memory_gb, steps=steps)
    typer.echo(json.dumps(report, indent=2) if json_ else flight.render(report), nl=json_)


@app.command("models", epilog=examples("cogen baselines models"))
def models() -> None:
    """List the models with their parameter counts (20x20 CompGen shapes) beside the papers' figures."""
    from rich.table import Table

    counts = _library("registry").parameter_counts()
    table = Table(title="cogen baselines models", title_justify="left")
    for column in ("model", "parameters", "paper", "difference", "what it is"):
        table.add_column(column, justify="right" if column in ("parameters", "paper", "difference") else "left")
    for row in counts:
        paper = f"{row['paper']:,}" if row["paper"] else "–"
        difference = f"{row['parameters'] / row['paper'] - 1:+.1%}" if row["paper"] else "–"
        table.add_row(row["model"], f"{row['parameters']:,}", paper, difference, row["summary"])
    _console.out.print(table)


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def register(root: typer.Typer) -> None:
    """Add ``cogen baselines`` to the ``cogen`` app."""
    root.add_typer(app, name="baselines")
