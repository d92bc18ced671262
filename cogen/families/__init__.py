"""The families of tasks cogen makes: one frozen :class:`Family` record each, in one read-only mapping.

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
``exporter``       optional: a module for ``cogen export`` (:mod:`cogen.export`): ``FORMATS`` (formats
                   only its configs take), ``COLUMN_VIEWS`` (its ``--columns`` views) and, when its
                   rows make ARC tasks, ``arc_tasks(source, split, **options) -> Iterator[ArcTask]``
=================  ====================================================================

Plain fields hold what must be known without importing the family: its ``title`` and
``description``, a note per column (``column_notes``), and the help text of each family option of
``cogen eval`` (``eval_help``) and ``cogen prompts export`` (``prompt_help``), which
:func:`option_help` puts together for the command line.

Callables are named ``"module:attribute"`` (or a module alone) and resolved on first use by
:meth:`Family.load`, the one place that turns a name into code. That keeps this module at the
bottom of the import graph, so every layer may read the registry, and keeps ``import cogen``
light. ``tests/test_families.py`` resolves every name and builds, verifies, scores and prompts a
tiny spec of every family.

Adding a family means adding one record here and the modules it names (see
``docs/architecture.md``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from cogen.errors import UnknownNameError

if TYPE_CHECKING:
    from pathlib import Path

    from cogen.folder import SplitData

__all__ = ["DEFAULT_FAMILY", "FAMILIES", "OPTIONAL_ROLES", "ROLES", "Builder", "Evaluator", "Family", "Setting", "family",
           "option_help"]

#: Roles every family record names, each resolved by :meth:`Family.load`.
ROLES = ("spec_parser", "builder", "shard_writer", "checks", "evaluator", "prompts", "card", "viewer")
#: Roles a family may leave empty (it has no such thing): :meth:`Family.load` gives None for them.
OPTIONAL_ROLES = ("stream", "report", "exporter")
#: The family of a spec file without a ``family:`` key, and of a manifest without one.
DEFAULT_FAMILY = "cogitao"


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
    them (``cogen verify --regenerate``).
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


_ID_NOTE = {"id": "stable sample id: config, split and index"}

FAMILIES: Mapping[str, Family] = MappingProxyType({
    "cogitao": Family(
        name="cogitao",
        title="COGITAO",
        description="sequences of object transformations applied to grids of bank objects",
        spec_parser="cogen.families.cogitao.spec:parse",
        builder="cogen.families.cogitao.build:CogitaoBuilder",
        shard_writer="cogen.families.cogitao.build:shard_tables",
        checks="cogen.families.cogitao.checks:checks",
        evaluator="cogen.families.cogitao.evaluate",
        prompts="cogen.families.cogitao.prompts:cogitao_split_prompts",
        card="cogen.families.cogitao.card:CARD",
        viewer="cogen.families.cogitao.view",
        stream="cogen.families.cogitao.stream:stream_source",
        exporter="cogen.families.cogitao.export",
        column_notes=MappingProxyType({
            **_ID_NOTE,
            "input": "input grid, true height x width, colours 0-9 (0 = background)",
            "output": "output grid after the transformations, true height x width",
            "transformations": "the transformation sequence, applied in order (names of the table below)",
            "n_objects": "number of objects on the input grid",
            "object_ids": "object-bank ids of the objects, in placement order",
            "object_positions": "top-left (row, col) of each object on the input grid",
            "frames": "sequential builds (`output: {frames: true}`): depth + 1 whole grids, the input then the grid "
                      "after each step, exactly the frames the sampler checked",
            "actions": "sequential builds: the transformation that makes each frame from the one before",
            "object_boxes": "object-frame builds (`output: {object_frames: true}`): per object (in `object_ids` order), "
                            "per step (0 = input ... depth = output), its box (row, col, height, width) on the grid",
            "object_grids": "object-frame builds: per object, per step, its tight height x width array (0 = background, "
                            "so its mask is `!= 0`), exactly the objects the sampler checked; drawn at their boxes "
                            "they make the frames",
            "input_image": "RGB builds (`render:`): the input drawn as an image (PNG or JPEG; `datasets.Image`); "
                           "`cogen.render.to_grid` reads it back",
            "output_image": "RGB builds (`render:`): the output drawn as an image",
        }),
        eval_help=MappingProxyType({
            "pad": "fixed HxW of the padded per-pixel accuracy; default the experiment's largest grid.",
            "stubbornness": "compute stubbornness (OOD splits of composition experiments; default on).",
        }),
        prompt_help=MappingProxyType({
            "regime": "task codes, explicit (names) or coded (t1, t2, ...); default explicit.",
            "examples": "in-context examples per prompt (from train); default 5.",
            "seed": "seed of the in-context example draw and of --per-experiment sampling; "
                    "default 0, 42 with --selection paper.",
            "selection": "the paper's selection and sampling of App. C.",
            "per_experiment": "prompts per config (the paper: 10, seed 42); default every row, "
                              "10 with --selection paper.",
        }),
    ),
    "carc": Family(
        name="carc",
        title="Compositional-ARC",
        description="visual-grammar episodes: study examples, then queries of a level-2 composition",
        spec_parser="cogen.families.carc.spec:parse",
        builder="cogen.families.carc.build:CarcBuilder",
        shard_writer="cogen.families.carc.build:shard_tables",
        checks="cogen.families.carc.checks:checks",
        evaluator="cogen.families.carc.evaluate",
        prompts="cogen.families.carc.prompts:carc_split_prompts",
        card="cogen.families.carc.card:CARD",
        viewer="cogen.families.carc.view",
        exporter="cogen.families.carc.export",
        column_notes=MappingProxyType({
            **_ID_NOTE,
            "episode": "index of the episode in the generated pool",
            "study_inputs": "study examples: input grids (10x10 each)",
            "study_outputs": "study examples: output grids",
            "study_roles": "what each study example shows (shape, color, neighbor, shape+color, ...)",
            "query_inputs": "queries: input grids, to be solved with the level-2 composition",
            "query_outputs": "queries: target grids",
            "query_roles": "what each query asks for",
            "shot_inputs": "level-2 examples (inputs) that the 3-shot configs use as study examples",
            "shot_outputs": "level-2 examples (outputs)",
            "triplet": "the episode's transformation triplet",
            "transformations": "the transformations of the shape, colour and neighbour roles",
            "transformation_kwargs": "their parameters (JSON)",
            "rotation_type_8": "what rotation_type 8 does in this dataset: counter-clockwise (the paper) or "
                               "clockwise (the public code)",
            "shape_indicator": "cells of the shape indicator, from its top-left corner",
            "color_indicator": "the colour indicator",
            "neighbor_indicator": "cells of the neighbour indicator on the grid",
            "neighbor_color": "colour of the neighbour indicator",
        }),
        eval_help=MappingProxyType({
            "queries": "score all queries of each episode, or only the first (the paper's LLM protocol); "
                       "default all.",
        }),
        prompt_help=MappingProxyType({
            "queries": "first query of each episode, or all; default first.",
            "selection": "one query per episode.",
            "images": "draw each prompt's study pairs and query into a PNG in this folder (text+image prompts); "
                      "the record names it under 'image'.",
            "no_code": "add the paper's 'Do not generate any code to solve the task' line.",
        }),
    ),
    "programs": Family(
        name="programs",
        title="String-to-grid programs",
        description="string-to-grid functions whose 16 pairs a model explains with a program (seed 003)",
        spec_parser="cogen.families.programs.spec:parse",
        builder="cogen.families.programs.build:ProgramsBuilder",
        shard_writer="cogen.families.programs.build:shard_tables",
        checks="cogen.families.programs.checks:checks",
        evaluator="cogen.families.programs.evaluate",
        prompts="cogen.families.programs.prompts:split_prompts",
        card="cogen.families.programs.card:CARD",
        viewer="cogen.families.programs.view",
        report="cogen.families.programs.evaluate:evaluate_table",
        report_help="Score program replies against every string-to-grid config their ids name: the paper's Tables 1 "
                    "and 2. Programs run confined by the kernel (bubblewrap); without it this refuses to run them.",
        column_notes=MappingProxyType({
            **_ID_NOTE,
            "setting": "how the letters' cells are laid out (horizontal, block, vertical, random, random_index, "
                       "horizontal_random)",
            "inputs": "the 16 input strings (A/B, C/D, E/F, G/H), in lexicographic order",
            "outputs": "the output grid of each input: 4 lines of 4 '.'/'*' joined by newlines",
            "cell_groups": "the 4x4 grid of the character (0-3) that controls each cell",
            "patterns": "what each character's first letter writes on its 4 cells, row-major (the second letter "
                        "writes the complement)",
            "character_rows": "the row each character controls (Random Index: the permutation; Horizontal+Random: "
                              "the two kept rows), -1 for none",
            "sample_inputs": "each input as a 1x4 grid: 0 where a character is its first letter, 1 the second",
            "sample_outputs": "each output as a 4x4 grid: 0 for '.', 1 for '*'",
        }),
        eval_help=MappingProxyType({
            "predictions": "program replies (JSONL: id, reply, model, prompt_version).",
            "timeout": "CPU seconds a program may use for all 16 inputs; default 2.",
            "memory_mb": "address space a program may use, in MB; default 256.",
            "workers": "sandbox processes running programs in parallel; default one per core.",
            "low_length": "L(P+) at or below this is low (T1/T3); default (L_s + L_z) / 2 = 180.",
            "low_errors": "E at or below this is low (T1/T2); default d / 4 = 4.",
            "explain": "print each combination and output value counted, with its source line.",
            "markdown": "also write the paper's Tables 1 and 2 (L(P+) | E | C(P) per setting, n_valid) as Markdown.",
            "unsafe": "run the programs without kernel isolation, where bubblewrap is unavailable: they can then "
                      "read and change your files. Only for programs you trust.",
        }),
    ),
})


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
