"""The baselines' first GPU check: toolchain, CPU-vs-CUDA parity, preflight on CUDA, one epoch end to end.

On a machine with one NVIDIA GPU (built for one 10-minute call, start-up included: about 6 minutes
of checks, and a deadline that skips what has not started by then):

    # 1. beforehand, on the CPU (a few seconds): the tiny data, about 0.4 MB
    python benchmarks/gpu_check.py --build-data gpu-check-data
    # 2. on the GPU machine, from the repository root (the folder travels with the working tree;
    #    name it in the call's `carry` if git ignores it; the image's python3 has torch, Triton and numba)
    PYTHONPATH=$PWD PYTHONUNBUFFERED=1 python3 benchmarks/gpu_check.py --data gpu-check-data --json $OUT/gpu_check.json

    # the whole path on the CPU in seconds (tiny sizes; the CUDA-only checks report "skipped: no CUDA")
    python benchmarks/gpu_check.py --smoke

The GPU machine needs the `baselines` extra with a CUDA build of torch (PyPI's Linux wheel), and a
C compiler for Triton's launchers. Items, in order, each printed as one line ``PASS``, ``FAIL`` or
``SKIP`` with what it measured:

* ``toolchain``: torch, CUDA, Triton and C compiler versions; ``torch.compile`` (Inductor, Triton)
  of a small function on the GPU, against eager.
* ``parity <model>``, every model at the small size: the logits and gradients of one batch on the
  CPU and on the GPU in FP32 (TF32 off), same weights: the largest difference under 1e-4 of the
  largest logit and under 1e-3 of the largest gradient.
* ``preflight <model>`` for llada, pl-tf and mlc at the paper's size: ``torch.compile`` did not fall
  back, 0 host syncs per update, the CUDA allocator's peak of the compiled update against
  preflight's estimate (fails above 1.25x the estimate, the verdict's basis).
* ``epoch <model>`` for llada and pl-tf at the paper's size: one epoch of ``cogen baselines train``
  with its validation, test predictions and ``cogen eval`` scores; finite losses.

Exit status 1 if any item failed. ``--json`` writes every item as it finishes, so a call cut short
still brings back what ran.
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import math
import platform
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

#: The tiny data of the GPU run: a COGITAO CompGen experiment (the paper's 20x20 grids, task codes; 200 training
#: rows and 2 per evaluation split) and MLC's systematicity episodes (74 / 13 / 13), each as (spec, config, scale).
GPU_DATA = {"grids": ("c1", "C1-1", 0.002), "episodes": ("carc", "carc-systematicity-1860", 0.001)}
#: The smoke's: one CompGen experiment of 5x6 grids (48 training rows) and 3-shot episodes (74 / 13 / 13).
SMOKE_DATA = {"grids": ("smoke.yaml", "S-1", 1.0), "episodes": ("carc", "carc-3shot-1860", 0.001)}
SMOKE_SPEC = """\
setting: S
seed: 5
defaults:
  grid: {height: [5, 6], width: [5, 6]}
  objects: {count: [1, 2], where: {is_shape_fully_connected: true, rows: [1, 3], cols: [1, 3]}}
  sizes: {train: 48, validation: 4, test: 4, validation_ood: 4, test_ood: 4}
experiments:
  S-1:
    in_domain: {sequences: [[translate_up], [rot90], [mirror_horizontal], [translate_up, mirror_horizontal]]}
    out_of_domain: {sequences: [[translate_up, rot90], [rot90, translate_up]]}
"""
#: The smoke's batches (samples per update; MLC episodes), so that every item takes a second or two.
SMOKE_BATCH = {"grids": 8, "episodes": 4}
PREFLIGHT = ("llada", "pl-tf", "mlc")
EPOCH = ("llada", "pl-tf")
#: Relative tolerances of CPU-vs-CUDA parity in FP32 (TF32 off).
LOGITS_TOLERANCE, GRADIENT_TOLERANCE = 1e-4, 1e-3
#: A measured allocator peak above this multiple of preflight's estimate fails (the verdict would be wrong).
PEAK_LIMIT = 1.25
#: Items that have not started after this many seconds are skipped (the call's limit is 10 minutes).
DEADLINE_S = 330.0
_GIB = 2**30


@dataclass
class Item:
    """One check's outcome."""

    name: str
    status: str            # PASS, FAIL or SKIP
    detail: str
    seconds: float = 0.0

    def line(self) -> str:
        return f"{self.status:4}  {self.name:<22} {self.seconds:6.1f} s  {self.detail}"


