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

__all__ = ["Protocol", "Trainer", "fit"]

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
    accumulate: int = 1
    validate_every: int = 1
    compile: bool = False
    precision: str = "fp32"

    @property
    def micro_batch(self) -> int:
        """Samples per forward and backward pass."""
        return self.batch_size // self.accumulate


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
    failure restores them, so the redone update is exactly the eager one. Out-of-memory errors
    are not compile failures: they stop the run (``cogen baselines preflight`` says which
    ``--grad-accum`` fits).
    """

    def __init__(self, model, protocol: Protocol, device: torch.device, total_updates: int, updates_per_epoch: int):
        self.model, self.protocol, self.device = model, protocol, device
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=torch.tensor(protocol.lr, device=device),
                                           betas=protocol.betas, weight_decay=protocol.weight_decay, fused=True)
        self.scaler = grad_scaler(device, protocol.precision)
        self.factor = partial(lr_factor_tensor, protocol.schedule, total_steps=total_updates,
                              steps_per_epoch=updates_per_epoch, warmup=protocol.warmup)
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
        except Exception as error:  # noqa: BLE001  (any compile failure, in either pass; see the class docstring)
            if self.loss_of is self.eager or isinstance(error, torch.OutOfMemoryError):
                raise
            log.warning("torch.compile failed (%s); training eagerly from here", _reason(error))
            self.loss_of, self.fell_back = self.eager, True
            self.optimizer.zero_grad(set_to_none=True)
            self._restore(saved)
            total = self._accumulate(self.eager, workload, rows)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad(set_to_none=True)
        return total

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
