"""Training speed of every baseline, and the time of one full paper-protocol run.

    python benchmarks/bench_baselines.py [--models resnet,grid-tf] [--device auto|cuda|cpu]
                                         [--batch N] [--steps N] [--no-mlc]

For each COGITAO model at the paper's size on the paper's CompGen shape (20x20 grids, depth-4 task
codes; 22x22 canvases with visual tokens) it times the real training loop
(:func:`cogen_baselines.train.fit`: AdamW, the schedule, mixed precision and ``torch.compile`` on
CUDA) over synthetic splits held on the device, and the evaluation pass. It prints steps/s,
samples/s, peak memory, and the estimated time of one full paper-protocol run: 10 epochs x 100,000
samples at the paper's batch (PL-TF batch 32; LLaDA 20 epochs), plus the per-epoch validation on
2 x 1,000 samples and the test predictions of three checkpoint rules on 2 x 1,000 samples.

On a GPU the paper's batch is timed. On a CPU the run is *reduced* and says so: batch 8 and a few
steps, and the full-run estimate scales the step time to the paper's batch linearly (an
approximation). PL-TF's random weights never halt early, so its figures are the 7-step worst case.

MLC (Compositional-ARC): a reduced real run (``cogen_baselines.run.train``) on a small ``cogen build``
of the systematicity config, scored by ``cogen eval``; episodes/s of training and queries/s of greedy
decoding, and the estimate of the paper's 300 epochs x 82,908 episodes.

Reference (spec A.7, H100, eager stand-ins of the right size): ResNet 2.0, Vanilla-TF 5.4, Grid-TF
5.9, PL-TF 12.8, LLaDA 12.7 minutes per run; targets on one H100: 2 / 3 / 3 / 8 / 8 minutes.
Prints one JSON line per model, then a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import resource
import tempfile
import time
from pathlib import Path

H100_STAND_IN_MINUTES = {"resnet": 2.0, "vanilla-tf": 5.4, "grid-tf": 5.9, "pl-tf": 12.8, "llada": 12.7}
H100_TARGET_MINUTES = {"resnet": 2, "resnet-film": 2, "vanilla-tf": 3, "grid-tf": 3, "pl-tf": 8, "llada": 8}
TRAIN_ROWS, EVAL_ROWS = 100_000, 1_000


class _Synthetic:
    """A workload of random grids of the paper's shape, on the device (timing only)."""

    family = "cogitao"

    def __init__(self, shape, rows: int, device, seed: int = 0):
        import torch

        from cogen_baselines.data import GridSplit

        generator = torch.Generator().manual_seed(seed)
        grids = (rows, shape.height, shape.width)

        def draw(high, size, dtype):
            return torch.randint(0, high, size, generator=generator).to(device=device, dtype=dtype)

        self.train = GridSplit("train", draw(shape.classes, grids, torch.uint8), draw(shape.classes, grids, torch.uint8),
                               [str(i) for i in range(rows)],
                               draw(shape.task_vocab, (rows, 4), torch.int64) if shape.task_vocab else None,
                               draw(4, grids, torch.int16))

    @property
    def train_size(self) -> int:
        return len(self.train)

    def train_batch(self, rows):
        return self.train.batch(rows)

    def validate(self, model) -> dict:
        return {}


def _sync(device) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _reset_peak_memory(device) -> None:
    """Start a new peak: CUDA's counter, or on Linux the process's resident high-water mark
    (``/proc/self/clear_refs``, value 5), so each model's peak is its own."""
    import torch

    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
        return
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass  # not Linux: _peak_memory_mb falls back to the whole process's peak


def _peak_memory_mb(device) -> float:
    """Peak memory since :func:`_reset_peak_memory`: CUDA's allocator, else the resident high-water mark."""
    import torch

    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    try:
        status = Path("/proc/self/status").read_text()
        return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _time_training(model, workload, card, batch: int, warmup: int, steps: int, device) -> float:
    """Seconds per step of :func:`fit` after ``warmup`` steps (compilation, allocator warm-up)."""
    from cogen_baselines.train import Protocol, fit

    marks = {}

    def progress(step, total, info):
        if step in (warmup, warmup + steps):
            _sync(device)
            marks[step] = time.perf_counter()

    protocol = Protocol(1, batch, card.lr, card.weight_decay, card.betas, card.schedule,
                        compile=device.type == "cuda")
    fit(model, workload, protocol, device, progress=progress, log_every=10**9)
    return (marks[warmup + steps] - marks[warmup]) / steps


def _time_evaluation(model, workload, rows: int, device) -> float:
    """Samples per second of the evaluation pass (batches of 500)."""
    from cogen_baselines.evaluate import scan

    split = workload.train
    scan(model, _head(split, min(rows, 64)), 500, 0)
    _sync(device)
    start = time.perf_counter()
    scan(model, _head(split, rows), 500, 0, keep=True)
    _sync(device)
    return rows / (time.perf_counter() - start)


def _head(split, rows: int):
    from dataclasses import replace

    return replace(split, inputs=split.inputs[:rows], targets=split.targets[:rows], ids=split.ids[:rows],
                   tasks=None if split.tasks is None else split.tasks[:rows],
                   objects=None if split.objects is None else split.objects[:rows])