@dataclass(frozen=True)
class Setup:
    """What the checks run on: the data folders, their configs, the device, and whether this is the smoke."""

    data: dict
    configs: dict
    device: object
    smoke: bool

    def of(self, model: str) -> tuple[str, str, str]:
        """``(kind, folder, config)`` of the data ``model`` reads."""
        from cogen_baselines.registry import resolve_model

        kind = "grids" if "input" in resolve_model(model).workload().COLUMNS else "episodes"   # MLC reads episodes
        return kind, self.data[kind], self.configs[kind]

    def options(self, model: str) -> dict:
        """The run's size, compile switch and, for the smoke, a small batch."""
        if not self.smoke:
            return {"size": "paper", "compile": "on"}
        return {"size": "small", "compile": "off", "batch_size": SMOKE_BATCH[self.of(model)[0]]}


def build_data(folder: Path, plan: dict = GPU_DATA) -> dict[str, str]:
    """The tiny data under ``folder`` (``grids``, ``episodes``), built on the CPU."""
    from cogen.pipeline import build

    built = {}
    for kind, (spec, config, scale) in plan.items():
        out = folder / kind
        if spec.endswith(".yaml"):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / spec).write_text(SMOKE_SPEC, encoding="utf-8")
            spec = folder / spec
        if not (out / "manifests").is_dir():
            build(spec, out, scale=scale, workers=1, only=[config])
        built[kind] = str(out)
    return built


def toolchain(device) -> list[Item]:
    """Versions, and on CUDA a compiled function against eager."""
    import torch

    versions = {"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda,
                "c compiler": shutil.which("cc") or shutil.which("gcc")}
    try:
        import triton

        versions["triton"] = triton.__version__
    except ImportError:
        versions["triton"] = None
    if device.type == "cuda":
        versions["device"] = f"{torch.cuda.get_device_name(device)} (sm {'.'.join(map(str, torch.cuda.get_device_capability(device)))})"
    items = [Item("toolchain", "PASS", ", ".join(f"{key} {value}" for key, value in versions.items()))]
    if device.type != "cuda":
        return items + [Item("toolchain compile", "SKIP", "skipped: no CUDA")]
    started = time.perf_counter()

    def function(x):
        return torch.nn.functional.gelu(x) * 2 + x.softmax(dim=-1)

    x = torch.randn(64, 257, device=device)
    try:
        same = torch.allclose(torch.compile(function, dynamic=False)(x), function(x), rtol=1e-4, atol=1e-5)
        status, detail = ("PASS" if same else "FAIL"), "Inductor/Triton kernel " + ("matches eager" if same else
                                                                                    "differs from eager")
    except Exception as error:  # noqa: BLE001  (reported as the item's outcome)
        status, detail = "FAIL", f"{type(error).__name__}: {str(error).strip().splitlines()[0][:200]}"
    return items + [Item("toolchain compile", status, detail, time.perf_counter() - started)]


def _to(batch, device):
    return type(batch)(*(value.to(device) if hasattr(value, "to") else value for value in batch))


def _forward_backward(model, batch):
    """Deterministic logits (evaluation mode: no dropout, BatchNorm's running statistics) and the gradients
    of a cross-entropy of them."""
    import torch
    import torch.nn.functional as F

    model.zero_grad(set_to_none=True)
    if hasattr(model, "logits"):
        logits = model.logits(batch)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), batch.targets.reshape(-1))
    else:
        logits = model(batch.encoder, batch.decoder_input)
        loss = model.loss(batch.encoder, batch.decoder_input, batch.target)
    loss.backward()
    grads = [p.grad.detach().cpu() if p.grad is not None else torch.zeros(p.shape) for p in model.parameters()]
    return logits.detach().float().cpu(), grads


def _relative(a, b) -> float:
    return float((a - b).abs().max()) / max(float(a.abs().max()), 1e-12)


