"""What the training loop, a run and preflight ask of a model's data: the :class:`Workload` protocol.

A model's :class:`~cogen_baselines.registry.ModelCard` names its workload class; the class says
which columns a config's rows must have (:attr:`Workload.COLUMNS`, a property of the data, read
from the config's manifest), so a model meets data it can read or a one-line error that names the
models that can. Nothing here, nor anywhere in ``cogen_baselines``, branches on a family's name:
the family a config belongs to is read from its manifest and only passed on to
:func:`cogen.family.family` (whose evaluator names the headline metrics).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Protocol

from cogen_baselines.errors import BaselineError

__all__ = ["Workload", "alternatives", "check_fits", "check_stream", "headlines", "manifest_columns", "models_for"]


class Workload(Protocol):
    """One config's data on the device, as a model trains and is scored on it.

    ``COLUMNS``: the columns every row must have; ``STREAMS``: whether ``--stream`` can replace the
    stored training split with fresh samples. ``load`` reads a config for a model card;
    ``paper_input(card)`` is the input the spec's parameter counts assume; ``default_epochs`` the
    paper's epochs where they depend on the data (else None); ``paper_rows`` the rows of the paper's
    splits where every config of the kind has the same (else None).
    """

    COLUMNS: ClassVar[frozenset[str]]
    STREAMS: ClassVar[bool]
    test_splits: tuple[str, ...]
    validation_splits: tuple[str, ...]

    @classmethod
    def load(cls, data, config: str, card, **options: Any) -> Workload: ...

    @classmethod
    def paper_input(cls, card) -> Any: ...

    @classmethod
    def default_epochs(cls, manifest: Mapping) -> int | None: ...

    @classmethod
    def paper_rows(cls) -> Mapping[str, int] | None: ...

    @property
    def model_input(self) -> Any: ...

    @property
    def train_size(self) -> int: ...

    def start_epoch(self, epoch: int) -> None: ...

    def train_batch(self, rows) -> Any: ...

    def validate(self, model) -> dict[str, float]: ...

    def predict(self, model, split: str, path: Path) -> dict[str, float]: ...

    def describe(self) -> dict: ...

    def loaded_rows(self) -> dict[str, int]: ...

    def resident_bytes(self) -> int: ...


def manifest_columns(manifest: Mapping) -> frozenset[str]:
    """The columns a config's rows have, from its manifest."""
    columns = manifest.get("columns")
    return frozenset(columns) if isinstance(columns, Mapping) else frozenset()


def models_for(manifest: Mapping) -> list[str]:
    """Every model whose workload can read a config of ``manifest``."""
    from cogen_baselines.registry import MODELS

    have = manifest_columns(manifest)
    return [name for name, card in MODELS.items() if card.workload().COLUMNS <= have]


def alternatives(names: list[str]) -> str:
    """``use --model a, b or c`` (or that none fits)."""
    if not names:
        return "no model of cogen_baselines reads it"
    return "use --model " + (names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1])


def check_fits(card, manifest: Mapping, config: str, task_codes: bool | None = None) -> None:
    """Refuse, in one line, a model that cannot train on ``config``: its rows lack a column the
    model's workload reads, or the model needs task codes the run will not have."""
    missing = sorted(card.workload().COLUMNS - manifest_columns(manifest))
    if missing:
        raise BaselineError(f"{config} has no {', '.join(missing)} column(s), which --model {card.name} reads; "
                            + alternatives(models_for(manifest)))
    if card.needs_task_codes and task_codes is False:
        raise BaselineError(f"--model {card.name} conditions every block on the task code, and {config} has none "
                            "(an environment (EnvGen) experiment, or --task-codes off): it would be the plain model; "
                            f"use --model {card.without_task_codes}")


def check_stream(card, stream: str | None) -> None:
    """Refuse ``--stream`` for a model whose workload trains on stored rows only."""
    if stream is not None and not card.workload().STREAMS:
        raise BaselineError(f"--stream makes fresh grid samples; {card.name} trains on stored episodes "
                            "(leave out --stream)")


def headlines(manifest: Mapping) -> tuple[str, ...]:
    """The metrics ``cogen eval`` puts first for the family of ``manifest`` (its evaluator's ``HEADLINES``)."""
    from cogen.family import family

    return tuple(family(manifest.get("family")).evaluation().HEADLINES)
