"""Every CUDA-only branch of the training loop, exercised on the CPU through the same code path.

A GPU run differs from a CPU one in three switches (:mod:`cogen_baselines.amp` and the compile
flag): FP16 autocast with an enabled GradScaler, BF16 autocast, and ``torch.compile``. Each test
here forces one of them on the CPU through :class:`~cogen_baselines.train.Trainer` and the
workloads' evaluation, and compares the loss with the eager FP32 step. Also: the compile fallback
covers the backward pass, the training step of every model is one graph, no update or evaluation
batch reads a value back to the host, skipped FP16 steps do not advance the schedule, and
micro-batches leave the update unchanged.
"""

from __future__ import annotations

import logging
import math
import warnings
from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")

from baselines_helpers import CARC_CONFIG, built, one_thread  # noqa: F401  (autouse fixture)

from cogen_baselines.models.base import GridBatch
from cogen_baselines.probes import HostSyncs
from cogen_baselines.protocol import lr_factor, lr_factor_tensor
from cogen_baselines.registry import MODELS, resolve_model
from cogen_baselines.train import Protocol, Trainer, fit

CPU = torch.device("cpu")
#: The models compiled with Inductor here: the most complete variant of each model class (resnet-film has
#: resnet's layers and FiLM, grid-tf vanilla-tf's trunk and more, llada llada-sft's); their siblings compile
#: with Dynamo and AOTAutograd only (``aot_eager``), the same capture without a second code generation.
INDUCTOR = ("resnet-film", "grid-tf", "pl-tf", "llada", "mlc")
#: Every model, MLC (about 3 s a case: its episodes are long) in the slow lane only.
EVERY_MODEL = [pytest.param(name, marks=pytest.mark.slow) if name == "mlc" else name for name in MODELS]
#: Relative tolerance of a forced precision's training loss against eager FP32 (first step, tiny models).
TOLERANCE = {"fp16": 1e-2, "bf16": 4e-2}
BATCH = 8
#: MLC's episodes are long (a CPU update of 8 in FP16 costs 4.5 s): 2 samples per micro-batch, the same code paths.
MLC_MICRO_BATCH = 2


def _batch(name: str, accumulate: int = 1) -> int:
    """Samples per update of ``name``'s small workload: ``accumulate`` micro-batches of at least two samples."""
    return MLC_MICRO_BATCH * accumulate if name == "mlc" else BATCH


@pytest.fixture(scope="module")
def workloads(tmp_path_factory):
    """One small real workload per model (a tiny CompGen build; a tiny Compositional-ARC build for MLC)."""
    loaded = {}

    def get(name: str, precision: str = "fp32"):
        card = resolve_model(name)
        data, config = (built(tmp_path_factory, "carc"), CARC_CONFIG) if name == "mlc" else \
            (built(tmp_path_factory, "compgen"), "E-1")
        if name not in loaded:
            loaded[name] = card.workload().load(data, config, card, device=CPU, task_codes="auto", train_limit=16,
                                                eval_batch_size=64, seed=0, eval_limit=4)
        loaded[name].precision = precision
        return loaded[name]

    return get


def _build(name: str, workload, shallow: bool = False):
    """The small model (seed 0); ``shallow``: one layer instead of two, where the model has layers (compile
    time grows with the graph, not with the tensors)."""
    card = resolve_model(name)
    torch.manual_seed(0)
    options = dict(card.sizes["small"])
    if shallow and "depth" in options:
        options["depth"] = 1
    if shallow and "blocks" in options:
        options["blocks"] = options["blocks"][:2]
    return card.builder(workload.model_input, **options)


def _step(name: str, workload, precision: str, compile_: bool = False, shallow: bool = False):
    """One optimiser update of the small model (seed 0) and one validation pass; the update's loss and
    the validation numbers."""
    card = resolve_model(name)
    model = _build(name, workload, shallow)
    batch = _batch(name)
    protocol = Protocol(1, batch, card.lr, card.weight_decay, card.betas, card.schedule, compile=compile_,
                        precision=precision)
    trainer = Trainer(model, protocol, CPU, total_updates=10, updates_per_epoch=10)
    torch.manual_seed(1)
    loss = float(trainer.update(workload, torch.arange(batch) % workload.train_size))
    workload.precision = precision
    return loss, workload.validate(model), trainer