def parity(name: str, setup: Setup) -> Item:
    """One batch's logits and gradients of the small model on the CPU and on the device, same weights."""
    import torch

    from cogen_baselines.registry import resolve_model

    card, device = resolve_model(name), setup.device
    _, path, config = setup.of(name)
    workload = card.workload().load(path, config, card, device=torch.device("cpu"), task_codes="auto",
                                     train_limit=8, eval_batch_size=64, seed=0, eval_limit=2)
    torch.manual_seed(0)
    model = card.build(workload.model_input, "small").eval()
    torch.manual_seed(1)
    batch = workload.train_batch(torch.arange(min(4, workload.train_size)) if "input" in card.workload().COLUMNS
                                 else torch.arange(1))
    logits, grads = _forward_backward(model, batch)
    tf32 = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    try:
        other_logits, other_grads = _forward_backward(copy.deepcopy(model).to(device), _to(batch, device))
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = tf32
    logit_gap = _relative(logits, other_logits)
    scale = max(float(grad.abs().max()) for grad in grads)    # against the largest gradient of the model
    grad_gap = max(float((a - b).abs().max()) for a, b in zip(grads, other_grads, strict=True)) / max(scale, 1e-12)
    detail = f"logits {logit_gap:.1e}, gradients {grad_gap:.1e} (relative max difference)"
    if device.type != "cuda":
        return Item(f"parity {name}", "SKIP", f"skipped: no CUDA (the path ran cpu vs cpu: {detail})")
    ok = logit_gap < LOGITS_TOLERANCE and grad_gap < GRADIENT_TOLERANCE
    return Item(f"parity {name}", "PASS" if ok else "FAIL", detail)


