"""What a run is: :class:`RunConfig` (what the user asked for) and its resolution against the model and data.

A run is fully named by its resolved config (model, data, config, seed, size, epochs, batches,
device, ...): the run folder stores it, and a folder never silently mixes two configs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch

from cogen_baselines.amp import PRECISIONS
from cogen_baselines.errors import BaselineError, DeviceError

__all__ = ["CHOICES", "RunConfig", "default_run_dir", "resolve_device"]

#: Allowed values of the string options.
CHOICES = {"task_codes": ("auto", "on", "off"), "compile": ("auto", "on", "off"), "precision": PRECISIONS,
           "follow": ("code", "text")}


@dataclass(frozen=True)
class RunConfig:
    """One training run. ``None`` means the paper's value for the model (epochs, batch size).

    ``train_samples`` keeps only the first rows of the training split (quick runs; the paper uses
    them all). ``task_codes``: ``auto`` gives depth-4 task codes to composition (CompGen)
    experiments and none to environment (EnvGen) ones, as the paper. ``compile``: ``auto`` uses
    ``torch.compile`` on CUDA only; ``on`` forces it anywhere. ``precision``: ``auto`` is FP16
    mixed precision on CUDA and FP32 elsewhere; ``fp16`` and ``bf16`` force that path anywhere
    (:mod:`cogen_baselines.amp`). ``grad_accum``: micro-batches per optimiser update (default: the
    model's; the update still sees the paper's batch, only memory changes). ``stream``: the spec
    the data was built from; every epoch then trains on fresh samples of the config's stream
    (grid models only). ``follow``: where the paper's text and the authors' code differ, ``code``
    (the default: what produced the paper's numbers) or ``text`` (:data:`cogen_baselines.registry.FOLLOW`).
    """

    model: str
    data: str
    config: str
    seed: int = 0
    epochs: int | None = None
    batch_size: int | None = None
    eval_batch_size: int = 500
    size: str = "paper"
    device: str = "auto"
    train_samples: int | None = None
    task_codes: str = "auto"
    compile: str = "auto"
    stream: str | None = None
    precision: str = "auto"
    grad_accum: int | None = None
    follow: str = "code"

    def check(self) -> None:
        """Refuse impossible values with a message that names the option and the fix."""
        for name, allowed in CHOICES.items():
            if getattr(self, name) not in allowed:
                raise BaselineError(f"{name}={getattr(self, name)!r} is not one of {', '.join(allowed)}")
        for name in ("epochs", "batch_size", "eval_batch_size", "train_samples", "grad_accum"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise BaselineError(f"{name} must be a positive integer, not {value}")

    def resolved(self, card, device: torch.device, default_epochs: int | None = None) -> RunConfig:
        """The config with every default filled in (the form run folders store and compare); refuses a
        ``grad_accum`` that does not divide the update's batch."""
        from cogen_baselines.amp import resolve_precision

        data = self.data
        if Path(data).expanduser().exists():
            data = str(Path(data).expanduser().resolve())
        run = replace(self, data=data, device=str(device), epochs=self.epochs or default_epochs or card.epochs,
                      batch_size=self.batch_size or card.setting("batch_size", self.follow),
                      grad_accum=self.grad_accum or card.grad_accum,
                      precision=resolve_precision(self.precision, device))
        update = run.batch_size * card.accumulate
        if update % run.grad_accum:
            divisors = [n for n in range(1, update + 1) if update % n == 0]
            raise BaselineError(f"--grad-accum {run.grad_accum} does not divide the {update} samples of one update "
                                f"(batch {run.batch_size} x the paper's accumulation {card.accumulate}); use one of "
                                f"{', '.join(map(str, divisors[:12]))}{' ...' if len(divisors) > 12 else ''}")
        return run

    def as_dict(self) -> dict:
        return asdict(self)


def default_run_dir(config: RunConfig, root: str | Path = "runs") -> Path:
    """``runs/<model>/<config>/seed<seed>``."""
    return Path(root) / config.model / config.config / f"seed{config.seed}"


def resolve_device(name: str | None) -> torch.device:
    """``auto``: CUDA when torch sees a GPU, else CPU. ``cuda`` without a GPU is an error, never a silent fallback."""
    if name in (None, "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError):
        raise DeviceError(f"--device {name!r} is not a device; use cuda, cuda:N or cpu") from None
    if device.type == "cuda":
        if not torch.cuda.is_available():
            build = f"built with CUDA {torch.version.cuda}" if torch.version.cuda else "a CPU-only build"
            raise DeviceError(f"--device {name} asked for a GPU, but torch {torch.__version__} ({build}) sees no "
                              "CUDA device here; use --device cpu (or --device auto)")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise DeviceError(f"--device {name}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    elif device.type != "cpu":
        raise DeviceError(f"--device {name}: only cuda and cpu are supported")
    return device
