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
``reply_parser``   optional: ``parse(text) -> (prediction, reason)``, a model's reply made into what the
                   evaluator scores (grid families: :func:`cogen.llm.parse.parse_reply`); empty: the
                   reply text is the prediction (a family scored on the code a model writes)
``testing``        a module for cogen's shared tests (:mod:`cogen.kit.testing`): ``TINY``, the family's
                   tiny build, and ``TAMPERS``, the damage each of its checks exists to catch
=================  ====================================================================

Plain fields hold what must be known without importing the family: its ``title`` and
``description``, the splits whose rows are held out of training (``held_out_splits``: out of domain,
as the card, the viewer and the training exports say), a note per column (``column_notes``), and the
``options`` it takes (each an :class:`Option`: name, type, default, help and validation), which reach
``cogen eval``, ``cogen eval baseline``, ``cogen prompts export``, ``cogen prompts run`` and the Inspect
tasks through this registry (:meth:`Family.check_options` checks given values;
``cogen/cli/_family_options.py`` makes them command-line options): a family with an option of its own
edits only its folder.

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

__all__ = ["COMMANDS", "DEFAULT_FAMILY", "FAMILIES", "HELD_OUT_SPLITS", "ID_NOTE", "OPTIONAL_ROLES", "ROLES", "Builder",
           "Evaluator", "Family", "Option", "Setting", "family"]

#: Roles every family record names, each resolved by :meth:`Family.load`.
ROLES = ("spec_parser", "builder", "shard_writer", "checks", "evaluator", "prompts", "card", "viewer")
#: Roles a family may leave empty (it has no such thing): :meth:`Family.load` gives None for them.
OPTIONAL_ROLES = ("stream", "report", "exporter", "sample", "testing", "reply_parser")
#: The commands a family option can belong to: ``cogen eval`` (and the scoring of ``cogen prompts run``),
#: ``cogen eval <family>`` (the family's ``report``: declared here, the command line need not import the report
#: to know its options), ``cogen eval baseline``, and the prompt makers (``cogen prompts export``, ``cogen
#: prompts run``, the Inspect tasks).
COMMANDS = ("eval", "report", "baseline", "prompts")
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
    ``sample_scores`` gives each expected id's own scores, as ``score`` counts them: a dict with ``id``,
    ``correct`` (the sample is solved), ``valid`` (its prediction was read), ``error`` (why it is
    wrong, or None) and numbers whose means over the split are the family's headline metrics
    (``cogen prompts run`` scores pass@k with them; the Inspect tasks report them per sample).
    ``OPTIONS`` holds what the record's :class:`Option` s declare for ``eval``, with the same defaults.
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

    def sample_scores(self, split: SplitData, raw: Any, **options: Any) -> list[dict]: ...


@dataclass(frozen=True)
class Option:
    """An option a family takes, declared in its record: what the command line, the library and the
    Inspect tasks accept, with its help and its checks.

    ``name`` is the keyword the family's code receives (its evaluator's ``score``, its prompt maker); the
    command-line flag is ``--name`` with dashes unless ``flag`` says otherwise (``short``: a one-letter
    alias). ``commands`` says where it applies (:data:`COMMANDS`). ``type`` is ``str``, ``int``, ``float``,
    ``bool`` (a flag; ``negatable``: ``--x/--no-x``) or ``pathlib.Path``; ``default`` is the family's own
    default (None: the family decides, as ``help`` says), shown in the help; ``choices``, ``minimum`` and
    ``maximum`` are checked; ``parse`` names a ``"module:function"`` that turns the given value into what
    the family takes, whatever a caller gives (raising ``ValueError`` with the reason).
    """

    name: str
    help: str
    commands: tuple[str, ...] = ("eval",)
    type: type = str
    default: Any = None
    choices: tuple = ()
    minimum: float | None = None
    maximum: float | None = None
    flag: str = ""
    short: str = ""
    negatable: bool = False
    parse: str = ""

    @property
    def option(self) -> str:
        """The command-line flag: ``--per-experiment``."""
        return self.flag or "--" + self.name.replace("_", "-")

    def check(self, value: Any, where: str = "") -> Any:
        """``value`` converted to :attr:`type` and checked, or a one-line :class:`~cogen.errors.EvalError`
        naming the flag and what it takes."""
        from cogen.errors import EvalError

        try:
            value = _resolve(self.parse)(value) if self.parse else _convert(self.type, value)
        except (TypeError, ValueError) as error:
            raise EvalError(f"{where}{self.option}: {error}") from None
        if self.choices and value not in self.choices:
            raise EvalError(f"{where}{self.option} must be one of {', '.join(map(str, self.choices))}, not {value!r}")
        if self.minimum is not None and value < self.minimum:
            raise EvalError(f"{where}{self.option} must be at least {self.minimum:g}, not {value}")
        if self.maximum is not None and value > self.maximum:
            raise EvalError(f"{where}{self.option} must be at most {self.maximum:g}, not {value}")
        return value