class _Warnings(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def _captured():
    handler = _Warnings()
    logging.getLogger("cogen_baselines").addHandler(handler)
    return handler


def preflight_item(name: str, setup: Setup) -> Item:
    """``cogen baselines preflight`` at the paper's size on the GPU (compiled): compile, host syncs, peak."""
    from cogen_baselines.config import RunConfig
    from cogen_baselines.preflight import preflight

    _, path, config = setup.of(name)
    device = setup.device
    handler = _captured()
    try:
        report = preflight(RunConfig(name, path, config, device=str(device), **setup.options(name)),
                           steps=1 if setup.smoke else 2)
    finally:
        logging.getLogger("cogen_baselines").removeHandler(handler)
    if report.get("out_of_memory"):
        return Item(f"preflight {name}", "FAIL", "out of memory at the run's micro-batch")
    syncs, fell_back = report["host_syncs_per_update"], report["compile_fell_back"]
    estimate, measured = report["verdict"]["estimate_bytes"], report.get("measured_peak_bytes")
    parts = [f"update {report['update_s']:.3f} s at {report['micro_batch']} x {report['grad_accum']}",
             f"first update {report['first_update_s']:.1f} s", f"host syncs {syncs}",
             f"estimated peak {estimate / _GIB:.2f} GB"]
    failures = [f"{syncs} host syncs per update"] if syncs else []
    if report["compile"]:
        parts.append("compile " + ("FELL BACK to eager" if fell_back else "ok"))
        if fell_back:
            failures.append("torch.compile fell back: " + "; ".join(handler.messages)[:300])
    if measured:
        ratio = measured / estimate
        parts.append(f"allocator peak {measured / _GIB:.2f} GB = {ratio:.2f}x the estimate")
        if ratio > PEAK_LIMIT:
            failures.append(f"the allocator's peak is {ratio:.2f}x preflight's estimate")
    if device.type != "cuda":
        return Item(f"preflight {name}", "SKIP" if not failures else "FAIL",
                    "; ".join(failures or ["skipped: no CUDA (compile, allocator peak); the path ran on the CPU"])
                    + ": " + ", ".join(parts))
    return Item(f"preflight {name}", "FAIL" if failures else "PASS", "; ".join(failures + parts))


def epoch_item(name: str, setup: Setup, scratch: Path) -> Item:
    """One epoch of ``cogen baselines train`` (validation, test predictions, ``cogen eval``)."""
    from cogen_baselines.config import RunConfig
    from cogen_baselines.run import train

    _, path, config = setup.of(name)
    device = setup.device
    handler = _captured()
    try:
        summary = train(RunConfig(name, path, config, epochs=1, device=str(device), **setup.options(name)),
                        scratch / f"epoch-{name}")
    finally:
        logging.getLogger("cogen_baselines").removeHandler(handler)
    results = summary["results"]
    losses = [numbers["loss"] for result in results.values() for numbers in result.values() if isinstance(numbers, dict)]
    finite = bool(losses) and all(math.isfinite(loss) for loss in losses)
    fell_back = [message for message in handler.messages if "torch.compile failed" in message]
    scores = ", ".join(f"{split} {100 * numbers['padded_grid_accuracy']:.1f} %"
                       for split, numbers in results[summary["rule"]].items() if isinstance(numbers, dict))
    detail = (f"{summary['train_seconds']:.0f} s training, {summary['seconds']:.0f} s in all; rule {summary['rule']}: "
              f"{scores}; losses {'finite' if finite else 'NOT FINITE'}")
    if fell_back:
        detail += "; " + fell_back[0][:200]
    ok = summary.get("complete") and finite and not fell_back
    if device.type != "cuda":
        return Item(f"epoch {name}", "SKIP" if ok else "FAIL", "skipped: no CUDA (the path ran on the CPU): " + detail)
    return Item(f"epoch {name}", "PASS" if ok else "FAIL", detail)


def _plan(setup: Setup, scratch: Path):
    from cogen_baselines.registry import MODELS

    yield "toolchain", lambda: toolchain(setup.device)
    for name in MODELS:
        yield f"parity {name}", lambda name=name: [parity(name, setup)]
    for name in PREFLIGHT:
        yield f"preflight {name}", lambda name=name: [preflight_item(name, setup)]
        if name in EPOCH:
            yield f"epoch {name}", lambda name=name: [epoch_item(name, setup, scratch)]


def run_checks(setup: Setup, deadline: float, report: Path | None) -> list[Item]:
    """Every item in order (those not started by ``deadline`` seconds are skipped); prints each line."""
    started, items = time.perf_counter(), []
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as scratch:
        for name, check in _plan(setup, Path(scratch)):
            if time.perf_counter() - started > deadline:
                outcome = [Item(name, "SKIP", f"skipped: the {deadline:.0f} s deadline had passed")]
            else:
                begun = time.perf_counter()
                try:
                    outcome = check()
                except Exception as error:  # noqa: BLE001  (an item's failure is its outcome; the rest still run)
                    first = (str(error).strip().splitlines() or [""])[0]
                    outcome = [Item(name, "FAIL", f"{type(error).__name__}: {first[:300]}")]
                if len(outcome) == 1 and not outcome[0].seconds:
                    outcome[0].seconds = time.perf_counter() - begun
            for item in outcome:
                print(item.line(), flush=True)
            items += outcome
            if report is not None:
                report.write_text(json.dumps([asdict(item) for item in items], indent=2) + "\n", encoding="utf-8")
    return items


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--build-data", metavar="DIR", help="build the tiny data into DIR (on the CPU) and stop")
    mode.add_argument("--data", metavar="DIR", help="the tiny data built by --build-data; run the checks")
    mode.add_argument("--smoke", action="store_true", help="the whole path on the CPU in seconds (tiny sizes)")
    parser.add_argument("--device", default="cuda", help="the GPU to check (default cuda)")
    parser.add_argument("--deadline", type=float, default=DEADLINE_S, help="skip items not started after this (s)")
    parser.add_argument("--json", metavar="FILE", help="write every item here as it finishes")
    args = parser.parse_args(argv)
    if args.build_data:
        started = time.perf_counter()
        built = build_data(Path(args.build_data))
        print(f"built {', '.join(built.values())} in {time.perf_counter() - started:.1f} s")
        return 0
    import torch

    torch.set_num_threads(min(4, torch.get_num_threads()))
    if args.smoke:
        device = torch.device("cpu")
    elif not torch.cuda.is_available():
        print(f"gpu_check: torch {torch.__version__} sees no CUDA device; use --smoke for the CPU path", file=sys.stderr)
        return 1
    else:
        device = torch.device(args.device)
    started = time.perf_counter()
    plan = SMOKE_DATA if args.smoke else GPU_DATA
    configs = {kind: config for kind, (_, config, _) in plan.items()}
    with tempfile.TemporaryDirectory(prefix="gpu-check-data-") as scratch:
        data = build_data(Path(scratch), SMOKE_DATA) if args.smoke else \
            {kind: str(Path(args.data) / kind) for kind in plan}
        missing = [path for path in data.values() if not (Path(path) / "manifests").is_dir()]
        if missing:
            print(f"gpu_check: no tiny data in {', '.join(missing)}; build it first: "
                  f"python benchmarks/gpu_check.py --build-data {args.data}", file=sys.stderr)
            return 1
        print(f"gpu_check: data ready in {time.perf_counter() - started:.1f} s", flush=True)
        items = run_checks(Setup(data, configs, device, args.smoke), args.deadline,
                           Path(args.json) if args.json else None)
    counts = {status: sum(item.status == status for item in items) for status in ("PASS", "FAIL", "SKIP")}
    print(f"gpu_check: {counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped in "
          f"{time.perf_counter() - started:.0f} s on {device}"
          + (f" ({torch.cuda.get_device_name(device)})" if device.type == "cuda" else " (smoke)"))
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
