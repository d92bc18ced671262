"""``cogen build``, ``cogen verify`` and ``cogen sample``."""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from cogen.cli import _console
from cogen.cli._help import complete_transforms, examples
from cogen.cli._options import SpecOrConfigOpt, number
from cogen.cli._progress import progress_bar

DEFAULT_SPEC = "c1"
#: The largest seed (as :data:`cogen.pipeline.driver.MAX_SEED`; not imported, so ``--help`` stays light).
MAX_SEED = 2**63 - 1
DEFAULT_OUT = Path("cogen-data")
#: Rows per config ``cogen verify`` regenerates (as :data:`cogen.pipeline.verify.REGENERATED_ROWS`; not
#: imported, so ``--help`` stays light).
DEFAULT_SAMPLE = 10_000


class ExecutorKind(str, Enum):
    local = "local"
    dask = "dask"


def register(app: typer.Typer) -> None:
    """Add the build commands to ``app``."""
    app.command("build", epilog=examples("cogen build --config c1 --scale 0.01 --out c1-small",
                                         "cogen build --config C3-1 --out data/c3 --workers 4"))(build)
    app.command("verify", epilog=examples("cogen verify cogen-data", "cogen verify cogen-data --full --json",
                                          "cogen verify cogen-data --regenerate"))(verify)
    app.command("sample", epilog=examples("cogen sample -t rot90,translate_up --grid 20 --objects 2 --seed 0"))(sample)


OutTargetOpt = Annotated[str, typer.Option(
    "--out", "-o", help="Dataset folder to write (Hub repo layout), or an fsspec URL such as s3://bucket/prefix.")]


def build(
    config: SpecOrConfigOpt = DEFAULT_SPEC,
    out: OutTargetOpt = str(DEFAULT_OUT),
    scale: Annotated[float, typer.Option(callback=number("--scale", above=0),
                                         help="Multiply every split size (e.g. 0.01 for a quick build).")] = 1.0,
    seed: Annotated[int | None, typer.Option(callback=number("--seed", 0, MAX_SEED),
                                             help="Override the spec's seed.")] = None,
    workers: Annotated[int, typer.Option(callback=number("--workers", 1), help="Worker processes (never changes the "
                                         "output; at most the cores available; a build of fewer than 20,000 "
                                         "rows runs in one process).")] = min(os.cpu_count() or 1, 8),
    executor: Annotated[ExecutorKind, typer.Option(case_sensitive=False, help="local process pool, or a Dask cluster.")] = ExecutorKind.local,
    dask_address: Annotated[str | None, typer.Option(help="Scheduler address for --executor dask.", show_default="a local cluster")] = None,
    dask_scheduler_file: Annotated[str | None, typer.Option(help="Scheduler file (dask scheduler --scheduler-file) for --executor dask.")] = None,
    storage_options: Annotated[str | None, typer.Option(help='fsspec options for a URL --out, as JSON, e.g. \'{"endpoint_url": "http://host:9000"}\'.')] = None,
    only: Annotated[str | None, typer.Option(help="Comma-separated configs of the spec to build, e.g. C3-1,C3-2.")] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Progress bar on stderr.")] = True,
    force: Annotated[bool, typer.Option("--force", help="Replace the content of an --out that holds another build "
                                        "(other spec, seed, scale or versions), or a README.md cogen did not write; "
                                        "build even if the memory estimate is above the machine's memory.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout (for scripts).")] = False,
    parquet_cdc: Annotated[bool, typer.Option("--parquet-cdc", help="Write Parquet with content-defined chunking (for a dataset you append to; about twice the encoding time).")] = False,
) -> None:
    """Build the configs of a spec into a Hub-ready dataset folder (resumes interrupted builds)."""
    from cogen.pipeline import build as run_build
    from cogen.specs import locate_configs

    spec, selected = locate_configs(config)
    names = [name.strip() for name in only.split(",") if name.strip()] if only else None
    if selected and names:
        raise typer.BadParameter(f"--config {config} already names one config; drop --only, or pass its spec")
    with progress_bar(progress, {"keys": "sampling keys", "write": "writing shards"}) as bar:
        report = run_build(spec, out, scale=scale, seed=seed, workers=workers, executor=executor.value,
                           dask_address=dask_address, only=selected or names, progress=bar, notify=_console.note,
                           force=force, dask_scheduler_file=dask_scheduler_file,
                           storage_options=_storage_options(storage_options), parquet_cdc=parquet_cdc)
    if json_output:
        _console.print_json(_report_json(report))
        return
    _print_report(report)


