"""Every baseline through ``cogen baselines preflight``: time, memory and the full-run estimate, one table.

    python benchmarks/bench_baselines.py [--grids DIR] [--grid-config C1-1] [--episodes DIR]
                                         [--episode-config carc-systematicity-1860] [--models resnet,mlc]
                                         [--device auto|cuda|cpu] [--compile auto|on|off] [--steps N] [--json FILE]
    python benchmarks/bench_baselines.py --smoke     # every model at the small size on tiny builds, in seconds

Each model is preflighted (:func:`cogen_baselines.preflight.preflight`) at the paper's size on a
real config: the grid models on ``--grid-config`` of ``--grids``, MLC on ``--episode-config`` of
``--episodes``. Without a folder, the config is built at full size into a temporary folder first
(``cogen build``; about 2 min for C1-1 and 1 min for the systematicity config on 2 CPU cores).
Prints each model's preflight report, then one Markdown table: parameters, the steady update at
the run's batch, compile time, peak memory (estimated; on CUDA also measured), the verdict on the
card, the estimated full run on this device, and the GPU arithmetic (labelled as an estimate).
On a CPU every measurement is reduced, as preflight says; its times are CPU seconds of one thread,
and each report says the load average it saw.

``--smoke`` runs the same path in seconds: tiny builds (one CompGen experiment of 5x6 grids, 48 training
rows; the 3-shot episodes at scale 0.001), every model at the small size with small batches, eager, one
timed update.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from gpu_check import SMOKE_BATCH, SMOKE_SPEC  # beside this script

GRID_CONFIG, EPISODE_CONFIG = "C1-1", "carc-systematicity-1860"
#: The smoke's configs and the scale of their builds; its grids' spec and its batches (samples per update; MLC
#: episodes) are gpu_check.py's smoke's, one definition for both scripts.
SMOKE = {"grid_config": "S-1", "episode_config": "carc-3shot-1860", "scale": {"s-1": 1.0, "carc": 0.001},
         "batch": SMOKE_BATCH}


def _data(folder: str | None, config: str, spec: str, scratch: Path, scale: float = 1.0) -> str:
    """``folder``, or a fresh build of ``config`` (from packaged spec ``spec``, full size unless ``scale``) under
    ``scratch``."""
    if folder is not None:
        return folder
    from cogen.pipeline import build

    out = scratch / config
    if spec == "s-1":  # the smoke's own spec
        (scratch / "smoke.yaml").write_text(SMOKE_SPEC, encoding="utf-8")
        spec = scratch / "smoke.yaml"
    build(spec, out, workers=2, scale=scale, only=[config])
    return str(out)


def _row(report: dict) -> str:
    from cogen_baselines.preflight import _duration

    gib = 2**30
    verdict, run, gpu = report["verdict"], report.get("run"), report.get("gpu_estimate")
    compile_s = report["first_update_s"] - report["update_s"] if report["compile"] and "update_s" in report else None
    measured = report.get("measured_peak_bytes")
    return " | ".join([
        report["model"], f"{report['parameters']:,}", f"{report['update_batch']} = {report['grad_accum']} x "
        f"{report['micro_batch']}", f"{report.get('update_s_at_run_batch', float('nan')):.2f}",
        "–" if compile_s is None else f"{compile_s:.0f}",
        f"{verdict['estimate_bytes'] / gib:.2f}" + (f" ({measured / gib:.2f})" if measured else ""),
        f"{verdict['paper_micro_batch_bytes'] / gib:.2f}", "fits" if verdict["fits"] else "does not fit",
        str(verdict["smallest_fitting_grad_accum"] or "none"), str(report["host_syncs_per_update"]),
        _duration(run["total_s"]) if run else "–",
        f"{gpu['minutes'][0]:.1f}-{gpu['minutes'][1]:.1f}" if gpu else "–"])


def markdown(reports: list[dict]) -> str:
    """The summary table of preflight reports."""
    header = ("| model | parameters | update (samples = micro-batches x size) | s per update | compile (s) | "
              "est. peak GB at the run's micro-batch | est. peak GB at the paper's batch per pass | verdict | "
              "smallest --grad-accum that fits | host syncs per update | full run, this device | "
              "GPU estimate (min, arithmetic) |")
    lines = [header, "|---" + "|---:" * 3 + "|---:" * 8 + "|"]
    return "\n".join(lines + [f"| {_row(report)} |" for report in reports])


def main() -> None:
    from cogen_baselines.config import RunConfig
    from cogen_baselines.preflight import preflight, render
    from cogen_baselines.registry import MODELS

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--grids"), parser.add_argument("--grid-config", default=GRID_CONFIG)
    parser.add_argument("--episodes"), parser.add_argument("--episode-config", default=EPISODE_CONFIG)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--device", default="auto"), parser.add_argument("--compile", default="on")
    parser.add_argument("--steps", type=int, default=2), parser.add_argument("--json")
    parser.add_argument("--smoke", action="store_true", help="small models on tiny builds, eager, in seconds")
    args = parser.parse_args()
    if args.smoke:
        args.grid_config, args.episode_config, args.compile, args.steps = \
            SMOKE["grid_config"], SMOKE["episode_config"], "off", 1
    reports = []
    with tempfile.TemporaryDirectory() as scratch:
        for name in args.models.split(","):
            episodes = "input" not in MODELS[name].workload().COLUMNS     # MLC reads episodes, not grid pairs
            spec = "carc" if episodes else "s-1" if args.smoke else args.grid_config.split("-")[0].lower()
            scale = SMOKE["scale"][spec] if args.smoke else 1.0
            data = _data(args.episodes, args.episode_config, spec, Path(scratch), scale) if episodes else \
                _data(args.grids, args.grid_config, spec, Path(scratch), scale)
            config = args.episode_config if episodes else args.grid_config
            if episodes:
                args.episodes = data
            else:
                args.grids = data
            options = {"size": "small", "batch_size": SMOKE["batch"]["episodes" if episodes else "grids"]} \
                if args.smoke else {}
            report = preflight(RunConfig(name, data, config, device=args.device, compile=args.compile, **options),
                               steps=args.steps)
            reports.append(report)
            print(render(report), flush=True)
    print(markdown(reports))
    if args.json:
        Path(args.json).write_text(json.dumps(reports, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
