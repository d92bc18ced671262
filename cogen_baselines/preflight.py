"""``cogen baselines preflight``: before a long run, will it fit the card and how long will it take?

:func:`preflight` resolves a run exactly as ``cogen baselines train`` would (model, data, protocol,
precision, compile, ``--grad-accum``), builds the model and real batches of the config, and runs a
few optimiser updates through the training loop itself (:class:`~cogen_baselines.train.Trainer`),
compile included. It reports:

* **time**: the first update (compilation included), the steady update, their difference (compile
  time), one validation pass, and the estimated time of the full paper-protocol run on this device
  (updates x steady update + validations + the test predictions of every checkpoint rule);
* **memory**: the peak of live tensor storage of one update, measured by :class:`LiveMemory` at two
  small micro-batches in the precision the GPU run uses, fitted as ``fixed + per-sample x batch``
  (a measured per-sample activation size) and extrapolated to the run's micro-batch, plus the
  splits held on the device; on CUDA also the allocator's measured peak;
* **verdict**: fits or does not fit the card (its memory, or ``memory_gb``; 24 GB when there is no
  GPU), keeping :data:`HEADROOM` of it for the CUDA context, workspaces and fragmentation, and the
  ``--grad-accum`` that makes it fit;
* **host syncs** per update (:class:`HostSyncs`; 0 means the GPU never waits for the host) and the
  floating-point work of an update, with the GPU time that work implies at the throughput the
  spec's eager H100 stand-ins reached (:data:`GPU_TFLOPS`): arithmetic, labelled as an estimate.

On a CPU it runs the same at a reduced micro-batch (1/:data:`REDUCTION` of the run's) and scales
the step time linearly to the paper's batch, and says so. Its times are CPU seconds of the process
(and of the C++ compiler Inductor runs), measured with one torch thread, the steady update being
the fastest of the timed ones: on a loaded machine, several threads' CPU time grows with the load
(threads spin while they wait for each other; baselines-4 measured 4.5x at a load average of 8-12
against 2), one thread's and the fastest update's hardly do. The report also says the load
average it saw. On CUDA they are wall-clock seconds after a device synchronisation.
"""

from __future__ import annotations

import contextlib
import math
import os
import resource
import time
from dataclasses import replace

import torch

from cogen_baselines.amp import resolve_precision
from cogen_baselines.config import RunConfig
from cogen_baselines.models.base import count_parameters
from cogen_baselines.probes import HostSyncs, LiveMemory
from cogen_baselines.protocol import RULES
from cogen_baselines.run import load_workload, protocol_of, resolve_run
from cogen_baselines.train import Trainer

__all__ = ["GPU_TFLOPS", "HEADROOM", "REDUCTION", "preflight", "render"]

#: On a CPU, the measured micro-batch is the run's divided by this.
REDUCTION = 8
#: Share of the card's memory a run may plan for (the rest: CUDA context, cuBLAS workspaces, fragmentation).
HEADROOM = 0.9
#: Card memory assumed when there is no GPU to ask, GB (a common 24 GB card).
DEFAULT_CARD_GB = 24.0
#: Sustained TFLOP/s the spec's eager H100 stand-ins reached (A.7 step times over the FLOPs counted
#: here for the same shapes, baselines-3 F6): the band of the GPU time estimate.
GPU_TFLOPS = (9.0, 27.0)
#: Micro-batches (samples) at which memory is measured for the per-sample fit.
_PROBE = (1, 2)
_GIB = 2**30


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _clock(device: torch.device) -> float:
    """Wall-clock seconds on CUDA; elsewhere CPU seconds of this process (all threads) and of its finished
    children (the C++ compiler Inductor runs)."""
    if device.type == "cuda":
        return time.perf_counter()
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@contextlib.contextmanager
def _cpu_timing(device: torch.device):
    """On a CPU: one torch thread (its CPU time does not grow with the machine's load as several threads'
    does), and Inductor compiling in this process (no worker pool), so its compiler's time is counted."""
    if device.type == "cuda":
        yield
        return
    import torch._inductor.config as inductor

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with inductor.patch(compile_threads=1):
            yield
    finally:
        torch.set_num_threads(threads)