def _cores(workers: int) -> int:
    """``workers``, at most the cores this process may use."""
    from cogen.pipeline.driver import available_cores

    return min(workers, available_cores())


def _report_json(report) -> dict:
    return {"folder": str(report.folder), "seconds": round(report.seconds, 3),
            "configs": [{"config": c.config, "rows": c.rows, "shards_written": c.written, "shards_kept": c.skipped,
                         "complete_before": bool(c.kept), "stats": c.stats} for c in report.configs]}


def _storage_options(text: str | None) -> dict | None:
    import json

    if text is None:
        return None
    try:
        options = json.loads(text)
    except ValueError as error:
        raise typer.BadParameter(f"--storage-options is not JSON ({error}); write it as '{{\"key\": \"value\"}}'") from None
    if not isinstance(options, dict):
        raise typer.BadParameter("--storage-options must be a JSON object, e.g. '{\"anon\": false}'")
    return options


#: What the build table's ``accepted`` column means, printed under it.
ACCEPTED_NOTE = ("accepted: the share of sampling attempts kept as samples (the others were rejected and drawn "
                 "again; the card's Generation statistics give the causes)")


def _print_report(report) -> None:
    from rich.table import Table

    from cogen.folder.stats import attempts as attempts_of

    table = Table(title=f"built into {report.folder} in {report.seconds:.1f} s", title_justify="left",
                  caption=ACCEPTED_NOTE, caption_justify="left")
    for column in ("config", "train", "val", "test", "val_ood", "test_ood", "accepted", "shards"):
        table.add_column(column, justify="right" if column != "config" else "left")
    for config in report.configs:
        attempts = sum(attempts_of(s) for s in config.stats.values())
        accepted = sum(s.get("accepted", 0) for s in config.stats.values())
        rate = f"{accepted / attempts:.0%}" if attempts else "–"
        shards = f"{config.skipped} kept" if config.kept else \
            f"{config.written} new" + (f", {config.skipped} kept" if config.skipped else "")
        table.add_row(config.config, *(str(config.rows.get(s, "–")) for s in
                                       ("train", "validation", "test", "validation_ood", "test_ood")), rate, shards)
    _console.out.print(table)
    kept = [config.config for config in report.configs if config.kept]
    if kept:
        _console.out.print(f"already complete, every shard matching its SHA-256: {', '.join(kept)} (kept as they are)")
    first = report.configs[0].config if report.configs else "<config>"
    if isinstance(report.folder, str):  # a bucket is not a Hub repo: datasets reads it as Parquet files
        _console.out.print(f'load with: datasets.load_dataset("parquet", data_files={{"train": '
                           f'"{report.folder}/data/{first}/train-*.parquet"}}, storage_options=...)')
    else:
        _console.out.print(f'load with: datasets.load_dataset("{report.folder}", "{first}")')


