"""The one training loop: AdamW, a per-step schedule, mixed precision, micro-batches, validation per epoch.

Fast by design: the training split already sits on the device (see :mod:`cogen_baselines.data`),
so an update is one slice of a device permutation, ``accumulate`` forward and backward passes of
micro-batches, and one fused optimiser step. Nothing is read back to the host inside an epoch
(no ``.item()``, no ``bool()`` of a tensor): the learning rate is computed on the device from the
optimiser's own count of applied steps, so an FP16 step that GradScaler skips does not advance
the schedule; the running loss reaches the host every ``log_every`` updates only when a progress
callback asks for it. Every epoch has ``ceil(rows / batch)`` full updates: the last one wraps
around to the start of the epoch's permutation, so shapes never change (good for
``torch.compile``).

Gradients are clipped to a norm of ``protocol.clip`` (the grid paper's code: Lightning's
``gradient_clip_val=1.0``, after unscaling), on the device: no host sync.

Every device-specific choice goes through one switch (:mod:`cogen_baselines.amp`, the
``compile`` flag), so a CPU run can take the path a GPU run takes: the tests force FP16 with
GradScaler, BF16 and ``torch.compile`` on the CPU through this very loop.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import torch

from cogen_baselines.amp import autocast, grad_scaler
from cogen_baselines.protocol import lr_factor_tensor

__all__ = ["Protocol", "Trainer", "compile_failure", "fit"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Protocol:
    """Resolved training settings of one run.

    ``batch_size`` samples make one optimiser update; ``accumulate`` splits them into that many
    micro-batches (memory only: the update's gradient is the mean over all ``batch_size``).
    ``precision`` is a resolved :data:`~cogen_baselines.amp.PRECISIONS` value.
    """

    epochs: int
    batch_size: int
    lr: float
    weight_decay: float
    betas: tuple[float, float] = (0.9, 0.999)
    schedule: str = "warmup_cosine"
    warmup: int = 200
    period: int = 10           # warmup_cosine_epochs: the cosine's length in epochs (T_max)
    floor: float = 0.0         # warmup_cosine_epochs: its floor, a factor of lr (eta_min / lr)
    accumulate: int = 1
    validate_every: int = 1
    compile: bool = False
    precision: str = "fp32"
    clip: float | None = None

    @property
    def micro_batch(self) -> int:
        """Samples per forward and backward pass."""
        return self.batch_size // self.accumulate


#: Where compiling happens: an error raised in these packages (or wrapped by Dynamo) is a compile failure.
_COMPILERS = ("torch._dynamo", "torch._inductor", "triton")
#: Functions in which AOTAutograd compiles the backward lazily, at the first ``backward()`` (outside Dynamo,
#: so its errors are not wrapped): the backward compiler's wrapper, and the method that calls it.
_LAZY_COMPILE = frozenset({"_wrapped_bw_compiler", "get_or_compile"})


def _chain(error: BaseException):
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = getattr(error, "inner_exception", None) or error.__cause__ or error.__context__


def _frames(error: BaseException):
    traceback = error.__traceback__
    while traceback is not None:
        yield traceback.tb_frame
        traceback = traceback.tb_next


def compile_failure(error: BaseException) -> bool:
    """Whether ``error``, raised by a compiled update, is ``torch.compile`` failing (to trace, or to generate
    or build kernels, in the forward or the lazily compiled backward) rather than the update itself failing
    (a device-side assert, out of memory, a bad value): only the former may fall back to eager."""
    if isinstance(error, (torch.OutOfMemoryError, getattr(torch, "AcceleratorError", torch.OutOfMemoryError))):
        return False
    for link in _chain(error):
        module = type(link).__module__ or ""
        if module.startswith(_COMPILERS) and not module.startswith("torch._inductor.runtime"):
            return True
        if any(frame.f_code.co_name in _LAZY_COMPILE for frame in _frames(link)):
            return True
    return False


def _reason(error: BaseException) -> str:
    """One line naming the error and what caused it (a backend's failure is wrapped by Dynamo)."""
    cause = getattr(error, "inner_exception", None) or error.__cause__
    text = f"{type(error).__name__}" + (f": {type(cause).__name__}" if cause is not None else "")
    lines = str(cause if cause is not None else error).strip().splitlines()
    return (text + (f": {lines[0]}" if lines else ""))[:240]


class Trainer:
    """Optimiser updates of ``model`` under ``protocol`` (see the module docstring).

    With ``protocol.compile`` the training loss is ``torch.compile``d; if compiling fails, in the
    forward pass or in the backward one (AOTAutograd compiles the backward lazily, at the first
    ``backward()``), the failing update is redone eagerly from zeroed gradients and the run goes
    on eagerly, after one warning line. Until a compiled update has succeeded, each one first
    saves the random generators' state and the model's buffers (BatchNorm statistics), and a
    failure restores them, so the redone update is exactly the eager one. Only compile failures
    fall back (:func:`compile_failure`): any other error (out of memory: ``cogen baselines
    preflight`` says which ``--grad-accum`` fits; a device-side assert) stops the run as it was
    raised, before anything is restored. If the eager redo fails too, the compile failure is raised,
    with the redo's error as a note, so the first error is the one reported.
    """

    def __init__(self, model, protocol: Protocol, device: torch.device, total_updates: int, updates_per_epoch: int):
        self.model, self.protocol, self.device = model, protocol, device
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=torch.tensor(protocol.lr, device=device),
                                           betas=protocol.betas, weight_decay=protocol.weight_decay, fused=True)
        self.scaler = grad_scaler(device, protocol.precision)
        self.factor = partial(lr_factor_tensor, protocol.schedule, total_steps=total_updates,
                              steps_per_epoch=updates_per_epoch, warmup=protocol.warmup, period=protocol.period,
                              floor=protocol.floor)
        self.eager = model.training_loss
        self.loss_of = self._compiled() if protocol.compile else self.eager
        self.fell_back = self.proven = False

    def _compiled(self) -> Callable:
        """The compiled training loss: static shapes (a run's never change), compiled from scratch (an
        earlier run in this process, say of a suite, must not turn a recompile of the same model class
        dynamic or use up Dynamo's recompile limit)."""
        torch._dynamo.reset()
        return torch.compile(self.model.training_loss, dynamic=False)

    def applied(self) -> torch.Tensor:
        """Optimiser steps applied so far, on the device (GradScaler's skipped steps do not count)."""
        first = next(iter(self.optimizer.param_groups[0]["params"]))
        state = self.optimizer.state.get(first)
        return state["step"] if state else torch.zeros((), device=self.device)

    def update(self, workload, rows: torch.Tensor) -> torch.Tensor:
        """One optimiser update on training rows ``rows``; returns the sum of its micro-batch losses (on the device)."""
        group = self.optimizer.param_groups[0]
        group["lr"].copy_(self.protocol.lr * self.factor(self.applied()))
        saved = self._save() if self.loss_of is not self.eager and not self.proven else None
        try:
            total = self._accumulate(self.loss_of, workload, rows)
            self.proven = True
        except Exception as error:  # noqa: BLE001  (compile failures only, in either pass; see compile_failure)
            if self.loss_of is self.eager or not compile_failure(error):
                raise
            total = self._fall_back(error, saved, workload, rows)
        if self.protocol.clip:
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.protocol.clip)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad(set_to_none=True)
        return total

    def _fall_back(self, failure: BaseException, saved: dict | None, workload, rows: torch.Tensor) -> torch.Tensor:
        """Redo the update eagerly after the compile failure ``failure``; if that fails too, raise ``failure``."""
        log.warning("torch.compile failed (%s); training eagerly from here", _reason(failure))
        log.debug("the compile failure", exc_info=failure)
        self.loss_of, self.fell_back = self.eager, True
        redo_error = None
        try:
            self.optimizer.zero_grad(set_to_none=True)
            self._restore(saved)
            return self._accumulate(self.eager, workload, rows)
        except Exception as error:  # noqa: BLE001  (reported below, after the first error)
            redo_error = error
        failure.add_note(f"after this torch.compile failure, the eager redo of the update failed too: "
                         f"{_reason(redo_error)}")
        raise failure

    def _save(self) -> dict:
        """What a compiled update may change before it fails: the generators' state and the buffers."""
        cuda = torch.cuda.get_rng_state_all() if self.device.type == "cuda" else None
        buffers = {name: buffer.clone() for name, buffer in self.model.named_buffers()}
        return {"cpu": torch.get_rng_state(), "cuda": cuda, "buffers": buffers}

    def _restore(self, saved: dict | None) -> None:
        if saved is None:
            return
        torch.set_rng_state(saved["cpu"])
        if saved["cuda"] is not None:
            torch.cuda.set_rng_state_all(saved["cuda"])
        with torch.no_grad():
            for name, buffer in self.model.named_buffers():
                buffer.copy_(saved["buffers"][name])

    def _accumulate(self, loss_of: Callable, workload, rows: torch.Tensor) -> torch.Tensor:
        total = torch.zeros((), device=self.device)
        for micro in rows.split(self.protocol.micro_batch):
            with autocast(self.device, self.protocol.precision):
                loss = loss_of(workload.train_batch(micro))
            self.scaler.scale(loss / self.protocol.accumulate).backward()
            total += loss.detach().float()
        return total