def _finite(record: dict) -> bool:
    return all(math.isfinite(value) for value in record.values())


@pytest.mark.parametrize("precision", ["fp16", "bf16"])
@pytest.mark.parametrize("name", EVERY_MODEL)
def test_mixed_precision_step_and_evaluation_match_fp32(workloads, name, precision):
    """FP16 (with GradScaler enabled, as on CUDA) and BF16 autocast, forced on the CPU: the training loss
    of the first update is FP32's within TOLERANCE; the validation pass runs and is finite."""
    workload = workloads(name)
    reference, record32, _ = _step(name, workload, "fp32")
    loss, record, trainer = _step(name, workload, precision)
    assert trainer.scaler.is_enabled() == (precision == "fp16")
    assert loss == pytest.approx(reference, rel=TOLERANCE[precision]), (name, precision)
    assert _finite(record) and set(record) == set(record32)
    assert record["val_loss"] == pytest.approx(record32["val_loss"], rel=5 * TOLERANCE[precision])


@pytest.mark.slow
@pytest.mark.parametrize("name", list(MODELS))
def test_compiled_step_with_the_gpu_defaults_matches_eager_fp32(workloads, name, caplog, monkeypatch):
    """The GPU's default path (torch.compile, FP16 autocast, GradScaler), forced on the CPU: it compiles (no
    fallback), and the loss of the first update is eager FP32's within the FP16 tolerance. Inductor for the
    models of INDUCTOR (its random numbers made eager's, to compare); one-layer models, since compile time
    grows with the graph."""
    import torch._inductor.config as inductor

    import cogen_baselines.train as train_module

    workload = workloads(name)
    reference, _, _ = _step(name, workload, "fp32", shallow=True)
    torch._dynamo.reset()
    if name not in INDUCTOR:
        real = torch.compile
        monkeypatch.setattr(train_module.torch, "compile",
                            lambda function, **options: real(function, backend="aot_eager", **options))
    with caplog.at_level(logging.WARNING, logger="cogen_baselines"), inductor.patch(fallback_random=True):
        loss, record, trainer = _step(name, workload, "fp16", compile_=True, shallow=True)
    assert not trainer.fell_back and "torch.compile failed" not in caplog.text
    assert loss == pytest.approx(reference, rel=TOLERANCE["fp16"]) and _finite(record)


def _failing_backend(where: str):
    """A compile backend whose forward or backward compiler raises (AOTAutograd compiles the backward
    lazily, at the first backward())."""
    from torch._dynamo.backends.common import aot_autograd

    def works(graph, inputs):
        return graph

    def fails(graph, inputs):
        raise RuntimeError(f"simulated failure in the {where} compiler")

    return aot_autograd(fw_compiler=fails if where == "forward" else works,
                        bw_compiler=fails if where == "backward" else works)


@pytest.mark.parametrize("where", ["forward", "backward"])
@pytest.mark.parametrize("name", ["vanilla-tf", "resnet", "grid-tf"])
def test_a_failing_compile_falls_back_to_eager_in_either_pass(workloads, name, where, caplog, monkeypatch):
    """A backend that fails in the forward or in the backward compiler: the run goes on eagerly after one
    warning line, and ends with exactly the weights (and BatchNorm statistics) of a run that never
    compiled: the failed update is redone from zeroed gradients, restored generators (grid-tf's dropout)
    and restored buffers (resnet's BatchNorm)."""
    import cogen_baselines.train as train_module

    real = torch.compile
    workload = workloads(name)
    card = resolve_model(name)
    protocol = Protocol(2, BATCH, card.lr, card.weight_decay, warmup=2)

    def weights(compile_: bool):
        torch.manual_seed(0)
        model = card.build(workload.model_input, "small")
        torch.manual_seed(1)
        fit(model, workload, replace(protocol, compile=compile_), CPU)
        return model.state_dict()

    eager = weights(False)
    torch._dynamo.reset()
    monkeypatch.setattr(train_module.torch, "compile",
                        lambda function, **options: real(function, backend=_failing_backend(where), **options))
    with caplog.at_level(logging.WARNING, logger="cogen_baselines"):
        fallen = weights(True)
    messages = [r.getMessage() for r in caplog.records if "torch.compile failed" in r.getMessage()]
    assert len(messages) == 1 and "\n" not in messages[0] and f"in the {where} compiler" in messages[0]
    assert all(torch.equal(eager[key], fallen[key]) for key in eager)


