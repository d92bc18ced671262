"""Parse and check a string-to-grid programs spec file (``family: programs``) into a :class:`ProgramsSetting`.

Layout (unknown keys are errors, reported with file, line and field)::

    setting: programs           # prefix of every config name (programs-horizontal, ...)
    family: programs
    version: 1
    seed: 3                     # seed of every config's functions
    functions: 30               # functions per setting (the paper's 30)
    settings: [horizontal, block, vertical, random, random_index, horizontal_random]

Each listed setting is one config, ``<setting>-<name with - for _>`` (``programs-random-index``),
with one split, ``test``: the functions, each with its 16 samples.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

from cogen.errors import SpecError, UnknownNameError
from cogen.families.programs.functions import SETTINGS
from cogen.kit.spec import Located, expect_keys, read_int, read_list, read_name

__all__ = ["MAX_FUNCTIONS", "SPLIT", "ProgramsConfig", "ProgramsSetting", "parse", "setting_from_dict"]

#: Most functions per config: the smallest settings have 65,536 distinct functions, and every
#: function of a config is distinct.
MAX_FUNCTIONS = 10_000
#: The one split of every config: all functions are shown whole, so nothing is held out.
SPLIT = "test"

_TOP_REQUIRED = ("setting", "family", "seed", "functions", "settings")
_TOP_OPTIONAL = ("version", "description")


@dataclass(frozen=True)
class ProgramsConfig:
    """One config of the published dataset: the functions of one setting."""

    name: str
    kind: str
    functions: int

    @property
    def sizes(self) -> tuple[tuple[str, int], ...]:
        """Split sizes, known before building."""
        return ((SPLIT, self.functions),)


@dataclass(frozen=True)
class ProgramsSetting:
    """A programs spec: how many functions of which settings, from which seed."""

    name: str
    version: int
    seed: int
    functions: int
    settings: tuple[str, ...]
    description: str = ""
    selected: tuple[str, ...] | None = None
    source: str = field(default="", compare=False)
    family: str = field(default="programs", init=False)

    def all_configs(self) -> tuple[ProgramsConfig, ...]:
        """Every config the spec describes, selected or not."""
        return tuple(ProgramsConfig(f"{self.name}-{kind.replace('_', '-')}", kind, self.functions)
                     for kind in self.settings)

    @property
    def configs(self) -> tuple[ProgramsConfig, ...]:
        """The configs this build writes (those selected by :meth:`only`)."""
        return tuple(c for c in self.all_configs() if self.selected is None or c.name in self.selected)

    def config(self, name: str) -> ProgramsConfig:
        """The config called ``name``."""
        for config in self.all_configs():
            if config.name == name:
                return config
        raise UnknownNameError("config", name, [c.name for c in self.all_configs()], where=self.source)

    def only(self, names: list[str] | None) -> ProgramsSetting:
        """A copy restricted to the configs in ``names`` (``None`` keeps all)."""
        if not names:
            return self
        for name in names:
            self.config(name)
        return replace(self, selected=tuple(names))

    def scaled(self, scale: float) -> ProgramsSetting:
        """A copy with ``scale`` times the functions per setting (at least 1)."""
        if scale == 1:
            return self
        return replace(self, functions=min(MAX_FUNCTIONS, max(1, round(self.functions * scale))))

    def with_seed(self, seed: int | None) -> ProgramsSetting:
        """A copy with another seed (``None`` keeps the spec's)."""
        return self if seed is None else replace(self, seed=int(seed))

    def to_dict(self) -> dict:
        """Everything that decides the data, as JSON-friendly values (stored in manifests)."""
        data = asdict(self)
        for key in ("selected", "source", "family"):
            data.pop(key)
        data["settings"] = list(self.settings)
        return data


def setting_from_dict(data: dict) -> ProgramsSetting:
    """Rebuild a :class:`ProgramsSetting` from :meth:`ProgramsSetting.to_dict` output (as stored in manifests)."""
    return ProgramsSetting(name=data["name"], version=data["version"], seed=data["seed"], functions=data["functions"],
                           settings=tuple(data["settings"]), description=data.get("description", ""))


def parse(doc: Located) -> ProgramsSetting:
    """Validate the document into a :class:`ProgramsSetting`."""
    top = expect_keys(doc, (), doc.data, _TOP_REQUIRED, _TOP_OPTIONAL)
    return ProgramsSetting(
        name=read_name(doc, ("setting",), top["setting"], "setting"),
        version=read_int(doc, ("version",), top.get("version", 1), minimum=0),
        seed=read_int(doc, ("seed",), top["seed"], minimum=0, maximum=2**63 - 1),
        functions=read_int(doc, ("functions",), top["functions"], minimum=1, maximum=MAX_FUNCTIONS),
        settings=_read_settings(doc, ("settings",), top["settings"]),
        description=str(top.get("description", "")).strip(),
        source=doc.source,
    )


def _read_settings(doc: Located, path, value) -> tuple[str, ...]:
    names = read_list(doc, path, value)
    for i, name in enumerate(names):
        if name not in SETTINGS:
            raise UnknownNameError("setting", str(name), SETTINGS, where=doc.where((*path, i)))
        if name in names[:i]:
            raise SpecError(f"setting {name!r} is listed twice", where=doc.where((*path, i)), fix="remove the repeat")
    return tuple(names)