def bench_model(name: str, device, batch: int | None, steps: int) -> dict:
    import torch

    from cogen_baselines.models.base import count_parameters
    from cogen_baselines.registry import paper_input, resolve_model

    card = resolve_model(name)
    paper_batch = card.batch_size
    batch = batch or (paper_batch if device.type == "cuda" else 8)
    warmup = 5 if device.type == "cuda" else 1
    shape = paper_input(card)
    torch.manual_seed(0)
    model = card.build(shape).to(device)
    eval_rows = 500 if device.type == "cuda" else 16
    workload = _Synthetic(shape, max(batch * (warmup + steps), eval_rows), device)
    _reset_peak_memory(device)
    step = _time_training(model, workload, card, batch, warmup, steps, device)
    eval_per_s = _time_evaluation(model, workload, eval_rows, device)
    step_at_paper_batch = step * paper_batch / batch
    train_steps = card.epochs * math.ceil(TRAIN_ROWS / paper_batch)
    eval_samples = card.epochs * 2 * EVAL_ROWS + 3 * 2 * EVAL_ROWS
    run_minutes = (train_steps * step_at_paper_batch + eval_samples / eval_per_s) / 60
    return {"model": name, "parameters": count_parameters(model), "device": str(device), "batch": batch,
            "reduced": batch != paper_batch, "steps_timed": steps, "step_ms": round(1000 * step, 1),
            "steps_per_s": round(1 / step, 2), "samples_per_s": round(batch / step, 1),
            "eval_samples_per_s": round(eval_per_s, 1), "peak_memory_mb": round(_peak_memory_mb(device)),
            "paper_steps": train_steps, "full_run_minutes": round(run_minutes, 1),
            "h100_stand_in_minutes": H100_STAND_IN_MINUTES.get(name), "h100_target_minutes": H100_TARGET_MINUTES.get(name)}


def bench_mlc(device) -> dict:
    """A reduced real MLC run on a small build, scored by cogen eval."""
    import torch

    from cogen.pipeline import build
    from cogen_baselines.config import RunConfig
    from cogen_baselines.run import train

    config = "carc-systematicity-1860"
    cuda = device.type == "cuda"
    episodes, batch = (2_000, 200) if cuda else (8, 4)
    _reset_peak_memory(device)
    with tempfile.TemporaryDirectory() as folder:
        build("carc", Path(folder) / "data", scale=0.03 if cuda else 0.001, workers=2, only=[config])
        torch.manual_seed(0)
        run = RunConfig("mlc", str(Path(folder) / "data"), config, epochs=1, batch_size=batch, train_samples=episodes,
                        eval_batch_size=50 if cuda else 4, device=str(device))
        start = time.perf_counter()
        summary = train(run, Path(folder) / "run")
        seconds = time.perf_counter() - start
        metrics = json.loads((Path(folder) / "run" / "metrics.jsonl").read_text().splitlines()[-1])
        scored = json.loads((Path(folder) / "run" / "eval" / "final" / "test.json").read_text())
    train_seconds = metrics["seconds"]
    per_episode = train_seconds / episodes   # includes the one validation pass: an upper bound
    full_hours = 300 * 82_908 * per_episode / 3600
    return {"model": "mlc", "parameters": summary["parameters"], "device": str(device), "batch_episodes": batch,
            "reduced": True, "train_episodes": episodes, "epoch_seconds_with_validation": train_seconds,
            "episodes_per_s": round(episodes / train_seconds, 2), "run_seconds": round(seconds, 1),
            "test_queries_scored": scored["n"], "exact_match": scored["exact_match"],
            "full_run_hours_estimate": round(full_hours, 1), "paper_hours": "about 100 H200-hours (300 epochs)",
            "peak_memory_mb": round(_peak_memory_mb(device))}


def _markdown(rows: list[dict], device, threads: int) -> str:
    cpu = device.type == "cpu"
    lines = [f"Device: {device} ({_device_name(device)}), torch threads {threads}."
             + (" REDUCED CPU configuration: batch 8, few steps; full-run times scale the step time to the paper's "
                "batch linearly." if cpu else ""), "",
             ("| model | parameters | batch | steps/s | samples/s | eval samples/s | peak memory (MB) | full run (min) "
              "| H100 stand-in (min) | H100 target (min) |"),
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        lines.append(f"| {row['model']} | {row['parameters']:,} | {row['batch']} | {row['steps_per_s']} | "
                     f"{row['samples_per_s']} | {row['eval_samples_per_s']} | {row['peak_memory_mb']:,} | "
                     f"{row['full_run_minutes']:,} | {row['h100_stand_in_minutes'] or '–'} | "
                     f"{row['h100_target_minutes'] or '–'} |")
    return "\n".join(lines)


def _device_name(device) -> str:
    import torch

    return torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or platform.machine()


def main() -> None:
    import torch

    from cogen_baselines.config import resolve_device
    from cogen_baselines.registry import MODELS

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=",".join(n for n, c in MODELS.items() if c.family == "cogitao"))
    parser.add_argument("--device", default="auto")
    parser.add_argument("--batch", type=int, default=None, help="default: the paper's on GPU, 8 on CPU")
    parser.add_argument("--steps", type=int, default=None, help="timed steps (default 50 on GPU, 3 on CPU)")
    parser.add_argument("--no-mlc", action="store_true")
    args = parser.parse_args()
    device = resolve_device(args.device)
    steps = args.steps or (50 if device.type == "cuda" else 3)
    rows = []
    for name in args.models.split(","):
        rows.append(bench_model(name.strip(), device, args.batch, steps))
        print(json.dumps(rows[-1]), flush=True)
    if not args.no_mlc:
        print(json.dumps(bench_mlc(device)), flush=True)
    print(_markdown(rows, device, torch.get_num_threads()))


if __name__ == "__main__":
    main()