def _epoch_order(rows: int, need: int, device) -> torch.Tensor:
    """A permutation of ``rows`` on the device, wrapped around to ``need`` entries."""
    order = torch.randperm(rows, device=device)
    return order.repeat(math.ceil(need / rows))[:need]


def fit(model, workload, protocol: Protocol, device: torch.device,
        on_epoch: Callable[[dict, list[dict]], None] | None = None,
        progress: Callable[[int, int, dict], None] | None = None, log_every: int = 50) -> list[dict]:
    """Train ``model`` on ``workload`` under ``protocol``; returns one record per epoch.

    The global torch RNG drives shuffling, dropout and training-time sampling: seed it (the run
    does) for identical runs. ``on_epoch(record, history)`` is called after each epoch
    (checkpoints); ``progress(update, total, info)`` after each optimiser update.
    """
    updates = math.ceil(workload.train_size / protocol.batch_size)
    total = protocol.epochs * updates
    trainer = Trainer(model, protocol, device, total, updates)
    history: list[dict] = []
    info = {"epoch": 0, "loss": math.nan}
    for epoch in range(1, protocol.epochs + 1):
        started, info["epoch"] = time.perf_counter(), epoch
        workload.start_epoch(epoch)  # a streamed workload draws this epoch's fresh samples
        model.train()
        order = _epoch_order(workload.train_size, updates * protocol.batch_size, device)
        running = torch.zeros((), device=device)
        for update, rows in enumerate(order.split(protocol.batch_size)):
            running += trainer.update(workload, rows)
            if progress is not None:
                if (update + 1) % log_every == 0 or update == updates - 1:
                    info["loss"] = float(running) / ((update + 1) * protocol.accumulate)
                progress((epoch - 1) * updates + update + 1, total, info)
        lr = float(trainer.optimizer.param_groups[0]["lr"])   # the last update's (a float32 on the device)
        record = {"epoch": epoch, "steps": epoch * updates, "lr": float(f"{lr:.7g}"),
                  "train_loss": float(running) / (updates * protocol.accumulate)}
        if epoch % protocol.validate_every == 0 or epoch == protocol.epochs:
            record.update(workload.validate(model))
        record["seconds"] = round(time.perf_counter() - started, 3)
        history.append(record)
        log.info("epoch %d: %s", epoch, record)
        if on_epoch is not None:
            on_epoch(record, history)
    return history