def verify(
    folder: Annotated[str, typer.Argument(help="A dataset folder written by `cogen build` or `cogen merge`, or its "
                                               "fsspec URL (s3://bucket/prefix).")],
    sample: Annotated[int, typer.Option(callback=number("--sample", 0),
                                        help="Rows per config the determinism check regenerates from the manifest and "
                                             "compares: every row of the splits that fit, random rows of every row "
                                             "group of the others (0: none).")] = DEFAULT_SAMPLE,
    full: Annotated[bool, typer.Option("--full", help="Re-derive the outputs of every row, not a sample of "
                                                      "10,000 rows per config.")] = False,
    regenerate: Annotated[bool, typer.Option("--regenerate", help="Check everything: also rebuild every shard from "
                                             "the spec and compare every row, id and order, and rebuild the object "
                                             "bank (costs about what the build cost).")] = False,
    workers: Annotated[int, typer.Option(callback=number("--workers", 1), help="Worker processes for --regenerate.")]
    = min(os.cpu_count() or 1, 8),
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Progress bar on stderr.")] = True,
    storage_options: Annotated[str | None, typer.Option(help="fsspec options for a URL FOLDER, as JSON.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout (for scripts).")] = False,
) -> None:
    """Re-check a built folder: the card against the manifests (what load_dataset loads), file hashes,
    the spec (a packaged one must be exactly that), every column decoded, held-out data, uniqueness,
    outputs re-derived from inputs, rows of every split regenerated, the preview; --regenerate also
    rebuilds every shard and the object bank and compares them (the check no re-signed hash can fool)."""
    from rich.table import Table

    from cogen.pipeline.verify import failed
    from cogen.pipeline.verify import verify as run_verify

    label = "checking every row" if full else "decoding every row"
    with progress_bar(progress, {"rows": label, "regenerate": "regenerating every shard"}) as bar:
        checks = run_verify(folder, sample, full=full, regenerate=regenerate,
                            workers=_cores(workers), progress=bar, storage_options=_storage_options(storage_options))
    if json_output:
        _console.print_json({"folder": str(folder), "ok": not failed(checks), "checks": [
            {"config": c.config or None, "check": c.name, "ok": c.ok, "detail": c.detail} for c in checks]})
        if failed(checks):
            raise typer.Exit(1)
        return
    table = Table(title=f"cogen verify {folder}", title_justify="left")
    for column in ("config", "check", "result", "detail"):
        table.add_column(column)
    for check in checks:
        table.add_row(check.config or "(folder)", check.name,
                      _console.styled("ok", "green") if check.ok else _console.styled("FAILED", "red"), check.detail)
    _console.out.print(table)
    bad = failed(checks)
    if bad:
        _console.error(f"{len(bad)} of {len(checks)} checks failed")
        raise typer.Exit(1)
    _console.out.print(f"all {len(checks)} checks passed")


def sample(
    transforms: Annotated[str, typer.Option("--transforms", "-t", help="Comma-separated sequence, applied in order.",
                                            autocompletion=complete_transforms)],
    grid: Annotated[str, typer.Option(help="Grid size: N or HxW.")] = "20",
    objects: Annotated[int, typer.Option(min=1, help="Number of objects.")] = 2,
    where: Annotated[str | None, typer.Option(help="Object filter, e.g. 'is_shape_fully_connected, rows<=5, cols<=5'.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the sample.")] = 0,
    json_output: Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout (for scripts).")] = False,
) -> None:
    """Draw one input/output pair for a sequence and show it in the terminal in colour."""
    from cogen.cli._display import grids_side_by_side
    from cogen.family import family

    sample_one = family(None).load("sample")  # the default family draws `cogen sample`

    height, width = _grid_size(grid)
    result = sample_one([t.strip() for t in transforms.split(",") if t.strip()], height=height, width=width,
                        objects=objects, where=where, seed=seed)
    if json_output:
        _console.print_json({"transformations": list(result.transformations), "input": result.input.tolist(),
                             "output": result.output.tolist(), "object_ids": [int(i) for i in result.object_ids],
                             "positions": [[int(r), int(c)] for r, c in result.positions],
                             "attempts": int(result.attempts), "seed": seed})
        return
    _console.out.print(grids_side_by_side([result.input, result.output], ["input", " -> ".join(result.transformations)]))
    _console.out.print("objects (bank id @ row, col): "
                       + ", ".join(f"{i} @ {r},{c}" for i, (r, c) in zip(result.object_ids, result.positions, strict=True))
                       + f"; {result.attempts} attempt(s)")


def _grid_size(text: str) -> tuple[int, int]:
    from cogen.errors import SpecError

    parts = text.lower().split("x")
    try:
        sizes = [int(p) for p in parts]
    except ValueError:
        raise SpecError(f"--grid {text!r} is not N or HxW", fix="e.g. --grid 20 or --grid 15x20") from None
    if len(sizes) not in (1, 2) or min(sizes) < 1:
        raise SpecError(f"--grid {text!r} is not N or HxW", fix="e.g. --grid 20 or --grid 15x20")
    return (sizes[0], sizes[-1])
