"""``cogen baselines preflight``: its numbers against direct measurements, its verdict, the command; the
probes it uses; the refusals a run gets before it starts. (That ``cogen_baselines`` names no family is
``tests/test_architecture.py``'s check.)"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

torch = pytest.importorskip("torch")

from baselines_helpers import built, compgen_build, envgen_build, one_thread  # noqa: F401  (fixtures)

from cogen_baselines.config import RunConfig
from cogen_baselines.errors import BaselineError
from cogen_baselines.probes import HostSyncs, LiveMemory

ROOT = Path(__file__).resolve().parents[1]
CPU = torch.device("cpu")


def test_live_memory_counts_storage_while_it_lives():
    """A law of the probe: views share their storage, a freed tensor stops counting, autograd's saved
    tensors keep counting until backward frees them."""
    x = torch.ones(1000, requires_grad=True)            # 4,000 bytes, tracked from the start
    with LiveMemory([x]) as live:
        y = x.exp()                                     # 4,000: saved for backward
        y.view(10, 100)                                 # a view: no new storage
        z = (y * 2).sum()                               # 4,000 for y * 2 (freed at once), 4 for z
        peak_before = live.peak
        del y
        assert live.current == 8000 + 4                 # x and exp's saved output, z
        z.backward()                                    # frees exp's output; x.grad is new (4,000)
    assert peak_before == 12_004 and live.current == 8004


def test_host_syncs_counts_what_makes_a_gpu_wait():
    x = torch.arange(6.0)
    with HostSyncs() as syncs:
        x.sum() * 2                                     # stays on the device
        float(x.sum())                                  # .item()
        bool((x > 2).any())                             # bool(tensor)
        x[x > 2]                                        # boolean mask: nonzero
        y = torch.zeros(6)
        y[x > 2] = 1.0                                  # boolean mask assignment
    assert syncs.count == 4 and syncs.ops["_local_scalar_dense"] == 2, syncs.ops


def test_the_memory_fit_predicts_a_larger_micro_batch(compgen):
    """Preflight fits live memory as fixed + per-sample x batch from micro-batches of 1 and 2; at 6 samples
    the fit is the measured peak within 10 % (activations grow linearly with the batch)."""
    from cogen_baselines.preflight import _estimate_bytes, _live_peak, _memory
    from cogen_baselines.run import load_workload, protocol_of, resolve_run

    card, device, run, manifest = resolve_run(RunConfig("vanilla-tf", str(compgen), "E-1", size="small",
                                                        device="cpu"))
    protocol = protocol_of(card, run, device)
    workload = load_workload(card, run, device)
    memory = _memory(card, run, workload, device, protocol, manifest, "fp16")
    measured, _ = _live_peak(card, run, workload, device, replace(protocol, precision="fp16"), 6)
    predicted = _estimate_bytes(memory, 6) - memory["data_bytes"]
    assert memory["per_sample_bytes"] > 0 and predicted == pytest.approx(measured, rel=0.1)


def test_the_cpu_memory_probe_counts_attention_as_cuda_holds_it(compgen):
    """Attention-probability dropout sends a CPU's scaled_dot_product_attention down its math path, which
    holds the (L x L) probabilities that CUDA's fused kernels never make; the probe measures the GPU's way:
    Vanilla-TF with the code's dropout 0.1 runs the fused kernel in the probe, holds per sample about what
    the text's form without dropout holds."""
    from torch.utils._python_dispatch import TorchDispatchMode

    from cogen_baselines.preflight import _live_peak, _memory
    from cogen_baselines.run import load_workload, protocol_of, resolve_run

    class Ops(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.names = set()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.names.add(func.overloadpacket.__name__)
            return func(*args, **(kwargs or {}))

    per_sample = {}
    for follow in ("code", "text"):
        card, device, run, manifest = resolve_run(RunConfig("vanilla-tf", str(compgen), "E-1", size="small",
                                                            device="cpu", follow=follow))
        workload = load_workload(card, run, device)
        protocol = protocol_of(card, run, device)
        memory = _memory(card, run, workload, device, protocol, manifest, "fp16")
        per_sample[follow] = memory["per_sample_bytes"]
        if follow == "code":
            with Ops() as ops:
                _live_peak(card, run, workload, device, protocol, 2)
    assert "_scaled_dot_product_flash_attention_for_cpu" in ops.names
    assert per_sample["code"] == pytest.approx(per_sample["text"], rel=0.3)


def test_preflight_reports_time_memory_and_a_verdict(compgen):
    from cogen_baselines.preflight import _verdict, preflight, render

    torch.set_num_threads(2)
    report = preflight(RunConfig("grid-tf", str(compgen), "E-1", size="small", device="cpu"), steps=2)
    assert report["reduced"] and report["host_syncs_per_update"] == 0 and report["verdict"]["fits"]
    assert report["update_s"] > 0 and report["run"]["updates"] == 10 * 1      # 48 rows, batch 64: 1 update per epoch
    # CPU times with one thread (not inflated by other jobs' load), the machine's threads given back after
    assert report["timing_threads"] == 1 and torch.get_num_threads() == 2 and report["cpus"] >= 1
    text = render(report)
    for words in ("REDUCED (no GPU here)", "with 1 torch thread (the fastest of the steady updates)",
                  "load average", "estimated peak", "verdict: FITS", "host syncs per update: 0",
                  "GPU estimate (arithmetic, not measured)", "full run on this device (estimate)",
                  "test predictions of up to 5 rules"):
        assert words in text
    # the verdict's law: the smallest --grad-accum that fits is the smallest divisor whose micro-batch fits
    memory = {"fixed_bytes": 1e9, "per_sample_bytes": 1e8, "data_bytes": 0.0}
    verdict = _verdict(memory, 400, 1, budget=10e9)   # plan for 9e9: micro-batch <= 80 fits
    assert not verdict["fits"] and verdict["smallest_fitting_grad_accum"] == 5
    assert _verdict(memory, 400, 8, budget=10e9)["fits"]
    assert _verdict(memory, 400, 8, budget=1e9)["smallest_fitting_grad_accum"] is None


@pytest.mark.slow
def test_preflight_command_and_its_refusals(compgen, envgen):
    """The command end to end, compiling (Inductor on the CPU), on a card too small for anything."""
    from cogen.cli import app

    runner = CliRunner()
    result = runner.invoke(app, ["baselines", "preflight", "--model", "resnet", "--data", str(compgen), "--config",
                                 "E-1", "--size", "small", "--device", "cpu", "--steps", "1", "--compile", "on",
                                 "--memory-gb", "0.001"])
    assert result.exit_code == 0, result.output
    assert "DOES NOT FIT" in result.output and "no --grad-accum fits" in result.output
    assert re.search(r"compile about [\d.]+ s", result.output)
    if not torch.cuda.is_available():
        result = runner.invoke(app, ["baselines", "preflight", "--model", "resnet", "--data", str(compgen),
                                     "--config", "E-1", "--device", "cuda"])
        assert result.exit_code != 0 and "sees no CUDA device" in str(result.exception)


def test_runs_are_refused_before_they_start(compgen, envgen, tmp_path):
    """One-line refusals: resnet-film on an EnvGen experiment (no task codes: it would be plain resnet), a
    --grad-accum that does not divide the update, in train and in a suite's plan."""
    from cogen_baselines.run import resolve_run
    from cogen_baselines.suite import plan

    with pytest.raises(BaselineError, match="conditions every block on the task code.*use --model resnet"):
        resolve_run(RunConfig("resnet-film", str(envgen), "T-1"))
    with pytest.raises(BaselineError, match="use --model resnet"):
        plan(["resnet", "resnet-film"], ["T"], [0], str(envgen))
    with pytest.raises(BaselineError, match=r"--grad-accum 3 does not divide the 64 samples.*use one of 1, 2, 4"):
        resolve_run(RunConfig("grid-tf", str(compgen), "E-1", grad_accum=3))
    _, _, run, _ = resolve_run(RunConfig("resnet-film", str(compgen), "E-1"))
    assert run.grad_accum == 1 and run.precision == ("fp16" if torch.cuda.is_available() else "fp32")
