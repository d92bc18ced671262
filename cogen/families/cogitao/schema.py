"""Frozen objects that a COGITAO-style spec file is validated into.

A *setting* (one YAML file, e.g. ``c1.yaml``) holds *experiments* (``C1-1`` ... ``C1-5``). Each
experiment has an in-domain part, sampled for ``train`` / ``validation`` / ``test``, and
optionally an out-of-domain part, sampled for ``validation_ood`` / ``test_ood``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from cogen.errors import UnknownNameError
from cogen.kit.spec import ID_SPLITS, OOD_SPLITS, SPLITS, Range
from cogen.render import RenderSettings

__all__ = ["BALANCE", "BALANCED_FACTORS", "DEGENERATE", "ID_SPLITS", "OOD_SPLITS", "OUTPUTS", "SHIFTS", "SPLITS", "VARIANTS",
           "Domain", "Experiment", "Grid", "ObjectFilter", "SequenceSet", "Setting", "experiment_from_dict"]

SHIFTS = ("composition", "environment")
#: ``degenerate:`` values: reject (default) or keep samples whose output grid equals the input grid.
DEGENERATE = ("reject", "keep")
#: ``balance:`` values. ``difficulty`` (default): a sample's object count, and, out of domain in
#: experiments that shift object sizes, each object's height, are drawn once and kept through the
#: sample's retries; ``count``: the object count only; ``none``: every attempt redraws them, so
#: accepted samples lean toward the easy draws (fewer and smaller objects).
BALANCE = ("difficulty", "count", "none")
#: What a domain balances once resolved: the object ``count`` and/or each object's ``size`` (height).
BALANCED_FACTORS = ("count", "size")
#: ``output:`` keys: optional columns. ``frames``: every intermediate grid (``frames``) and the step
#: that made it (``actions``), from the same pass and draws as the plain rows; ``object_frames``:
#: every object's box and tight array at every step (``object_boxes``, ``object_grids``, and ``actions``).
OUTPUTS = ("frames", "object_frames")
#: ``variant:`` values: which reading of the paper a spec follows (shown in the dataset card).
VARIANTS = ("paper-text", "as-run", "custom")

#: Paper sizes (COGITAO App. F): 100,000 train and 1,000 for every other split.
PAPER_SIZES = {"train": 100_000, "validation": 1_000, "test": 1_000, "validation_ood": 1_000, "test_ood": 1_000}


@dataclass(frozen=True)
class Grid:
    """Grid height and width ranges; each sample draws both independently."""

    height: Range
    width: Range


@dataclass(frozen=True)
class ObjectFilter:
    """How many objects a sample holds and which bank objects may be drawn.

    ``where`` is a conjunction: boolean bank properties (``is_shape_fully_connected: true``)
    and inclusive numeric ranges (``rows: [1, 5]``).
    """

    count: Range
    where: tuple[tuple[str, Any], ...] = ()

    def query(self) -> dict[str, Any]:
        """The filter as a mapping for :meth:`cogen.bank.Bank.select`."""
        return {name: (tuple(value) if isinstance(value, Range) else value) for name, value in self.where}


@dataclass(frozen=True)
class SequenceSet:
    """The transformation sequences of one domain.

    Either an explicit list of ordered sequences (``sequences``), or every sequence over
    ``pool`` with a length in ``depth``, minus ``exclude``.
    """

    sequences: tuple[tuple[str, ...], ...] = ()
    pool: tuple[str, ...] = ()
    depth: Range | None = None
    exclude: tuple[tuple[str, ...], ...] = ()

    @property
    def explicit(self) -> bool:
        """True when the sequences are listed one by one."""
        return bool(self.sequences)

    def __contains__(self, sequence: tuple[str, ...]) -> bool:
        sequence = tuple(sequence)
        if self.explicit:
            return sequence in self.sequences
        return (self.depth.lo <= len(sequence) <= self.depth.hi and all(t in self.pool for t in sequence)
                and sequence not in self.exclude)

    def transforms(self) -> tuple[str, ...]:
        """Every transformation name that can occur, in first-seen order."""
        names = self.pool if not self.explicit else itertools.chain.from_iterable(self.sequences)
        return tuple(dict.fromkeys(names))

    @property
    def max_depth(self) -> int:
        """Length of the longest sequence."""
        return max(map(len, self.sequences)) if self.explicit else self.depth.hi

    def count(self) -> int:
        """Number of distinct sequences in the set."""
        if self.explicit:
            return len(self.sequences)
        total = sum(len(self.pool) ** d for d in range(self.depth.lo, self.depth.hi + 1))
        return total - len(self.exclude)


@dataclass(frozen=True)
class Domain:
    """Everything that decides the distribution of one group of splits.

    ``degenerate`` is ``reject`` (a sample whose output equals its input is redrawn) or ``keep``;
    ``balance`` names what each sample draws once and keeps through its retries (a subset of
    ``("count", "size")``, resolved by the spec reader from ``balance:``; empty = redraw all).
    """

    sequences: SequenceSet
    grid: Grid
    objects: ObjectFilter
    degenerate: str = "reject"
    balance: tuple[str, ...] = ()


@dataclass(frozen=True)
class Experiment:
    """One config of the published dataset (e.g. ``C1-1``).

    ``shift`` says what changes out of domain: ``composition`` (the sequences; no out-of-domain
    sequence may occur in domain) or ``environment`` (same sequences, different grids/objects).
    """

    name: str
    in_domain: Domain
    out_of_domain: Domain | None
    sizes: tuple[tuple[str, int], ...]
    description: str = ""
    shift: str = "composition"
    #: Extra columns the experiment writes (:data:`OUTPUTS`): ``("frames",)`` adds ``frames`` and ``actions``;
    #: ``("object_frames",)`` adds ``actions``, ``object_boxes`` and ``object_grids``.
    output: tuple[str, ...] = ()
    #: ``render:``: also draw ``input`` and ``output`` as images (``input_image``, ``output_image``).
    render: RenderSettings | None = None

    @property
    def frames(self) -> bool:
        """True when rows carry every intermediate frame (``output: {frames: true}``)."""
        return "frames" in self.output

    @property
    def object_frames(self) -> bool:
        """True when rows carry every object's state at every step (``output: {object_frames: true}``)."""
        return "object_frames" in self.output

    def splits(self) -> tuple[str, ...]:
        """The splits this experiment builds, in canonical order."""
        return tuple(split for split, _ in self.sizes)

    def size(self, split: str) -> int:
        """Number of samples of ``split``."""
        return dict(self.sizes)[split]

    def domain(self, split: str) -> Domain:
        """The domain ``split`` is sampled from."""
        return self.out_of_domain if split in OOD_SPLITS else self.in_domain