@pytest.mark.slow
def test_a_second_shape_compiles_too(monkeypatch):
    """Two LLaDAs of different grid sizes compiled in one process (an in-process suite): the second is a
    recompile of the same code, which must stay static (with dynamic shapes, ``torch.rand`` of a symbolic
    shape fails to trace) and so must not fall back to eager."""
    import cogen_baselines.train as train_module
    from cogen_baselines.models.base import GridShape

    real = torch.compile
    monkeypatch.setattr(train_module.torch, "compile", lambda function, **options: real(function, backend="aot_eager",
                                                                                        **options))
    torch._dynamo.reset()
    card = resolve_model("llada")
    for side in (5, 6):
        shape = GridShape(side, side, 11, 29)
        torch.manual_seed(0)
        model = card.build(shape, "small")
        grids = torch.randint(0, 11, (4, side, side))
        trainer = Trainer(model, Protocol(1, 4, 1e-3, 0.0, compile=True), CPU, 10, 10)
        trainer.update(_Batches(GridBatch(grids, grids, torch.randint(0, 29, (4, 4)))), torch.arange(4))
        assert not trainer.fell_back, side


class _Batches:
    """A workload of one fixed batch."""

    def __init__(self, batch):
        self.batch = batch

    def train_batch(self, rows):
        return self.batch


@pytest.mark.parametrize("name", list(MODELS))
def test_every_training_step_is_one_graph(workloads, name):
    """torch._dynamo.explain: the training loss of every model (PL-TF's pondering included) traces as one
    graph with no break, so torch.compile compiles the whole step."""
    workload = workloads(name)
    torch.manual_seed(0)
    model = resolve_model(name).build(workload.model_input, "small")
    torch._dynamo.reset()
    explained = torch._dynamo.explain(model.training_loss)(workload.train_batch(torch.arange(4)))
    assert explained.graph_break_count == 0 and explained.graph_count == 1, explained.break_reasons


@pytest.mark.parametrize("name", EVERY_MODEL)
def test_no_host_sync_in_an_update_or_an_evaluation_batch(workloads, name):
    """Counted by HostSyncs (every ATen op that makes a GPU wait for the host): none in an optimiser update
    on the GPU's default path (FP16, GradScaler, gradient clipping, fused AdamW, the schedule on the device), none in an
    evaluation batch (PonderNet's halting draws, LLaDA's decoding, MLC's greedy decoding included)."""
    workload = workloads(name)
    card = resolve_model(name)
    torch.manual_seed(0)
    model = card.build(workload.model_input, "small")
    batch = _batch(name, accumulate=2)
    trainer = Trainer(model, Protocol(1, batch, card.lr, card.weight_decay, accumulate=2, precision="fp16",
                                      clip=card.clip), CPU, total_updates=10, updates_per_epoch=10)
    rows = torch.arange(batch) % workload.train_size
    trainer.update(workload, rows)                      # the first update makes the optimiser state
    with HostSyncs() as syncs:
        trainer.update(workload, rows)
    assert syncs.count == 0, syncs.ops
    model.eval()
    batch = workload.train_batch(rows)
    with HostSyncs() as syncs, torch.inference_mode():
        if hasattr(model, "evaluate"):
            model.evaluate(batch, torch.Generator().manual_seed(0))
        else:
            model.training_loss(batch, reduction="none"), model.generate(batch.encoder)
    assert syncs.count == 0, syncs.ops