def _load() -> dict:
    """The machine's load when measuring: 1-minute load average and CPU count."""
    try:
        load = os.getloadavg()[0]
    except OSError:   # not every platform has one
        load = None
    return {"load_average": load, "cpus": os.cpu_count()}


def _rows(update: int, size: int, workload, device) -> torch.Tensor:
    return torch.arange(update * size, (update + 1) * size, device=device) % workload.train_size


def _fresh_trainer(card, run, workload, device, protocol, seed_offset: int = 0):
    torch.manual_seed(run.seed + seed_offset)
    model = card.build(workload.model_input, run.size, run.follow).to(device)
    return model, Trainer(model, protocol, device, total_updates=10**6, updates_per_epoch=10**4)


def _timed(trainer: Trainer, workload, protocol, device, steps: int) -> dict:
    """Seconds of the first update (compilation included) and of the steady ones (on CUDA their mean; on a
    CPU the fastest, the least disturbed by other jobs); CUDA's peak."""
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    times = []
    for update in range(steps + 1):
        _sync(device)
        start = _clock(device)
        trainer.update(workload, _rows(update, protocol.batch_size, workload, device))
        _sync(device)
        times.append(_clock(device) - start)
    steady = times[1:]
    peak = torch.cuda.max_memory_allocated(device) if device.type == "cuda" else None
    return {"first_update_s": times[0], "update_s": sum(steady) / len(steady) if device.type == "cuda" else min(steady),
            "measured_peak_bytes": peak, "timing_threads": torch.get_num_threads(), **_load()}


@contextlib.contextmanager
def _fused_attention(model, device: torch.device):
    """Off CUDA, attention-probability dropout makes ``scaled_dot_product_attention`` take its math path,
    which holds the (L x L) probabilities; CUDA's fused kernels apply the dropout inside and hold none.
    So that a CPU measures what the GPU run holds, its probe runs attention without that dropout (the
    feed-forward's dropout masks are still counted)."""
    from cogen_baselines.models.layers import Attention

    layers = [m for m in model.modules() if isinstance(m, Attention) and m.dropout] if device.type != "cuda" else []
    rates = [layer.dropout for layer in layers]
    for layer in layers:
        layer.dropout = 0.0
    try:
        yield
    finally:
        for layer, rate in zip(layers, rates, strict=True):
            layer.dropout = rate


def _live_peak(card, run, workload, device, protocol, micro: int) -> tuple[int, float]:
    """Peak live bytes and FLOPs of one eager update of ``micro`` samples (after a first one made the
    optimiser's state), attention as CUDA runs it (:func:`_fused_attention`)."""
    from torch.utils.flop_counter import FlopCounterMode

    probe = replace(protocol, batch_size=micro, accumulate=1, compile=False)
    model, trainer = _fresh_trainer(card, run, workload, device, probe, seed_offset=1)
    with _fused_attention(model, device):
        trainer.update(workload, _rows(0, micro, workload, device))
        state = [t for s in trainer.optimizer.state.values() for t in s.values() if isinstance(t, torch.Tensor)]
        flops = FlopCounterMode(display=False)
        with LiveMemory([*model.parameters(), *model.buffers(), *state]) as live, flops:
            trainer.update(workload, _rows(1, micro, workload, device))
    return live.peak, flops.get_total_flops()


