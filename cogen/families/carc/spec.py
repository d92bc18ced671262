"""Parse and check a Compositional-ARC spec file (``family: carc``) into a :class:`CarcSetting`.

Layout (unknown keys are errors, reported with file, line and field)::

    setting: carc               # prefix of every config name (carc-episodes, carc-systematicity-1860, ...)
    family: carc
    version: 1
    seed: 1860                  # generation seed of the episode pool
    episodes: 100000            # size of the episode pool (the paper's 100,000)
    transformations:            # the five types, in this order, with the kwarg values to draw from
      translation: {direction: [x, y], step_size: [1]}
      mirror: {direction: [x, y]}
      rotation: {rotation_type: [0, 8]}
      set_color: {new_color: [1, 2]}
      grow: {direction: [-x, -y]}
    rotation: paper             # paper: rotation_type 8 is counter-clockwise; reference: 8 == 0 (clockwise)
    degenerate: reject          # reject (default) or keep examples whose output equals the input
    queries: reference          # reference (default): the public generator's distribution of S, N and positions;
                                # distinct: level-2 positions without replacement, study examples never repeat
    shape_size: [1, 9]          # requested cells of random-walk shapes (optional)
    layout: {primitives: 2, compositions: 2, queries: 10, shots: 3}   # optional
    split:                      # optional: the systematicity-aware splits of the pool
      seeds: [1860, 1870, 1880, 1890]
      held_out: 2               # triplets held out of training (20 % of 10)
      min_label_count: 5000     # evaluation episodes need this many training uses of each variant
      configs: [systematicity, 3shot]
    static: {seed: 1860, primitives: 4, compositions: 4, queries: 14}   # optional fixed-grammar variant
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

from cogen.carc.grammar import KWARGS, QUERY_MODES, ROTATION_MODES, TRANSFORMATIONS, Variant, expand_variants
from cogen.carc.layout import Layout, StaticSpec
from cogen.errors import SpecError, UnknownNameError
from cogen.kit.spec import Located, Range, expect_keys, read_int, read_list, read_name, read_range

__all__ = ["CONFIG_KINDS", "CarcConfig", "CarcSetting", "SplitSpec", "parse", "setting_from_dict"]

CONFIG_KINDS = ("episodes", "systematicity", "3shot", "static")
DEGENERATE = ("reject", "keep")
MAX_EPISODES = 100_000_000
MAX_VARIANTS = 64  # the grammar key keeps 6 bits per role variant

_TOP_REQUIRED = ("setting", "family", "seed", "episodes", "transformations")
_TOP_OPTIONAL = ("version", "description", "rotation", "degenerate", "queries", "shape_size", "layout", "split",
                 "static")


@dataclass(frozen=True)
class SplitSpec:
    """The systematicity-aware splits: one per seed and per config kind."""

    seeds: tuple[int, ...] = (1860, 1870, 1880, 1890)
    held_out: int = 2
    min_label_count: int = 5000
    configs: tuple[str, ...] = ("systematicity", "3shot")


@dataclass(frozen=True)
class CarcConfig:
    """One config of the published dataset; ``sizes`` lists the split sizes known before building."""

    name: str
    kind: str
    split_seed: int | None = None
    sizes: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class CarcSetting:
    """A Compositional-ARC spec: the episode pool and the configs derived from it."""

    name: str
    version: int
    seed: int
    episodes: int
    transformations: tuple[tuple[str, tuple[tuple[str, tuple], ...]], ...]
    rotation: str = "paper"
    degenerate: str = "reject"
    queries: str = "reference"
    shape_size: Range = Range(1, 9)
    layout: Layout = Layout()
    split: SplitSpec | None = SplitSpec()
    static: StaticSpec | None = None
    description: str = ""
    selected: tuple[str, ...] | None = None
    source: str = field(default="", compare=False)
    family: str = field(default="carc", init=False)

    def variants(self) -> list[Variant]:
        """Every transformation variant the pool draws from, grouped by type in canonical order."""
        return expand_variants(self.transformations)

    def all_configs(self) -> tuple[CarcConfig, ...]:
        """Every config the spec describes, selected or not."""
        configs = [CarcConfig(f"{self.name}-episodes", "episodes", None, (("train", self.episodes),))]
        if self.split is not None:
            for kind in self.split.configs:
                configs += [CarcConfig(f"{self.name}-{kind}-{seed}", kind, seed) for seed in self.split.seeds]
        if self.static is not None:
            configs.append(CarcConfig(f"{self.name}-static", "static"))
        return tuple(configs)

    @property
    def configs(self) -> tuple[CarcConfig, ...]:
        """The configs this build writes (those selected by :meth:`only`)."""
        return tuple(c for c in self.all_configs() if self.selected is None or c.name in self.selected)

    def config(self, name: str) -> CarcConfig:
        """The config called ``name``."""
        for config in self.all_configs():
            if config.name == name:
                return config
        raise UnknownNameError("config", name, [c.name for c in self.all_configs()], where=self.source)

    def only(self, names: list[str] | None) -> CarcSetting:
        """A copy restricted to the configs in ``names`` (``None`` keeps all)."""
        if not names:
            return self
        for name in names:
            self.config(name)
        return replace(self, selected=tuple(names))

    def scaled(self, scale: float) -> CarcSetting:
        """A copy with ``scale`` times the episodes (at least 1) and the same share for ``min_label_count``."""
        if scale == 1:
            return self
        split = self.split
        if split is not None and split.min_label_count:
            split = replace(split, min_label_count=max(1, round(split.min_label_count * scale)))
        return replace(self, episodes=max(1, round(self.episodes * scale)), split=split)

    def with_seed(self, seed: int | None) -> CarcSetting:
        """A copy with another generation seed (``None`` keeps the spec's)."""
        return self if seed is None else replace(self, seed=int(seed))

    def to_dict(self) -> dict:
        """Everything that decides the data, as JSON-friendly values (stored in manifests)."""
        data = asdict(self)
        for key in ("selected", "source", "family"):
            data.pop(key)
        data["transformations"] = {name: {key: list(values) for key, values in kwargs}
                                   for name, kwargs in self.transformations}
        data["shape_size"] = list(self.shape_size)
        return data


def setting_from_dict(data: dict) -> CarcSetting:
    """Rebuild a :class:`CarcSetting` from :meth:`CarcSetting.to_dict` output (as stored in manifests)."""
    transformations = tuple((name, tuple((key, tuple(values)) for key, values in kwargs.items()))
                            for name, kwargs in data["transformations"].items())
    split = data.get("split")
    static = data.get("static")
    return CarcSetting(
        name=data["name"], version=data["version"], seed=data["seed"], episodes=data["episodes"],
        transformations=transformations, rotation=data["rotation"], degenerate=data["degenerate"],
        queries=data.get("queries", "distinct"),  # manifests of generator 1 predate the key: distinct
        shape_size=Range(data["shape_size"]), layout=Layout(**data["layout"]),
        split=SplitSpec(**{**split, "seeds": tuple(split["seeds"]), "configs": tuple(split["configs"])})
        if split else None,
        static=StaticSpec(**static) if static else None, description=data.get("description", ""))


# ---------------------------------------------------------------- parsing
def parse(doc: Located) -> CarcSetting:
    """Validate the document into a :class:`CarcSetting`."""
    top = expect_keys(doc, (), doc.data, _TOP_REQUIRED, _TOP_OPTIONAL)
    name = read_name(doc, ("setting",), top["setting"], "setting")
    setting = CarcSetting(
        name=name,
        version=read_int(doc, ("version",), top.get("version", 1), minimum=0),
        seed=read_int(doc, ("seed",), top["seed"], minimum=0, maximum=2**63 - 1),
        episodes=read_int(doc, ("episodes",), top["episodes"], minimum=1, maximum=MAX_EPISODES),
        transformations=_read_transformations(doc, ("transformations",), top["transformations"]),
        rotation=_read_choice(doc, ("rotation",), top.get("rotation", "paper"), ROTATION_MODES),
        degenerate=_read_choice(doc, ("degenerate",), top.get("degenerate", "reject"), DEGENERATE),
        queries=_read_choice(doc, ("queries",), top.get("queries", "reference"), QUERY_MODES),
        shape_size=read_range(doc, ("shape_size",), top.get("shape_size", [1, 9]), 1, 9),
        layout=_read_layout(doc, ("layout",), top.get("layout", {})),
        split=_read_split(doc, ("split",), top["split"]) if "split" in top else None,
        static=_read_static(doc, ("static",), top["static"]) if "static" in top else None,
        description=str(top.get("description", "")).strip(),
        source=doc.source,
    )
    _check_layout(doc, setting)
    return setting


def _read_choice(doc, path, value, choices) -> str:
    if value not in choices:
        raise SpecError(f"unknown value {value!r}", where=doc.where(path), fix=f"use one of: {', '.join(choices)}")
    return value


def _read_transformations(doc, path, value) -> tuple:
    mapping = expect_keys(doc, path, value, TRANSFORMATIONS)
    if tuple(mapping) != TRANSFORMATIONS:
        raise SpecError(f"the types are listed as {', '.join(mapping)}", where=doc.where(path),
                        fix=f"list them in the reference's order ({', '.join(TRANSFORMATIONS)}): the split "
                            "shuffles the triplets in this order, so the order decides the held-out triplets")
    out = tuple((name, _read_kwargs(doc, (*path, name), name, mapping[name])) for name in TRANSFORMATIONS)
    count = len(expand_variants(out))
    if count > MAX_VARIANTS:
        raise SpecError(f"{count} transformation variants; at most {MAX_VARIANTS}", where=doc.where(path))
    return out


def _read_kwargs(doc, path, name, value) -> tuple:
    allowed = KWARGS[name]
    mapping = expect_keys(doc, path, value, tuple(allowed))
    out = []
    for key, choices in allowed.items():
        item_path = (*path, key)
        values = read_list(doc, item_path, mapping[key])
        for i, item in enumerate(values):
            if isinstance(item, bool) or item not in choices:
                raise SpecError(f"{item!r} is not a value of {name}.{key}", where=doc.where((*item_path, i)),
                                fix=f"allowed: {', '.join(map(str, choices))}")
            if item in values[:i]:
                raise SpecError(f"{item!r} is listed twice", where=doc.where((*item_path, i)), fix="remove the repeat")
        out.append((key, tuple(values)))
    return tuple(out)


def _read_layout(doc, path, value) -> Layout:
    mapping = expect_keys(doc, path, value, (), ("primitives", "compositions", "queries", "shots"))
    default = Layout()
    return Layout(**{key: read_int(doc, (*path, key), mapping.get(key, getattr(default, key)), minimum=0, maximum=50)
                     for key in ("primitives", "compositions", "queries", "shots")})


def _read_split(doc, path, value) -> SplitSpec:
    mapping = expect_keys(doc, path, value, ("seeds",), ("held_out", "min_label_count", "configs"))
    seeds_path = (*path, "seeds")
    seeds = tuple(read_int(doc, (*seeds_path, i), s, minimum=0, maximum=2**63 - 1)
                  for i, s in enumerate(read_list(doc, seeds_path, mapping["seeds"])))
    for i, seed in enumerate(seeds):
        if seed in seeds[:i]:
            raise SpecError(f"seed {seed} is listed twice", where=doc.where((*seeds_path, i)), fix="remove the repeat")
    configs_path = (*path, "configs")
    kinds = read_list(doc, configs_path, mapping.get("configs", ["systematicity", "3shot"]))
    configs = tuple(_read_choice(doc, (*configs_path, i), kind, ("systematicity", "3shot"))
                    for i, kind in enumerate(kinds))
    return SplitSpec(seeds=seeds, held_out=read_int(doc, (*path, "held_out"), mapping.get("held_out", 2), 1, 9),
                     min_label_count=read_int(doc, (*path, "min_label_count"), mapping.get("min_label_count", 5000),
                                              minimum=0),
                     configs=tuple(dict.fromkeys(configs)))


def _read_static(doc, path, value) -> StaticSpec:
    mapping = expect_keys(doc, path, value, (), ("seed", "primitives", "compositions", "queries"))
    default = StaticSpec()
    return StaticSpec(
        seed=read_int(doc, (*path, "seed"), mapping.get("seed", default.seed), minimum=0, maximum=2**63 - 1),
        **{key: read_int(doc, (*path, key), mapping.get(key, getattr(default, key)), minimum=0, maximum=50)
           for key in ("primitives", "compositions", "queries")})


def _check_layout(doc: Located, setting: CarcSetting) -> None:
    layout = setting.layout
    if layout.queries < 1:
        raise SpecError("an episode needs at least one query", where=doc.where(("layout", "queries")))
    if layout.level2 > 50:
        raise SpecError(f"{layout.level2} level-2 examples (queries + shots) per episode; at most 50",
                        where=doc.where(("layout",)), fix="they must sit at distinct positions of a 10x10 grid")
    if setting.split is not None and "3shot" in setting.split.configs and layout.shots < 1:
        raise SpecError("the 3shot configs need level-2 shots", where=doc.where(("layout", "shots")),
                        fix="set layout.shots (3 in the paper) or drop 3shot from split.configs")
    if setting.static is not None and setting.static.queries < 1:
        raise SpecError("the static variant needs at least one query per episode",
                        where=doc.where(("static", "queries")))