def test_an_epochs_host_syncs_do_not_grow_with_its_updates(workloads):
    """fit reads the host only per epoch (its loss and learning rate), not per update."""
    workload = workloads("grid-tf")

    def syncs(updates: int) -> int:
        torch.manual_seed(0)
        model = resolve_model("grid-tf").build(workload.model_input, "small")
        with HostSyncs() as counted:
            fit(model, _Rows(workload, updates * 4), Protocol(1, 4, 1e-3, 0.0, precision="fp16"), CPU)
        return counted.count

    assert syncs(2) == syncs(6)


class _Rows:
    """A workload of ``rows`` training rows and no validation (to count the loop's own syncs)."""

    def __init__(self, workload, rows: int):
        self.workload, self.train_size = workload, rows

    def start_epoch(self, epoch: int) -> None:
        pass

    def train_batch(self, rows):
        return self.workload.train_batch(rows % self.workload.train_size)

    def validate(self, model) -> dict:
        return {}


def test_skipped_fp16_steps_do_not_advance_the_schedule(workloads):
    """GradScaler skips an update whose gradients overflow (clipped or not): the weights stay, the learning
    rate stays at its first value (the schedule counts applied updates), and PyTorch's scheduler-order
    warning never appears."""
    workload = workloads("vanilla-tf")
    card = resolve_model("vanilla-tf")
    torch.manual_seed(0)
    model = card.build(workload.model_input, "small")
    trainer = Trainer(model, Protocol(1, BATCH, 1e-3, 0.0, warmup=10, precision="fp16", clip=1.0), CPU, 100, 100)
    trainer.scaler = torch.amp.GradScaler("cpu", init_scale=2.0**60)     # overflows: the first updates are skipped
    before = {k: v.clone() for k, v in model.state_dict().items()}
    rows = torch.arange(BATCH) % workload.train_size
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        trainer.update(workload, rows)
        assert float(trainer.applied()) == 0 and all(torch.equal(before[k], v) for k, v in model.state_dict().items())
        trainer.update(workload, rows)
    assert float(trainer.optimizer.param_groups[0]["lr"]) == pytest.approx(1e-3 * lr_factor("warmup_cosine", 0, 100, 100, 10))
    while float(trainer.applied()) == 0:                 # the scale halves until an update applies
        trainer.update(workload, rows)
    trainer.update(workload, rows)
    assert float(trainer.optimizer.param_groups[0]["lr"]) == pytest.approx(1e-3 * lr_factor("warmup_cosine", 1, 100, 100, 10))


@pytest.mark.parametrize(("kind", "total", "per_epoch"), [("warmup_cosine", 1000, 100), ("warmup_cosine", 50, 5),
                                                          ("warmup_cosine_epochs", 3000, 300), ("mlc", 300, 10),
                                                          ("mlc", 7, 7)])
def test_the_device_schedule_is_the_host_schedule(kind, total, per_epoch):
    steps = torch.arange(total)
    got = lr_factor_tensor(kind, steps, total, per_epoch)
    expected = torch.tensor([lr_factor(kind, step, total, per_epoch) for step in range(total)], dtype=torch.float64)
    assert torch.allclose(got, expected, rtol=1e-12, atol=1e-15)


def test_micro_batches_leave_the_update_unchanged(workloads):
    """--grad-accum splits an update into micro-batches; for a model whose loss is a mean over equal-sized
    samples (no batch statistics, no dropout, no sampling), the update's gradient and loss are the same."""
    workload = workloads("vanilla-tf")
    card = resolve_model("vanilla-tf")

    def gradients(accumulate: int):
        torch.manual_seed(0)
        model = card.builder(workload.model_input, **{**card.sizes["small"], "dropout": 0.0})
        trainer = Trainer(model, Protocol(1, BATCH, 1e-3, 1e-3, accumulate=accumulate), CPU, 10, 10)
        loss = trainer._accumulate(trainer.eager, workload, torch.arange(BATCH) % workload.train_size)
        return float(loss) / accumulate, [p.grad.clone() for p in model.parameters()]

    (whole_loss, whole), (split_loss, split) = gradients(1), gradients(4)
    assert split_loss == pytest.approx(whole_loss, rel=1e-6)
    assert all(torch.allclose(a, b, rtol=1e-4, atol=1e-7) for a, b in zip(whole, split, strict=True))