def _memory(card, run, workload, device, protocol, manifest, precision: str) -> dict:
    """The per-sample fit of live memory in ``precision`` (the GPU run's), and the splits' bytes on the device."""
    target = replace(protocol, precision=precision)
    (low, flops_low), (high, flops) = (_live_peak(card, run, workload, device, target, b) for b in _PROBE)
    per_sample = (high - low) / (_PROBE[1] - _PROBE[0])
    loaded, full = workload.loaded_rows(), _split_rows(manifest, workload)
    data = workload.resident_bytes() / max(1, sum(loaded.values())) * sum(full.values())
    return {"precision": target.precision, "fixed_bytes": low - per_sample * _PROBE[0], "per_sample_bytes": per_sample,
            "data_bytes": data, "flops_per_sample": flops / _PROBE[1]}


def _split_rows(manifest: dict, workload) -> dict[str, int]:
    splits = manifest.get("splits", {})
    return {name: int(splits[name].get("rows", 0)) for name in workload.loaded_rows() if name in splits}


def _estimate_bytes(memory: dict, micro: int) -> float:
    return memory["fixed_bytes"] + memory["per_sample_bytes"] * micro + memory["data_bytes"]


def _verdict(memory: dict, effective: int, grad_accum: int, budget: float) -> dict:
    """Fits or not at ``grad_accum``, and the smallest ``--grad-accum`` that fits (None: none does)."""
    allowed = HEADROOM * budget
    divisors = [n for n in range(1, effective + 1) if effective % n == 0]
    fitting = next((n for n in divisors if _estimate_bytes(memory, effective // n) <= allowed), None)
    estimate = _estimate_bytes(memory, effective // grad_accum)
    return {"estimate_bytes": estimate, "fits": estimate <= allowed, "smallest_fitting_grad_accum": fitting,
            "budget_bytes": budget}


def _validation_seconds(model, workload, device) -> float:
    """Seconds per validated row (one pass over the loaded validation rows)."""
    rows = sum(workload.loaded_rows().get(name, 0) for name in workload.validation_splits)
    _sync(device)
    start = _clock(device)
    workload.validate(model)
    _sync(device)
    return (_clock(device) - start) / max(1, rows)


def _run_seconds(card, run, protocol, manifest, workload, update_s: float, row_s: float) -> dict:
    """The full paper-protocol run on this device: updates, validations and the test predictions of every rule
    (at most: rules that pick the same epoch share them)."""
    full = _split_rows(manifest, workload)
    train_rows = min(full.get("train", 0), run.train_samples or math.inf)
    updates = run.epochs * math.ceil(train_rows / protocol.batch_size)
    validations = sum(1 for e in range(1, run.epochs + 1) if e % card.validate_every == 0 or e == run.epochs)
    validation = validations * sum(full.get(name, 0) for name in workload.validation_splits) * row_s
    test = len(RULES) * sum(full.get(name, 0) for name in workload.test_splits) * row_s
    return {"train_rows": int(train_rows), "updates": updates, "train_s": updates * update_s,
            "validation_s": validation, "test_s": test, "total_s": updates * update_s + validation + test}


def _card_bytes(device: torch.device, memory_gb: float | None) -> tuple[float, str]:
    if memory_gb is not None:
        return memory_gb * _GIB, f"{memory_gb:g} GB (--memory-gb)"
    if device.type == "cuda":
        total = torch.cuda.get_device_properties(device).total_memory
        return total, f"{total / _GIB:.1f} GB ({torch.cuda.get_device_name(device)})"
    return DEFAULT_CARD_GB * _GIB, f"{DEFAULT_CARD_GB:g} GB (no GPU here: assumed)"


def _measured(protocol, device: torch.device):
    """What is timed: the run's own updates on CUDA; on a CPU single micro-batches of 1/REDUCTION the size."""
    if device.type == "cuda":
        return protocol
    return replace(protocol, batch_size=max(1, protocol.micro_batch // REDUCTION), accumulate=1)


def _timing(trainer: Trainer, workload, protocol, device: torch.device, steps: int) -> dict:
    try:
        with _cpu_timing(device):
            return _timed(trainer, workload, protocol, device, steps)
    except torch.OutOfMemoryError:
        torch.cuda.empty_cache()
        return {"out_of_memory": True}


def _syncs_per_update(trainer: Trainer, workload, protocol, device: torch.device) -> int:
    """Host syncs of one eager update (the probe sees every operation; compiled code has none of its own)."""
    trainer.loss_of = trainer.eager
    with HostSyncs() as syncs:
        trainer.update(workload, _rows(0, protocol.batch_size, workload, device))
    return syncs.count


def _estimates(card, run, protocol, measured, manifest, workload, model, timing: dict, memory: dict) -> dict:
    """The run's time on this device from the measured update and validation, and the GPU arithmetic."""
    if "update_s" not in timing:
        return {"gpu_estimate": None}
    update_s = timing["update_s"] * protocol.batch_size / measured.batch_size
    device = next(model.parameters()).device
    with _cpu_timing(device):
        row_s = _validation_seconds(model, workload, device)
    full = _run_seconds(card, run, protocol, manifest, workload, update_s, row_s)
    return {"update_s_at_run_batch": update_s, "validation_s_per_row": row_s, "run": full,
            "gpu_estimate": _gpu_estimate(memory, protocol, full)}


def preflight(config: RunConfig, *, memory_gb: float | None = None, steps: int = 3) -> dict:
    """Measure ``config``'s run (see the module docstring); returns the report :func:`render` prints."""
    card, device, run, manifest = resolve_run(config)
    protocol = protocol_of(card, run, device)
    measured = _measured(protocol, device)
    needed = (steps + 1) * measured.batch_size
    workload = load_workload(card, replace(run, train_samples=min(needed, run.train_samples or needed)), device,
                             eval_limit=max(_PROBE[1], measured.micro_batch))
    model, trainer = _fresh_trainer(card, run, workload, device, measured)
    timing = _timing(trainer, workload, measured, device, steps)
    memory = _memory(card, run, workload, device, protocol, manifest,
                     resolve_precision(config.precision, torch.device("cuda")))
    budget, card_text = _card_bytes(device, memory_gb)
    verdict = {**_verdict(memory, protocol.batch_size, protocol.accumulate, budget),
               "paper_micro_batch_bytes": _estimate_bytes(memory, run.batch_size)}
    report = {"model": card.name, "config": run.config, "parameters": count_parameters(model), "device": str(device),
              "reduced": device.type != "cuda", "size": run.size, "precision": run.precision,
              "compile": protocol.compile, "update_batch": protocol.batch_size, "grad_accum": protocol.accumulate,
              "micro_batch": protocol.micro_batch, "paper_batch": run.batch_size, "paper_accumulate": card.accumulate,
              "threads": torch.get_num_threads(), "measured_micro_batch": measured.micro_batch,
              "measured_accumulate": measured.accumulate, "card": card_text, "memory": memory, "verdict": verdict,
              **timing}
    report.update(_estimates(card, run, protocol, measured, manifest, workload, model, timing, memory))
    report["compile_fell_back"] = trainer.fell_back
    report["host_syncs_per_update"] = _syncs_per_update(trainer, workload, measured, device)
    return report


def _gpu_estimate(memory: dict, protocol, run: dict) -> dict:
    tflop = memory["flops_per_sample"] * protocol.batch_size * run["updates"] / 1e12
    return {"train_tflop": tflop, "minutes": [tflop / rate / 60 for rate in reversed(GPU_TFLOPS)]}


def _gb(value: float | None) -> str:
    return "–" if value is None else f"{value / _GIB:.2f} GB"


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.1f} s"
    return f"{seconds / 60:,.1f} min" if seconds < 7200 else f"{seconds / 3600:,.1f} h"


def _timing_lines(report: dict) -> list[str]:
    if report.get("out_of_memory"):
        return ["time: not measured (out of memory at this micro-batch)"]
    compiled = report["compile"] and not report["compile_fell_back"]
    run = report["run"]
    return [
        f"time: first update {report['first_update_s']:.2f} s, steady {report['update_s']:.3f} s"
        + (f", compile about {_duration(report['first_update_s'] - report['update_s'])}" if compiled else "")
        + (" (torch.compile failed: eager)" if report["compile_fell_back"] else "")
        + f"; at the run's batch of {report['update_batch']}: {report['update_s_at_run_batch']:.3f} s per update; "
        f"validation {1000 * report['validation_s_per_row']:.1f} ms per row",
        f"full run on this device (estimate): {_duration(run['total_s'])} = {run['updates']:,} updates over "
        f"{run['train_rows']:,} rows ({_duration(run['train_s'])}) + validation ({_duration(run['validation_s'])}) + "
        f"test predictions of up to {len(RULES)} rules ({_duration(run['test_s'])}); compile not included",
    ]


def _memory_lines(report: dict) -> list[str]:
    memory, verdict = report["memory"], report["verdict"]
    smallest = verdict["smallest_fitting_grad_accum"]
    measured = report.get("measured_peak_bytes")
    return [
        f"memory per update (live tensors, {memory['precision']}): {_gb(memory['fixed_bytes'])} + "
        f"{memory['per_sample_bytes'] / 2**20:,.1f} MB per sample; the splits on the device {_gb(memory['data_bytes'])}",
        f"estimated peak: {_gb(verdict['estimate_bytes'])} at micro-batch {report['micro_batch']} "
        f"(--grad-accum {report['grad_accum']}); {_gb(verdict['paper_micro_batch_bytes'])} at the paper's "
        f"{report['paper_batch']} per pass" + (f"; measured by the CUDA allocator: {_gb(measured)}" if measured else ""),
        f"verdict: {'FITS' if verdict['fits'] else 'DOES NOT FIT'} a {report['card']} card at --grad-accum "
        f"{report['grad_accum']} (planning for {HEADROOM:.0%}: {_gb(HEADROOM * verdict['budget_bytes'])}); "
        + (f"the smallest --grad-accum that fits is {smallest}" if smallest else
           "no --grad-accum fits: use a larger card"),
    ]


def render(report: dict) -> str:
    """The report as the lines ``cogen baselines preflight`` prints."""
    lines = [
        f"preflight: {report['model']} on {report['config']}: {report['parameters']:,} parameters (size "
        f"{report['size']}); device {report['device']}; precision {report['precision']}; "
        f"compile {'on' if report['compile'] else 'off'}",
        f"update: {report['update_batch']} samples = {report['grad_accum']} micro-batch(es) of {report['micro_batch']} "
        f"(the paper: batch {report['paper_batch']} x accumulation {report['paper_accumulate']})",
    ]
    if report["reduced"]:
        load = report.get("load_average")
        lines.append(f"REDUCED (no GPU here): measured at micro-batch {report['measured_micro_batch']} "
                     f"(1/{REDUCTION} of {report['micro_batch']}); times are CPU seconds of this process with "
                     f"{report.get('timing_threads', 1)} torch thread (the fastest of the steady updates), scaled "
                     "linearly to the run's batch; load average "
                     + (f"{load:.1f} on {report.get('cpus')} CPUs" if load is not None else "unknown")
                     + " when measured")
    lines += _timing_lines(report) + _memory_lines(report)
    lines.append(f"host syncs per update: {report['host_syncs_per_update']}")
    gpu = report.get("gpu_estimate")
    if gpu:
        low, high = gpu["minutes"]
        lines.append(f"GPU estimate (arithmetic, not measured): {gpu['train_tflop']:,.1f} TFLOP of training updates; "
                     f"at {GPU_TFLOPS[0]:g}-{GPU_TFLOPS[1]:g} TFLOP/s (what the spec's eager H100 stand-ins reached) "
                     f"{_duration(60 * low)} to {_duration(60 * high)}, plus compile and evaluation")
    return "\n".join(lines) + "\n"