@dataclass(frozen=True)
class Setting:
    """One spec file: a named group of experiments with a seed and a version."""

    name: str
    family: str
    version: int
    seed: int
    experiments: tuple[Experiment, ...]
    description: str = ""
    source: str = field(default="", compare=False)
    variant: str = "custom"

    @property
    def configs(self) -> tuple[Experiment, ...]:
        """The dataset configs of the setting: its experiments (the name the family protocol uses)."""
        return self.experiments

    def experiment(self, name: str) -> Experiment:
        """The experiment called ``name``."""
        for experiment in self.experiments:
            if experiment.name == name:
                return experiment
        raise UnknownNameError("experiment", name, [e.name for e in self.experiments], where=self.source)

    def scaled(self, scale: float) -> Setting:
        """A copy whose split sizes are multiplied by ``scale`` (rounded, at least 1)."""
        if scale == 1:
            return self
        experiments = tuple(
            replace(e, sizes=tuple((s, max(1, round(n * scale))) for s, n in e.sizes)) for e in self.experiments
        )
        return replace(self, experiments=experiments)

    def with_seed(self, seed: int | None) -> Setting:
        """A copy with another seed (``None`` keeps the spec's)."""
        return self if seed is None else replace(self, seed=int(seed))

    def only(self, names: list[str] | None) -> Setting:
        """A copy restricted to the experiments in ``names`` (``None`` keeps all)."""
        if not names:
            return self
        for name in names:
            self.experiment(name)
        return replace(self, experiments=tuple(e for e in self.experiments if e.name in names))

    def fingerprint(self, experiment: Experiment) -> str:
        """SHA-256 of everything that decides ``experiment``'s data (not comments or file layout)."""
        described = asdict(experiment)
        for key in ("output", "render"):
            if not described[key]:
                del described[key]  # plain experiments keep the fingerprints they had before these keys
        payload = {"family": self.family, "setting": self.name, "version": self.version, "seed": self.seed,
                   "experiment": described}
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=list).encode()).hexdigest()


def experiment_from_dict(data: dict) -> Experiment:
    """Rebuild an :class:`Experiment` from ``dataclasses.asdict`` output (as stored in manifests)."""

    def domain(d: dict | None) -> Domain | None:
        if d is None:
            return None
        seqs = d["sequences"]
        sequence_set = SequenceSet(tuple(map(tuple, seqs["sequences"])), tuple(seqs["pool"]),
                                   Range(seqs["depth"]) if seqs["depth"] is not None else None,
                                   tuple(map(tuple, seqs["exclude"])))
        objects = d["objects"]
        where = tuple((name, Range(value) if isinstance(value, (list, tuple)) else value)
                      for name, value in objects["where"])
        # Manifests written before generator version 2 have neither field: they kept no-ops and balanced nothing.
        return Domain(sequence_set, Grid(Range(d["grid"]["height"]), Range(d["grid"]["width"])),
                      ObjectFilter(Range(objects["count"]), where), d.get("degenerate", "keep"),
                      tuple(d.get("balance", ())))

    return Experiment(data["name"], domain(data["in_domain"]), domain(data["out_of_domain"]),
                      tuple((split, int(n)) for split, n in data["sizes"]), data.get("description", ""),
                      data.get("shift", "composition"), tuple(data.get("output", ())),
                      RenderSettings(**data["render"]) if data.get("render") else None)
