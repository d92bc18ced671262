"""The one training loop: AdamW, a per-step schedule, mixed precision on GPU, validation per epoch.

Fast by design: the training split already sits on the device (see :mod:`cogen_baselines.data`),
so a step is one index of a device permutation, one forward and backward pass and one optimiser
update. Nothing is copied to the host inside an epoch except the running loss shown every
``log_every`` steps. Every epoch has ``ceil(rows / batch)`` full batches: the last one wraps
around to the start of the epoch's permutation, so shapes never change (good for
``torch.compile``, which is used on CUDA only).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from cogen_baselines.evaluate import autocast
from cogen_baselines.protocol import lr_factor

__all__ = ["Protocol", "fit"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Protocol:
    """Resolved training settings of one run."""

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


def _compiled(function: Callable) -> Callable:
    """``torch.compile(function)``; if compiling fails on the first call, log it and stay eager."""
    compiled = torch.compile(function)
    state = {"call": compiled}

    def call(batch):
        try:
            return state["call"](batch)
        except torch._dynamo.exc.TorchDynamoException as error:  # a backend that cannot compile this model
            log.warning("torch.compile failed (%s); training eagerly", type(error).__name__)
            state["call"] = function
            return function(batch)

    return call


def _epoch_order(rows: int, steps: int, batch: int, device) -> torch.Tensor:
    """A permutation of ``rows`` on the device, wrapped around to fill ``steps`` full batches."""
    order = torch.randperm(rows, device=device)
    need = steps * batch
    return order.repeat(math.ceil(need / rows))[:need]


def fit(model, workload, protocol: Protocol, device: torch.device,
        on_epoch: Callable[[dict, list[dict]], None] | None = None,
        progress: Callable[[int, int, dict], None] | None = None, log_every: int = 50) -> list[dict]:
    """Train ``model`` on ``workload`` under ``protocol``; returns one record per epoch.

    The global torch RNG drives shuffling, dropout and training-time sampling: seed it (the run
    does) for identical runs. ``on_epoch(record, history)`` is called after each epoch
    (checkpoints); ``progress(step, total, info)`` after each step.
    """
    steps = math.ceil(workload.train_size / protocol.batch_size)
    updates = math.ceil(steps / protocol.accumulate)
    total = protocol.epochs * steps
    optimizer = torch.optim.AdamW(model.parameters(), lr=protocol.lr, betas=protocol.betas,
                                  weight_decay=protocol.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda update: lr_factor(
        protocol.schedule, update, protocol.epochs * updates, updates, protocol.warmup))
    scaler = torch.amp.GradScaler(device.type, enabled=device.type == "cuda")
    loss_of = _compiled(model.training_loss) if protocol.compile else model.training_loss
    history: list[dict] = []
    info = {"epoch": 0, "loss": math.nan}
    for epoch in range(1, protocol.epochs + 1):
        started, info["epoch"] = time.perf_counter(), epoch
        if hasattr(workload, "start_epoch"):
            workload.start_epoch(epoch)  # a streamed workload draws this epoch's fresh samples
        model.train()
        order = _epoch_order(workload.train_size, steps, protocol.batch_size, device)
        running = torch.zeros((), device=device)
        for step in range(steps):
            with autocast(device):
                loss = loss_of(workload.train_batch(order[step * protocol.batch_size: (step + 1) * protocol.batch_size]))
            scaler.scale(loss / protocol.accumulate).backward()
            running += loss.detach().float()
            if (step + 1) % protocol.accumulate == 0 or step == steps - 1:
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad(set_to_none=True)
                scheduler.step()
            if progress is not None:
                if (step + 1) % log_every == 0 or step == steps - 1:
                    info["loss"] = float(running) / (step + 1)
                progress((epoch - 1) * steps + step + 1, total, info)
        record = {"epoch": epoch, "steps": epoch * updates, "lr": optimizer.param_groups[0]["lr"],
                  "train_loss": float(running) / steps}
        if epoch % protocol.validate_every == 0 or epoch == protocol.epochs:
            record.update(workload.validate(model))
        record["seconds"] = round(time.perf_counter() - started, 3)
        history.append(record)
        log.info("epoch %d: %s", epoch, record)
        if on_epoch is not None:
            on_epoch(record, history)
    return history
