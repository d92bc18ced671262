"""Many runs: models x experiments x seeds, one after another or several side by side.

``run_suite(["resnet", "vanilla-tf"], ["c1", "g3"], [0, 1, 2], "cogen-data", "runs")`` trains every
model on every experiment of settings C1 and G3 with seeds 0-2 into ``runs/<model>/<config>/seed<s>``
and writes ``runs/table.md``. Finished runs are skipped, so an interrupted suite resumes. With
``jobs > 1`` that many runs train at once, each in its own ``cogen baselines train`` process
(small models do not fill a GPU; several share it well); their logs go to ``runs/logs/``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from cogen.folder.atomic import atomic_write
from cogen_baselines.config import RunConfig
from cogen_baselines.errors import BaselineError

__all__ = ["configs_of", "plan", "run_suite"]


def _available(data: str) -> list[str]:
    """Config names of a build folder or a Hub dataset repo (from its manifests)."""
    folder = Path(data).expanduser()
    if folder.is_dir():
        return sorted(path.stem for path in (folder / "manifests").glob("*.json"))
    from huggingface_hub import list_repo_files

    try:
        files = list_repo_files(data, repo_type="dataset")
    except (OSError, ValueError) as error:
        raise BaselineError(f"{data}: cannot list its configs ({type(error).__name__}: {error})") from None
    return sorted(Path(name).stem for name in files if name.startswith("manifests/") and name.endswith(".json"))


def _natural_key(name: str) -> tuple:
    """Sort ``C1-2`` before ``C1-10``."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


def configs_of(data: str, settings: Sequence[str]) -> list[str]:
    """The configs of ``data`` that ``settings`` name: a setting (``c1``: every ``C1-*`` config) or a config."""
    available = _available(data)
    chosen = []
    for setting in settings:
        wanted = [name for name in available if name.lower() == setting.lower()
                  or name.lower().startswith(setting.lower() + "-")]
        if not wanted:
            raise BaselineError(f"{data} has no config of setting {setting!r}; it has {', '.join(available) or 'none'}")
        chosen += [name for name in wanted if name not in chosen]
    return sorted(chosen, key=_natural_key)


def plan(models: Sequence[str], settings: Sequence[str], seeds: Sequence[int], data: str,
         options: dict | None = None) -> list[RunConfig]:
    """Every run of the suite, in order (model, config, seed); a model that cannot train on one of the
    configs (other columns, or task codes it needs and the config lacks) is refused before any run."""
    from cogen_baselines.data import experiment_manifest, wants_task_codes
    from cogen_baselines.registry import resolve_model
    from cogen_baselines.workload import check_fits

    configs = configs_of(data, settings)
    base = RunConfig(models[0], data, "", **(options or {}))
    for config in configs:
        manifest = experiment_manifest(data, config)
        for model in models:
            check_fits(resolve_model(model), manifest, config, wants_task_codes(manifest, base.task_codes))
    return [replace(base, model=model, config=config, seed=seed)
            for model in models for config in configs for seed in seeds]


def _command(run: RunConfig, out: Path) -> list[str]:
    command = [sys.executable, "-m", "cogen", "baselines", "train", "--model", run.model, "--data", run.data,
               "--config", run.config, "--seed", str(run.seed), "--out", str(out), "--no-progress",
               "--size", run.size, "--device", run.device, "--task-codes", run.task_codes, "--compile", run.compile,
               "--precision", run.precision, "--eval-batch-size", str(run.eval_batch_size), "--follow", run.follow]
    for flag, value in (("--epochs", run.epochs), ("--batch-size", run.batch_size),
                        ("--train-samples", run.train_samples), ("--grad-accum", run.grad_accum)):
        if value is not None:
            command += [flag, str(value)]
    return command


def _in_process(runs, folder_of, on_run, progress):
    from cogen_baselines.run import train

    for run in runs:
        on_run(run, train(run, folder_of(run), progress))


def _environment(jobs: int) -> dict:
    """The runs' environment: on a CPU, side-by-side runs share the cores instead of each taking all of them."""
    import torch

    environment = dict(os.environ)
    if not torch.cuda.is_available() and "OMP_NUM_THREADS" not in environment:
        environment["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // jobs))
    return environment


def _side_by_side(runs, folder_of, on_run, jobs: int, logs: Path) -> list[str]:
    logs.mkdir(parents=True, exist_ok=True)
    failures = []
    environment = _environment(jobs)

    def launch(run: RunConfig):
        log = logs / f"{run.model}-{run.config}-seed{run.seed}.log"
        with log.open("w", encoding="utf-8") as output:
            code = subprocess.run(_command(run, folder_of(run)), stdout=output, stderr=subprocess.STDOUT,
                                  env=environment, check=False).returncode
        if code:
            failures.append(f"{run.model} {run.config} seed {run.seed} (exit {code}; see {log})")
        on_run(run, None)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(launch, runs))
    return failures


def run_suite(models: Sequence[str], settings: Sequence[str], seeds: Sequence[int], data: str, out: str | Path,
              *, jobs: int = 1, options: dict | None = None, rule: str | None = None,
              on_run: Callable | None = None, progress: Callable | None = None) -> str:
    """Train every run of the suite into ``out`` and return the results table (also ``out/table.md``).

    ``on_run(run, summary)`` is called as each run ends; ``progress`` is passed to in-process runs.
    Runs that fail in side-by-side mode are listed in a :class:`BaselineError` after the others finish.
    """
    from cogen_baselines.protocol import DEFAULT_RULE
    from cogen_baselines.table import find_runs, results_table

    if jobs < 1:
        raise BaselineError(f"jobs must be at least 1, not {jobs}")
    out = Path(out)
    runs = plan(models, settings, seeds, data, options)

    def folder_of(run: RunConfig) -> Path:
        return out / run.model / run.config / f"seed{run.seed}"

    report = on_run or (lambda run, summary: None)
    failures = _side_by_side(runs, folder_of, report, jobs, out / "logs") if jobs > 1 else \
        _in_process(runs, folder_of, report, progress) or []
    table = results_table(find_runs([folder_of(run) for run in runs if folder_of(run).exists()]),
                          rule or DEFAULT_RULE)
    atomic_write(out / "table.md", lambda temporary: temporary.write_text(table, encoding="utf-8"))
    if failures:
        raise BaselineError(f"{len(failures)} of {len(runs)} runs failed: " + "; ".join(failures))
    return table
