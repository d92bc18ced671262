"""The paper's training protocol as data: learning-rate schedules and checkpoint rules.

Schedules (decision 2; spec A.6 for MLC), as a factor of the base learning rate per optimiser step:

* ``warmup_cosine_epochs`` (the grid paper's code, and its text's "cosine annealing ... at each
  epoch"): linear warm-up over the first 200 steps, and from then the factor of the epoch the step
  is in, ``floor + (1 - floor) (1 + cos(pi e / period)) / 2`` for epoch ``e`` (0-based): PyTorch's
  ``CosineAnnealingLR(T_max=period, eta_min=floor x lr)`` stepped once per epoch (10 epochs, floor
  0; LLaDA 20 and 1e-6 / 2e-4); its last epoch runs at 2.4 % of the rate, not at 0.
* ``warmup_cosine``: linear warm-up over the first 200 steps, then cosine to 0 over the rest, per
  step (decision 2's reading, before issue 39).
* ``mlc``: linear warm-up from 1e-4 over the first 10 % of steps, times a linear decay per epoch
  from 1 to 0.05 (the MLC paper's code: lr 0.01 ends at 5e-4).

Checkpoint rules (decision 1, revised by issue 39), each picking one epoch of a run's history;
every run keeps all of them, and each model's card names the one the authors' code keeps
(``ModelCard.checkpoint``; a table's ``paper`` rule is each run's own):

* ``ood_acc``: the highest out-of-domain validation grid accuracy on the padded grids, the first
  epoch on ties (the grid paper's code since 2025-06-02: Lightning's ``ModelCheckpoint`` on
  ``gen_val_acc_grid_epoch``, mode max, which keeps the first of equal values);
* ``ood_cell_acc``: the highest out-of-domain validation accuracy per cell of the padded grids, the
  first epoch on ties (the LLaDA branch's ``gen_val_acc``);
* ``ood_loss``: the lowest out-of-domain validation loss (the grid paper's text, J);
* ``id_val``: the best in-domain validation epoch (highest grid accuracy; ties go to the lower
  loss, then the earlier epoch);
* ``final``: the last epoch (what the MLC paper's training script tests).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

__all__ = ["DEFAULT_RULE", "PAPER_RULE", "RULES", "RULE_NAMES", "lr_factor", "lr_factor_tensor", "select_epochs"]

#: Checkpoint rules, in the order tables list them.
RULES = ("ood_acc", "ood_cell_acc", "ood_loss", "id_val", "final")
#: The table's default: each run's own rule, the one its model's authors' code keeps (or the text's).
PAPER_RULE = "paper"
DEFAULT_RULE = PAPER_RULE
#: What each rule is called in tables.
RULE_NAMES = {
    "paper": "each run's paper rule (the authors' code's: grid models the highest OOD-validation grid accuracy, "
             "LLaDA the highest OOD-validation cell accuracy, MLC the final epoch)",
    "ood_acc": "highest OOD-validation grid accuracy, first epoch on ties (the grid paper's code)",
    "ood_cell_acc": "highest OOD-validation cell accuracy, first epoch on ties (the paper's LLaDA code)",
    "ood_loss": "lowest OOD-validation loss (the grid paper's text)",
    "id_val": "best in-domain validation grid accuracy",
    "final": "final epoch",
}


def lr_factor(kind: str, step: int, total_steps: int, steps_per_epoch: int, warmup: int = 200, period: int = 10,
              floor: float = 0.0) -> float:
    """Factor of the base learning rate at optimiser step ``step`` (0-based) of ``total_steps``."""
    if kind == "warmup_cosine_epochs":
        if step < warmup:
            return (step + 1) / warmup
        return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * (step // steps_per_epoch) / period))
    if kind == "warmup_cosine":
        if step < warmup:
            return (step + 1) / warmup
        progress = (step - warmup) / max(1, total_steps - warmup)
        return 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))
    if kind == "mlc":
        warm = max(1, round(0.1 * total_steps))
        rise = 1e-4 + (1 - 1e-4) * min(1.0, step / warm)
        epochs = max(1, math.ceil(total_steps / steps_per_epoch))
        epoch = min(step // steps_per_epoch, epochs - 1)
        return rise * (1 - 0.95 * epoch / max(1, epochs - 1))
    raise ValueError(f"unknown schedule {kind!r}")


def lr_factor_tensor(kind: str, step: torch.Tensor, total_steps: int, steps_per_epoch: int,
                     warmup: int = 200, period: int = 10, floor: float = 0.0) -> torch.Tensor:
    """:func:`lr_factor` computed on ``step``'s device from a step count held there (float64 result),
    so the training loop sets the learning rate without reading the count back to the host (torch is
    imported here, so tables need no torch)."""
    import torch

    step = step.to(torch.float64)
    if kind == "warmup_cosine_epochs":
        epoch = torch.div(step, steps_per_epoch, rounding_mode="floor")
        cosine = floor + (1 - floor) * 0.5 * (1 + torch.cos(math.pi * epoch / period))
        return torch.where(step < warmup, (step + 1) / warmup, cosine)
    if kind == "warmup_cosine":
        progress = ((step - warmup) / max(1, total_steps - warmup)).clamp(max=1.0)
        return torch.where(step < warmup, (step + 1) / warmup, 0.5 * (1 + torch.cos(math.pi * progress)))
    if kind == "mlc":
        warm = max(1, round(0.1 * total_steps))
        rise = 1e-4 + (1 - 1e-4) * (step / warm).clamp(max=1.0)
        epochs = max(1, math.ceil(total_steps / steps_per_epoch))
        epoch = torch.div(step, steps_per_epoch, rounding_mode="floor").clamp(max=epochs - 1)
        return rise * (1 - 0.95 * epoch / max(1, epochs - 1))
    raise ValueError(f"unknown schedule {kind!r}")


def _best(history: Sequence[dict], key, valid) -> int | None:
    candidates = [record for record in history if valid(record)]
    return min(candidates, key=key)["epoch"] if candidates else None


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def select_epochs(history: Sequence[dict]) -> dict[str, int | None]:
    """The epoch each rule picks from per-epoch records (``epoch``, ``val_loss``, ``val_accuracy``,
    ``val_ood_loss``, ...). Epochs without the metric a rule needs are skipped; a rule with nothing
    to choose from gives None (``ood_loss`` on data without an out-of-domain validation split)."""
    if not history:
        return dict.fromkeys(RULES)
    return {
        "ood_acc": _best(history, lambda r: (-r["val_ood_accuracy"], r["epoch"]),
                         lambda r: _finite(r.get("val_ood_accuracy"))),
        "ood_cell_acc": _best(history, lambda r: (-r["val_ood_cell_accuracy"], r["epoch"]),
                              lambda r: _finite(r.get("val_ood_cell_accuracy"))),
        "ood_loss": _best(history, lambda r: (r["val_ood_loss"], r["epoch"]), lambda r: _finite(r.get("val_ood_loss"))),
        "id_val": _best(history, lambda r: (-r["val_accuracy"], r.get("val_loss", math.inf), r["epoch"]),
                        lambda r: _finite(r.get("val_accuracy"))),
        "final": max(record["epoch"] for record in history),
    }
