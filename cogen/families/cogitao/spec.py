"""Parse and check a COGITAO-style spec file (``family: cogitao``) into a :class:`Setting`.

Layout (every size knob a ``[lo, hi]`` range; unknown keys are errors)::

    setting: C1                 # name of the experiment setting
    seed: 1                     # base seed; every sample derives its own stream from it
    shift: composition          # what changes out of domain: composition (held-out sequences,
                                # checked disjoint) or environment (same sequences, other grids/objects)
    version: 1                  # dataset version, recorded in manifests and the card
    variant: paper-text         # which reading of the paper: paper-text, as-run (the authors' code) or custom
    degenerate: reject          # reject (default) or keep samples whose output equals their input
    output: {frames: true}      # optional columns: frames (every intermediate grid) and actions (each
                                # step's transformation); object_frames: true adds each object's box
                                # and tight array at every step (object_boxes, object_grids) and
                                # actions; also per experiment
    render: {size: 128}         # optional: also input_image and output_image, the grids drawn as images
                                # (size, background: white|black, palette: arc, resample: nearest|bilinear,
                                # blur: Gaussian sigma, format: png|jpeg); also per experiment (false: off)
    balance: difficulty         # difficulty (default): each sample draws its object count (and, out of
                                # domain where the experiment shifts object sizes, each object's height)
                                # once and keeps them through its retries; count: the count only;
                                # none: every attempt redraws them
    defaults:                   # optional; experiments and domains override per key
      grid: {height: [20, 20], width: [20, 20]}
      objects: {count: [2, 2], where: {is_shape_fully_connected: true, rows: [1, 5], cols: [1, 5]}}
      sizes: {train: 100000, validation: 1000, test: 1000, validation_ood: 1000, test_ood: 1000}
    experiments:
      C1-1:
        in_domain:              # sampled for train / validation / test
          sequences: [[translate_up], [rot90], [translate_up, rot90]]
        out_of_domain:          # optional; sampled for validation_ood / test_ood
          pool: [translate_up, rot90]       # or: every sequence over a pool ...
          depth: [3, 3]                     # ... with a length in this range
          exclude: [[rot90, rot90, rot90]]  # ... minus these

Checks that need the object bank and the transformation registry (names, empty object pools,
objects that cannot fit, held-out sequences that leak into training) run here too, so a
bad spec fails before any sample is drawn, with the file, line and field of the problem.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from typing import Any

from cogen.errors import SpecError, UnknownNameError
from cogen.families.cogitao.schema import (
    BALANCE,
    DEGENERATE,
    OOD_SPLITS,
    OUTPUTS,
    PAPER_SIZES,
    SHIFTS,
    SPLITS,
    VARIANTS,
    Domain,
    Experiment,
    Grid,
    ObjectFilter,
    SequenceSet,
    Setting,
)
from cogen.kit.spec import (
    Located,
    Path_,
    expect_keys,
    read_choice,
    read_int,
    read_list,
    read_mapping,
    read_name,
    read_range,
    read_str,
)
from cogen.render import RenderSettings

__all__ = ["always_identity", "max_objects_on_grid", "object_query", "parse", "shared_sequences"]

MAX_GRID = 60
MAX_OBJECTS = 60
MAX_DEPTH = 8
MAX_SIZE = 100_000_000

_TOP_REQUIRED = ("setting", "seed", "experiments")
_SAMPLING_KEYS = ("degenerate", "balance")
_TOP_OPTIONAL = ("family", "version", "description", "defaults", "shift", "variant", "output", "render",
                 *_SAMPLING_KEYS)
_LAYOUT_KEYS = ("grid", "objects")
_EXPERIMENT_KEYS = ("in_domain", "out_of_domain", "sizes", "description", "shift", "output", "render",
                    *_SAMPLING_KEYS,
                    *_LAYOUT_KEYS)
_MEANINGS = {
    "degenerate": "reject: redraw a sample whose output equals its input; keep: allow it",
    "balance": "difficulty: draw each sample's object count (and, out of domain where the experiment shifts "
               "object sizes, each object's height) once and keep them through its retries; count: the count "
               "only; none: redraw them with every attempt",
}
_CHOICES = {"degenerate": DEGENERATE, "balance": BALANCE}
_DOMAIN_KEYS = ("sequences", "pool", "depth", "exclude", *_LAYOUT_KEYS)


@dataclass
class _Layout:
    """Grid and object settings found at one level (defaults, experiment or domain), with paths."""

    values: dict[str, Any]
    paths: dict[str, Path_]

    def over(self, base: _Layout) -> _Layout:
        return _Layout({**base.values, **self.values}, {**base.paths, **self.paths})


def parse(doc: Located) -> Setting:
    """Validate the document into a :class:`Setting`, checking it against bank and registry."""
    top = expect_keys(doc, (), doc.data, _TOP_REQUIRED, _TOP_OPTIONAL)
    defaults_doc = expect_keys(doc, ("defaults",), top.get("defaults", {}), (), (*_LAYOUT_KEYS, "sizes"))
    defaults = _read_layout(doc, ("defaults",), defaults_doc)
    default_sizes = _read_sizes(doc, ("defaults", "sizes"), defaults_doc.get("sizes", {}), PAPER_SIZES)
    experiments_doc = read_mapping(doc, ("experiments",), top["experiments"])
    if not experiments_doc:
        raise SpecError("no experiments", where=doc.where(("experiments",)), fix="add at least one experiment")
    shift = _read_shift(doc, ("shift",), top.get("shift", "composition"))
    sampling = {key: _read_sampling(doc, (key,), top.get(key, _CHOICES[key][0]), key) for key in _SAMPLING_KEYS}
    sampling["output"] = _read_output(doc, ("output",), top.get("output", {}), {})
    sampling["render"] = _read_render(doc, ("render",), top["render"], None) if "render" in top else None
    experiments = tuple(
        _read_experiment(doc, ("experiments", name), name, value, defaults, default_sizes, shift, sampling)
        for name, value in experiments_doc.items()
    )
    return Setting(
        name=read_name(doc, ("setting",), top["setting"], "setting"),
        family="cogitao",
        version=read_int(doc, ("version",), top.get("version", 1), minimum=0),
        seed=read_int(doc, ("seed",), top["seed"], minimum=0, maximum=2**63 - 1),
        experiments=experiments,
        description=str(top.get("description", "")).strip(),
        source=doc.source,
        variant=read_choice(doc, ("variant",), top.get("variant", "custom"), VARIANTS,
                            "paper-text: the paper's words; as-run: the authors' code; custom: neither"),
    )


def _read_sampling(doc, path, value, key: str) -> str:
    return read_choice(doc, path, value, _CHOICES[key], _MEANINGS[key])


def _read_shift(doc, path, value) -> str:
    if value not in SHIFTS:
        raise SpecError(f"unknown shift {value!r}", where=doc.where(path),
                        fix="use `composition` (held-out sequences) or `environment` (same sequences, other grids/objects)")
    return value


def _read_experiment(doc, path, name, value, defaults: _Layout, default_sizes, shift: str, sampling) -> Experiment:
    read_name(doc, path, name, "experiment")
    body = expect_keys(doc, path, value, ("in_domain",), _EXPERIMENT_KEYS[1:])
    shift = _read_shift(doc, (*path, "shift"), body.get("shift", shift))
    output = _read_output(doc, (*path, "output"), body.get("output", {}), sampling["output"])
    render = _read_render(doc, (*path, "render"), body["render"], sampling["render"]) if "render" in body \
        else sampling["render"]
    sampling = {key: _read_sampling(doc, (*path, key), body.get(key, sampling[key]), key) for key in _SAMPLING_KEYS}
    layout = _read_layout(doc, path, body).over(defaults)
    in_domain = _read_domain(doc, (*path, "in_domain"), body["in_domain"], layout, sampling)
    out_of_domain = None
    if "out_of_domain" in body:
        out_of_domain = _read_domain(doc, (*path, "out_of_domain"), body["out_of_domain"], layout, sampling)
        if sampling["balance"] == "difficulty" and shift == "environment" and _sizes(in_domain) != _sizes(out_of_domain):
            out_of_domain = replace(out_of_domain, balance=(*out_of_domain.balance, "size"))
        if shift == "composition":
            _check_no_leak(doc, (*path, "out_of_domain"), in_domain.sequences, out_of_domain.sequences)
        elif (in_domain.grid, in_domain.objects) == (out_of_domain.grid, out_of_domain.objects):
            raise SpecError("shift is `environment` but out_of_domain has the same grid and objects as in_domain",
                            where=doc.where((*path, "out_of_domain")),
                            fix="change the grid, object count or object filter out of domain")
    sizes = _read_sizes(doc, (*path, "sizes"), body.get("sizes", {}), default_sizes)
    own_sizes = body.get("sizes", {})
    if out_of_domain is None:
        stray = [s for s in OOD_SPLITS if s in own_sizes]
        if stray:
            raise SpecError(f"sizes for {', '.join(stray)} but the experiment has no out_of_domain part",
                            where=doc.where((*path, "sizes", stray[0])), fix="add out_of_domain: or drop these sizes")
        sizes = {s: n for s, n in sizes.items() if s not in OOD_SPLITS}
    experiment = Experiment(name=str(name), in_domain=in_domain, out_of_domain=out_of_domain,
                            sizes=tuple((s, sizes[s]) for s in SPLITS if s in sizes),
                            description=str(body.get("description", "")).strip(), shift=shift,
                            output=tuple(key for key in OUTPUTS if output.get(key)), render=render)
    if render is not None:
        for domain, part in ((in_domain, "in_domain"), (out_of_domain, "out_of_domain")):
            if domain is not None and render.size < max(domain.grid.height.hi, domain.grid.width.hi):
                where = (*path, "render") if "render" in body else ("render",)
                raise SpecError(f"render size {render.size} is smaller than the {part} grids (up to "
                                f"{domain.grid.height.hi}x{domain.grid.width.hi}): fewer than one pixel per cell",
                                where=doc.where(where),
                                fix=f"use render.size >= {max(domain.grid.height.hi, domain.grid.width.hi)}")
    return experiment


def _read_render(doc, path, value, inherited: RenderSettings | None) -> RenderSettings | None:
    """``render: {size: 128, background: white, palette: arc, resample: nearest, blur: 0, format: png}``
    (every key optional, over the spec-level choice); ``render: false`` turns it off."""
    from dataclasses import fields

    from cogen.render import BACKGROUNDS, FORMATS, PALETTES, RESAMPLING

    if value is False:
        return None
    mapping = expect_keys(doc, path, value, (), [f.name for f in fields(RenderSettings)])
    settings = inherited or RenderSettings()
    changes: dict[str, Any] = {}
    for key, choices in (("background", BACKGROUNDS), ("palette", PALETTES), ("resample", RESAMPLING),
                         ("format", FORMATS)):
        if key in mapping:
            changes[key] = read_choice(doc, (*path, key), mapping[key], choices)
    if "size" in mapping:
        changes["size"] = read_int(doc, (*path, "size"), mapping["size"], minimum=1, maximum=4096)
    if "blur" in mapping:
        blur = mapping["blur"]
        if isinstance(blur, bool) or not isinstance(blur, (int, float)) or not 0 <= blur <= 64:
            raise SpecError(f"render.blur must be a number from 0 to 64 (the Gaussian sigma in pixels), got {blur!r}",
                            where=doc.where((*path, "blur")), fix="use 0 for crisp cells (decodable exactly)")
        changes["blur"] = float(blur)
    return replace(settings, **changes)


def _read_output(doc, path, value, inherited: dict[str, bool]) -> dict[str, bool]:
    """``output: {frames: true, object_frames: true}``: which optional columns to write, over the spec-level choice.
    (One config's splits share their columns, so domains take it from their experiment.)"""
    mapping = expect_keys(doc, path, value, (), OUTPUTS)
    chosen = dict(inherited)
    for key, flag in mapping.items():
        if not isinstance(flag, bool):
            raise SpecError(f"output.{key} must be true or false, got {flag!r}", where=doc.where((*path, key)),
                            fix=f"write `{key}: true` to add the column(s), `{key}: false` to leave them out")
        chosen[key] = flag
    return chosen


def _read_sizes(doc, path, value, base: dict[str, int]) -> dict[str, int]:
    mapping = expect_keys(doc, path, value, (), SPLITS)
    sizes = dict(base)
    for split, n in mapping.items():
        sizes[split] = read_int(doc, (*path, split), n, minimum=1, maximum=MAX_SIZE)
    return sizes


def _read_layout(doc, path, body) -> _Layout:
    values: dict[str, Any] = {}
    paths: dict[str, Path_] = {}
    if "grid" in body:
        grid = expect_keys(doc, (*path, "grid"), body["grid"], (), ("height", "width"))
        for key in grid:
            values[key] = read_range(doc, (*path, "grid", key), grid[key], 1, MAX_GRID)
            paths[key] = (*path, "grid", key)
    if "objects" in body:
        objects = expect_keys(doc, (*path, "objects"), body["objects"], (), ("count", "where"))
        if "count" in objects:
            values["count"] = read_range(doc, (*path, "objects", "count"), objects["count"], 1, MAX_OBJECTS)
            paths["count"] = (*path, "objects", "count")
        if "where" in objects:
            values["where"] = _read_where(doc, (*path, "objects", "where"), objects["where"])
            paths["where"] = (*path, "objects", "where")
    return _Layout(values, paths)


def _read_where(doc, path, value) -> tuple[tuple[str, Any], ...]:
    from cogen.bank import load_bank

    bank = load_bank()
    where = []
    for name, condition in read_mapping(doc, path, value).items():
        if name not in bank.column_names:
            raise UnknownNameError("object property", name, bank.column_names, where=doc.where((*path, name)))
        column = bank.column(name)
        if column.dtype == bool:
            if not isinstance(condition, bool):
                raise SpecError(f"{name} is a yes/no property; expected true or false", where=doc.where((*path, name)))
            where.append((name, condition))
        else:
            where.append((name, read_range(doc, (*path, name), condition, 0, 10_000)))
    return tuple(sorted(where))


def _sizes(domain: Domain) -> tuple:
    """The object-size filter of a domain (its ``rows`` and ``cols`` ranges; None where absent)."""
    where = dict(domain.objects.where)
    return where.get("rows"), where.get("cols")


def _read_domain(doc, path, value, inherited: _Layout, sampling: dict[str, str]) -> Domain:
    body = expect_keys(doc, path, value, (), _DOMAIN_KEYS)
    sequences = _read_sequences(doc, path, body)
    layout = _read_layout(doc, path, body).over(inherited)
    for key, where in (("height", "grid"), ("width", "grid"), ("count", "objects")):
        if key not in layout.values:
            raise SpecError(f"no {where}.{key} given here, in the experiment or in defaults", where=doc.where(path),
                            fix=f"add `{where}: {{{key}: [lo, hi]}}` to defaults")
    count = layout.values["count"]
    balanced_count = sampling["balance"] in ("difficulty", "count") and count.lo < count.hi
    domain = Domain(sequences=sequences,
                    grid=Grid(layout.values["height"], layout.values["width"]),
                    objects=ObjectFilter(count, layout.values.get("where", ())),
                    degenerate=sampling["degenerate"], balance=("count",) if balanced_count else ())
    _check_feasible(doc, path, domain, layout)
    if domain.degenerate == "reject":
        _check_not_identity(doc, path, sequences)
    return domain


def _check_not_identity(doc, path, sequences: SequenceSet) -> None:
    """Under ``degenerate: reject`` a listed sequence that is always the identity could never give a sample."""
    for i, sequence in enumerate(sequences.sequences):
        if always_identity(sequence):
            raise SpecError(f"{list(sequence)} is the identity: every sample would equal its input, and "
                            "`degenerate: reject` (the default) rejects such samples",
                            where=doc.where((*path, "sequences", i)),
                            fix="drop the sequence, or set `degenerate: keep` to allow samples whose output equals "
                                "their input")


def always_identity(sequence) -> bool:
    """True when the registry's algebra reduces ``sequence`` to nothing: a step followed by the one
    that undoes it (``mirror_horizontal`` twice, ``pad_shape`` then ``crop_contours``), or ``order``
    repeats of one transformation (``rot90`` four times)."""
    from cogen.engine import resolve

    stack: list[str] = []
    for name in sequence:
        stack.append(resolve(name).name)
        while stack:
            if len(stack) >= 2 and resolve(stack[-2]).undone_by == stack[-1]:
                del stack[-2:]
                continue
            order = resolve(stack[-1]).order
            if order is not None and len(stack) >= order and len(set(stack[-order:])) == 1:
                del stack[-order:]
                continue
            break
    return not stack


def _read_sequences(doc, path, body) -> SequenceSet:
    from cogen.engine import resolve

    def names(item_path, value) -> tuple[str, ...]:
        items = read_list(doc, item_path, value)
        if len(items) > MAX_DEPTH:
            raise SpecError(f"sequence of length {len(items)}; the maximum depth is {MAX_DEPTH}", where=doc.where(item_path))
        out = []
        for i, name in enumerate(items):
            try:
                out.append(resolve(read_str(doc, (*item_path, i), name)).name)
            except UnknownNameError as error:
                from cogen.engine import TRANSFORMS

                raise UnknownNameError("transformation", name, TRANSFORMS, where=doc.where((*item_path, i))) from error
        return tuple(out)

    if ("sequences" in body) == ("pool" in body):
        raise SpecError("give either `sequences:` (a list of ordered sequences) or `pool:` with `depth:`",
                        where=doc.where(path), fix="e.g. sequences: [[translate_up], [rot90, mirror_horizontal]]")
    if "sequences" in body:
        for key in ("depth", "exclude"):
            if key in body:
                raise SpecError(f"`{key}:` only goes with `pool:`", where=doc.where((*path, key)))
        seq_path = (*path, "sequences")
        sequences = tuple(names((*seq_path, i), s) for i, s in enumerate(read_list(doc, seq_path, body["sequences"])))
        _check_unique(doc, seq_path, sequences)
        return SequenceSet(sequences=sequences)
    if "depth" not in body:
        raise SpecError("`pool:` needs `depth: [lo, hi]`", where=doc.where((*path, "pool")))
    pool = names((*path, "pool"), body["pool"])
    _check_unique(doc, (*path, "pool"), pool)
    exclude_path = (*path, "exclude")
    exclude = tuple(names((*exclude_path, i), s)
                    for i, s in enumerate(read_list(doc, exclude_path, body.get("exclude", []), non_empty=False)))
    sequence_set = SequenceSet(pool=pool, depth=read_range(doc, (*path, "depth"), body["depth"], 1, MAX_DEPTH),
                               exclude=exclude)
    if sequence_set.count() <= 0:
        raise SpecError("`exclude:` removes every sequence of the pool", where=doc.where(exclude_path))
    return sequence_set


def _check_unique(doc, path, items) -> None:
    seen = set()
    for i, item in enumerate(items):
        if item in seen:
            raise SpecError(f"{list(item) if isinstance(item, tuple) else item!r} is listed twice",
                            where=doc.where((*path, i)), fix="remove the repeat")
        seen.add(item)


def _check_no_leak(doc, path, in_domain: SequenceSet, out_of_domain: SequenceSet) -> None:
    """No held-out (out-of-domain) sequence may also be an in-domain sequence."""
    leaked = shared_sequences(in_domain, out_of_domain)
    if leaked:
        example = list(leaked[0])
        if out_of_domain.explicit:
            index = out_of_domain.sequences.index(leaked[0])
            where = doc.where((*path, "sequences", index))
        else:
            where = doc.where(path)
        raise SpecError(f"held-out sequence {example} is also an in-domain sequence ({len(leaked)} shared sequence(s) found)",
                        where=where, fix="remove it from in_domain (or exclude it from the in-domain pool)")


def shared_sequences(a: SequenceSet, b: SequenceSet, limit: int = 1000) -> list[tuple[str, ...]]:
    """Up to ``limit`` sequences that belong to both sets."""
    if a.explicit or b.explicit:
        listed, other = (a, b) if a.explicit else (b, a)
        return [s for s in listed.sequences if s in other][:limit]
    common = [t for t in a.pool if t in b.pool]
    depths = range(max(a.depth.lo, b.depth.lo), min(a.depth.hi, b.depth.hi) + 1)
    candidates = (s for d in depths for s in itertools.product(common, repeat=d))
    # Only excluded sequences can be skipped, so this stops after at most len(exclusions) + limit steps.
    return list(itertools.islice((s for s in candidates if s in a and s in b), limit))


def max_objects_on_grid(height: int, width: int) -> int:
    """Most objects that fit with an empty cell between any two (one pixel each, every other cell)."""
    return math.ceil(height / 2) * math.ceil(width / 2)


def _check_feasible(doc, path, domain: Domain, layout: _Layout) -> None:
    """Fail on specs that can never produce a sample: empty object pools, objects that cannot fit."""
    from cogen.bank import load_bank

    bank = load_bank()
    count, grid = domain.objects.count, domain.grid
    fit = max_objects_on_grid(grid.height.hi, grid.width.hi)
    if count.lo > fit:
        raise SpecError(
            f"{count.lo} objects cannot fit on a {grid.height.hi}x{grid.width.hi} grid with an empty cell between "
            f"objects (at most {fit})", where=doc.where(layout.paths["count"]),
            fix=f"lower objects.count to at most {fit} or enlarge the grid")
    if "count" in domain.balance and count.hi > fit:
        raise SpecError(
            f"{count.hi} objects cannot fit on a {grid.height.hi}x{grid.width.hi} grid with an empty cell between "
            f"objects (at most {fit}), and a balanced object count gives every count of [{count.lo}, {count.hi}] "
            "its share of samples", where=doc.where(layout.paths["count"]),
            fix=f"lower objects.count to at most {fit}, enlarge the grid, or set `balance: none`")
    where_path = layout.paths.get("where", path)
    if len(bank.select(domain.objects.query())) == 0:
        raise SpecError(f"no object of the bank ({len(bank)} objects) satisfies objects.where",
                        where=doc.where(where_path), fix="relax the filter (see `cogen objects info`)")
    # Explicit sequences: the union of their steps' preconditions; pools: each transformation alone.
    groups = domain.sequences.sequences if domain.sequences.explicit else [(t,) for t in domain.sequences.transforms()]
    for sequence in groups:
        query = object_query(domain.objects, sequence)
        ids = bank.select(query) if query is not None else ()
        label = " -> ".join(sequence)
        if len(ids) == 0:
            raise SpecError(f"no object satisfies objects.where and the preconditions of {label} "
                            f"({_preconditions_text(sequence)})", where=doc.where(where_path),
                            fix=f"relax objects.where or drop {label} from this domain")
        shapes = bank.shapes[ids]
        if shapes[:, 0].min() > grid.height.hi or shapes[:, 1].min() > grid.width.hi:
            raise SpecError(f"every object usable with {label} is larger than the grid",
                            where=doc.where(layout.paths.get("height", path)),
                            fix="enlarge the grid or filter smaller objects")


def object_query(objects: ObjectFilter, sequence) -> dict[str, Any] | None:
    """The bank query for objects usable with ``sequence``: the filter plus every step's
    preconditions (checked on the initial object); ``None`` when they contradict each other."""
    from cogen.engine import resolve

    query = objects.query()
    for name in sequence:
        for prop, required in resolve(name).preconditions:
            if query.get(prop, required) != required:
                return None
            query[prop] = required
    return query


def _preconditions_text(sequence) -> str:
    from cogen.engine import resolve

    needs = {f"{p}={v}" for name in sequence for p, v in resolve(name).preconditions}
    return ", ".join(sorted(needs)) or "none"