def _convert(kind: type, value: Any) -> Any:
    """``value`` as ``kind``: what a command line, a YAML ``-T`` argument or a Python caller may give."""
    import math
    from pathlib import Path

    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "yes", "no", "1", "0"):
            return value.lower() in ("true", "yes", "1")
        raise ValueError(f"takes true or false, not {value!r}")
    if kind in (int, float):
        if isinstance(value, bool):
            raise ValueError(f"takes a number, not {value!r}")
        try:
            number = kind(value) if isinstance(value, (str, int, float)) else None
        except ValueError:
            number = None
        if number is None or (kind is int and isinstance(value, float) and value != number) or not math.isfinite(number):
            raise ValueError(f"takes {'an integer' if kind is int else 'a finite number'}, not {value!r}")
        return number
    if kind is Path:
        return str(value) if isinstance(value, (str, Path)) else _wrong(value, "a path")
    if kind is str:
        return value if isinstance(value, str) else _wrong(value, "text")
    return value


def _wrong(value: Any, what: str):
    raise ValueError(f"takes {what}, not {value!r}")


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
    reply_parser: str = ""
    testing: str = ""
    held_out_splits: tuple[str, ...] = HELD_OUT_SPLITS
    column_notes: Mapping[str, str] = field(default_factory=dict)
    options: tuple[Option, ...] = ()

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

    def options_for(self, command: str) -> dict[str, Option]:
        """Name -> :class:`Option` of every option the family takes for ``command`` (:data:`COMMANDS`)."""
        if command not in COMMANDS:
            raise UnknownNameError("command", command, COMMANDS)
        return {option.name: option for option in self.options if command in option.commands}

    def check_options(self, command: str, values: Mapping[str, Any], config: str = "") -> dict[str, Any]:
        """The options given in ``values`` (None: not given) that the family takes for ``command``, each
        checked and converted (:meth:`Option.check`); a clear error for an option it does not take,
        naming the families that do."""
        from cogen.errors import EvalError

        declared = self.options_for(command)
        given = {}
        for name, value in values.items():
            if value is None:
                continue
            if name not in declared:
                users = [f.title for f in FAMILIES.values() if name in f.options_for(command)]
                flag = next((o.option for f in FAMILIES.values() for o in f.options if o.name == name),
                            "--" + name.replace("_", "-"))
                where = f" configs such as {config}" if config else " configs"
                raise EvalError(f"option {flag} does not apply to {self.title}{where}"
                                + (f"; it applies to {', '.join(users)} configs" if users else ""))
            given[name] = declared[name].check(value)
        return given


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


def family(name: str | None, where: str | None = None) -> Family:
    """The record of family ``name`` (``None``: the default family); a clear error for an unknown one."""
    name = DEFAULT_FAMILY if name is None else name
    if name not in FAMILIES:
        raise UnknownNameError("family", str(name), FAMILIES, where=where)
    return FAMILIES[name]
