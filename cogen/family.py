"""The family registry: the :class:`Family` record type, the protocols its roles satisfy, and the lookup.

The families of tasks cogen makes have one frozen :class:`Family` record each, found in one read-only
mapping, :data:`FAMILIES`.

A *family* is a kind of task with its own spec format, sampler, rows, checks, metrics and prompts:
COGITAO (transformation sequences on bank objects), Compositional-ARC (visual-grammar episodes) and
string-to-grid programs (functions a model explains with a program, scored by compositionality).
Everything the shared machinery needs to know about a family lives in its record, so spec loading,
``cogen build``, ``cogen verify``, ``cogen eval``, ``cogen prompts`` and the dataset card never
branch on a family's name:

=================  ====================================================================
``spec_parser``    ``parse(doc) -> setting``: a validated YAML document into a :class:`Setting`
``builder``        the :class:`Builder` class ``cogen build`` drives
``shard_writer``   ``shard_tables(task, stats) -> Iterator[pyarrow.Table]``, run in the workers
``checks``         ``checks(data) -> FamilyChecks``: the family's ``cogen verify`` checks of one config,
                   fed every decoded row group (:mod:`cogen.pipeline.verify`)
``evaluator``      a module satisfying :class:`Evaluator`: the family's part of ``cogen eval``
``prompts``        ``prompts(data, split, **options) -> Iterator[Prompt]`` for in-context LLM runs
``card``           a :class:`cogen.card.family_card.FamilyCard`: what the dataset card says of the
                   family's configs (measures paragraph, study kinds, papers, differences from the
                   reference code, what changes out of domain, preview captions, extra tables)
``viewer``         a module satisfying :class:`cogen.view.drawing.Viewer`: its rows as ``cogen view``
                   draws them, its filters, its predictions scored row by row
``stream``         optional: ``stream_source(setting, config, split) -> StreamSource``, the family's
                   endless samples for :class:`cogen.stream.SampleStream` (empty: no streams)
``report``         optional: ``report(data, predictions, split, **options) -> dict``, a report over
                   every config the predictions name (``cogen eval <family>``; empty: none)
``sample``         optional: ``sample_one(...)``, one sample drawn for ``cogen sample`` (the default family's)
``exporter``       optional: a module for ``cogen export`` (:mod:`cogen.export`): ``FORMATS`` (formats
                   only its configs take), ``COLUMN_VIEWS`` (its ``--columns`` views) and, when its
                   rows make ARC tasks, ``arc_tasks(source, split, **options) -> Iterator[ArcTask]``
``testing``        a module for cogen's shared tests (:mod:`cogen.kit.testing`): ``TINY``, the family's
                   tiny build, and ``TAMPERS``, the damage each of its checks exists to catch
=================  ====================================================================

Plain fields hold what must be known without importing the family: its ``title`` and
``description``, the splits whose rows are held out of training (``held_out_splits``: out of domain,
as the card, the viewer and the training exports say), a note per column (``column_notes``), and the help text of each family option of
``cogen eval`` (``eval_help``) and ``cogen prompts export`` (``prompt_help``), which
:func:`option_help` puts together for the command line.

Callables are named ``"module:attribute"`` (or a module alone) and resolved on first use by
:meth:`Family.load`, the one place that turns a name into code. That keeps this module at the
bottom of the import graph, so every layer may read the registry, and keeps ``import cogen``
light. ``tests/test_families.py`` resolves every name and builds, verifies, scores and prompts a
tiny spec of every family.

Each family is a folder, ``cogen/families/<name>/``, whose ``__init__.py`` holds its record as
``FAMILY``; :data:`FAMILIES` finds the folders on first use (the default family first, then by name).
Adding a family means adding a folder with its record and the modules it names (see
``docs/architecture.md``); nothing outside the folder changes.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from cogen.errors import UnknownNameError

if TYPE_CHECKING:
    from pathlib import Path

    from cogen.folder import SplitData

__all__ = ["DEFAULT_FAMILY", "FAMILIES", "HELD_OUT_SPLITS", "ID_NOTE", "OPTIONAL_ROLES", "ROLES", "Builder", "Evaluator", "Family", "Setting", "family",
           "option_help"]

#: Roles every family record names, each resolved by :meth:`Family.load`.
ROLES = ("spec_parser", "builder", "shard_writer", "checks", "evaluator", "prompts", "card", "viewer")
#: Roles a family may leave empty (it has no such thing): :meth:`Family.load` gives None for them.
OPTIONAL_ROLES = ("stream", "report", "exporter", "sample", "testing")
#: The family of a spec file without a ``family:`` key, and of a manifest without one.
DEFAULT_FAMILY = "cogitao"
#: The splits a family holds out of training unless its record says otherwise (``Family.held_out_splits``).
HELD_OUT_SPLITS = ("validation_ood", "test_ood")


class Setting(Protocol):
    """What a spec file is validated into, as the build driver sees it.

    ``configs`` are the dataset configs the spec describes (after :meth:`only`), each with a
    ``name``; a family may call them something else in its own terms (COGITAO: experiments).
    """

    name: str
    family: str
    seed: int
    source: str

    @property
    def configs(self) -> Sequence[Any]: ...

    def only(self, names: list[str] | None) -> Setting: ...

    def scaled(self, scale: float) -> Setting: ...

    def with_seed(self, seed: int | None) -> Setting: ...


class Builder(Protocol):
    """How ``cogen build`` drives a family (see :func:`cogen.pipeline.build`).

    The driver first asks for :meth:`fingerprints` (config name -> digest of everything that decides
    its bytes, cheap: nothing is generated), to keep configs that are already complete; then it
    calls, in order: :meth:`pilot` (fail fast on a hopeless spec, compile the kernels before
    workers start), :meth:`prepare` (any parallel first pass, such as the key pass that makes every
    sample unique, then one :class:`~cogen.pipeline.shards.ConfigPlan` per config), and runs every
    plan's shard tasks through the family's ``shard_writer``. ``scratch`` is a local folder that
    every worker shares, for files the first pass leaves to the shard writers (None when the
    workers may not share the driver's disk); the driver deletes it when the build ends.

    ``info(config)`` is what the manifest says about a config (its scalar fields also join the
    config's build inputs, :mod:`cogen.folder.inputs`); ``rows()`` the rows the build writes (for
    the memory estimate); ``settings_from_manifests(manifests)``, a class method, the settings
    that built configs were made from, grouped so one :meth:`prepare` per setting regenerates
    them (``cogen verify --regenerate``). Optionally, ``split_sizes(config)`` gives the rows of each
    split of a config when the spec decides them without sampling (``cogen verify`` then compares
    them with the manifest at every level; empty, or left out, when only the first pass knows them).
    """

    family: str

    @classmethod
    def settings_from_manifests(cls, manifests: list[dict]) -> list[Setting]: ...

    def config_names(self) -> list[str]: ...

    def fingerprints(self) -> dict[str, str]: ...

    def info(self, config: Any) -> dict: ...

    def rows(self) -> int: ...

    def key_rows(self) -> int: ...

    def pilot(self) -> None: ...

    def prepare(self, executor: Any, progress: Callable[[int], None] | None = None,
                scratch: Path | None = None) -> list[Any]: ...


class Evaluator(Protocol):
    """A family's part of ``cogen eval``, implemented by a module (see :mod:`cogen.eval`).

    ``OPTIONS`` maps each option the family accepts to its default; ``HEADLINES`` names the
    metrics printed first. ``read`` reads a predictions file into what ``score`` takes (grid
    families use :func:`cogen.eval.predictions.read_predictions`) and ``write`` writes one;
    ``baseline`` makes the trivial predictions named in ``BASELINES`` (``target``: the answers).
    """

    OPTIONS: Mapping[str, Any]
    HEADLINES: tuple[str, ...]
    BASELINES: tuple[str, ...]

    def read(self, path: Any) -> Any: ...

    def write(self, path: Any, records: Any) -> int: ...

    def baseline(self, split: SplitData, kind: str, **options: Any) -> Iterator[tuple[str, Any]]: ...

    def expected_ids(self, split: SplitData, **options: Any) -> list[str]: ...

    def score(self, split: SplitData, raw: Any, **options: Any) -> dict: ...

    def summary_rows(self, metrics: dict) -> list[tuple[str, str]]: ...


@dataclass(frozen=True)
class Family:
    """Everything the shared machinery knows about one family of tasks (see the module docstring)."""

    name: str
    title: str
    description: str
    spec_parser: str
    builder: str
    shard_writer: str
    checks: str
    evaluator: str
    prompts: str
    card: str
    viewer: str
    stream: str = ""
    report: str = ""
    report_help: str = ""
    exporter: str = ""
    sample: str = ""
    testing: str = ""
    held_out_splits: tuple[str, ...] = HELD_OUT_SPLITS
    column_notes: Mapping[str, str] = field(default_factory=dict)
    eval_help: Mapping[str, str] = field(default_factory=dict)
    prompt_help: Mapping[str, str] = field(default_factory=dict)

    def load(self, role: str) -> Any:
        """The code a role names (``"module:attribute"``, or a module), imported on first use; None
        for an optional role the family leaves empty."""
        if role not in ROLES + OPTIONAL_ROLES:
            raise UnknownNameError("family role", role, ROLES + OPTIONAL_ROLES)
        name = getattr(self, role)
        return _resolve(name) if name else None

    def is_held_out(self, split: str) -> bool:
        """True for a split whose rows the family holds out of training (out of domain)."""
        return split in self.held_out_splits

    def domain(self, split: str) -> str:
        """``"out-of-domain"`` for a split the family holds out of training, else ``"in-domain"``."""
        return "out-of-domain" if self.is_held_out(split) else "in-domain"

    def make_builder(self, setting: Setting, rows_per_shard: int) -> Builder:
        """The family's :class:`Builder` for ``setting``."""
        return self.load("builder")(setting, rows_per_shard=rows_per_shard)

    def evaluation(self) -> Evaluator:
        """The family's :class:`Evaluator` module."""
        return self.load("evaluator")

    def make_prompts(self, data: Any, split: SplitData, **options: Any) -> Iterator[Any]:
        """The family's prompts for ``split`` (``data``: where it came from, for train examples)."""
        return self.load("prompts")(data, split, **options)


def _resolve(name: str) -> Any:
    module, _, attribute = name.partition(":")
    loaded = importlib.import_module(module)
    return getattr(loaded, attribute) if attribute else loaded


#: The note of the ``id`` column, which every family's rows share (:meth:`cogen.pipeline.shards.ShardTask.ids`).
ID_NOTE: Mapping[str, str] = MappingProxyType({"id": "stable sample id: config, split and index"})

#: Where the family folders live: one package per family, whose ``__init__`` holds its record as ``FAMILY``.
FOLDERS_PACKAGE = "cogen.families"


def _discover() -> Mapping[str, Family]:
    """Every folder of :data:`FOLDERS_PACKAGE` with a record, default family first, then by name.

    A folder is found by where it is, not by an import side effect: its ``__init__`` defines ``FAMILY`` and
    imports nothing heavy, so reading the registry stays cheap.
    """
    folders = importlib.import_module(FOLDERS_PACKAGE)
    names = sorted(info.name for info in pkgutil.iter_modules(folders.__path__) if info.ispkg)
    records = {}
    for name in sorted(names, key=lambda n: (n != DEFAULT_FAMILY, n)):
        record = getattr(importlib.import_module(f"{FOLDERS_PACKAGE}.{name}"), "FAMILY", None)
        if not isinstance(record, Family) or record.name != name:
            raise TypeError(f"{FOLDERS_PACKAGE}.{name} must define FAMILY = Family(name={name!r}, ...)")
        records[name] = record
    return MappingProxyType(records)


class _Registry(Mapping):
    """:data:`FAMILIES`: a read-only mapping that finds the family folders on first use."""

    _records: Mapping[str, Family] | None = None

    def _all(self) -> Mapping[str, Family]:
        if self._records is None:
            self._records = _discover()
        return self._records

    def __getitem__(self, name: str) -> Family:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def __repr__(self) -> str:
        return f"FAMILIES({', '.join(self._all())})"


#: Name -> record of every family, found from the folders under ``cogen/families/``.
FAMILIES: Mapping[str, Family] = _Registry()


def option_help(command: str, option: str, lead: str = "") -> str:
    """Help text of a family option of ``cogen eval`` (``command="eval"``) or ``cogen prompts export``
    (``"prompts"``): ``lead``, then what each family that takes the option says of it, after its title."""
    field_name = {"eval": "eval_help", "prompts": "prompt_help"}[command]
    parts = [f"{record.title}: {text}" for record in FAMILIES.values()
             if (text := getattr(record, field_name).get(option))]
    return " ".join([lead, *parts]).strip()


def family(name: str | None, where: str | None = None) -> Family:
    """The record of family ``name`` (``None``: the default family); a clear error for an unknown one."""
    name = DEFAULT_FAMILY if name is None else name
    if name not in FAMILIES:
        raise UnknownNameError("family", str(name), FAMILIES, where=where)
    return FAMILIES[name]
