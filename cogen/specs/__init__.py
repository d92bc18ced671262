"""Experiment specs: readable YAML files validated strictly into frozen objects.

``load_spec("c3")`` reads the packaged ``split_specs/c3.yaml`` (the paper's text) and
``load_spec("as_run/c3")`` ``split_specs/as_run/c3.yaml`` (the conditions the paper's numbers came
from); ``load_spec("my.yaml")`` reads a file. The ``family`` key picks the family record (:mod:`cogen.family`;
without the key, the default family), whose ``spec_parser`` (its folder's ``spec.py``) validates the document.
"""

from __future__ import annotations

from pathlib import Path

from cogen._resources import packaged_specs
from cogen.errors import CogenError, SpecError, UnknownNameError
from cogen.family import DEFAULT_FAMILY, FAMILIES, Setting, family
from cogen.specs._fields import Range, read_name
from cogen.specs._yaml import Located, load_located, read_located
from cogen.specs.splits import ID_SPLITS, OOD_SPLITS, SPLITS

__all__ = ["ID_SPLITS", "OOD_SPLITS", "SPLITS", "Range", "is_spec_reference", "load_spec", "locate_configs",
           "packaged_spec_name", "packaged_specs",
           "parse_spec_text", "resolve_spec_path"]


def resolve_spec_path(path_or_name: str | Path) -> Path:
    """A spec file path from a path or a packaged spec name; clear error for anything else."""
    path = Path(path_or_name)
    if path.is_file():
        return path
    packaged = packaged_specs()
    if str(path_or_name) in packaged:
        return packaged[str(path_or_name)]
    if path.is_dir():
        raise SpecError("is a folder, not a spec file", where=str(path),
                        fix="name a YAML spec file in it, or a packaged spec: " + ", ".join(packaged))
    if path.suffix in (".yaml", ".yml") or path.parent != Path("."):
        raise SpecError("file not found", where=str(path),
                        fix=f"check the path, or use a packaged spec: {', '.join(packaged)}")
    raise UnknownNameError("spec", str(path_or_name), packaged)


def is_spec_reference(text: str | Path) -> bool:
    """True when ``text`` names a spec (a YAML path or a packaged spec name) rather than one config."""
    path = Path(text)
    return path.suffix in (".yaml", ".yml") or path.parent != Path(".") or str(text) in packaged_specs()


def locate_configs(selector: str | Path) -> tuple[Path, list[str] | None]:
    """The spec file and the configs named by ``selector``, the value of ``--config`` in ``cogen build``.

    ``selector`` is a spec file (all its configs), a packaged spec name (``c3``: all its configs)
    or the name of one config of a packaged spec (``C3-1``: that config alone). Returns the spec
    path and ``None`` (every config) or the one config name.
    """
    if is_spec_reference(selector) or Path(selector).is_file():
        return resolve_spec_path(selector), None
    holders = {name: path for name, path in packaged_specs().items()
               if str(selector) in [c.name for c in load_spec(path).configs]}
    if not holders:
        known = [c.name for path in packaged_specs().values() for c in load_spec(path).configs]
        raise UnknownNameError("spec or config", str(selector), [*packaged_specs(), *known])
    if len(holders) > 1:
        raise SpecError(f"config {selector} is in several packaged specs: {', '.join(holders)}",
                        fix="name the spec and the config: --config SPEC --only CONFIG")
    return next(iter(holders.values())), [str(selector)]


def load_spec(path_or_name: str | Path) -> Setting:
    """Read, validate and check a spec file (path or packaged name) into its frozen object."""
    path = resolve_spec_path(path_or_name)
    return _parse(read_located(path))


def packaged_spec_name(path_or_name: str | Path) -> str | None:
    """The name of the packaged spec that ``path_or_name`` is (``"c3"``, ``"as_run/c3"``): a packaged
    name, the packaged file itself, or a file with the same bytes as one; None for any other spec."""
    try:
        path = resolve_spec_path(path_or_name).resolve()
        data = path.read_bytes()
    except (CogenError, OSError):
        return None
    packaged = packaged_specs()
    same = [name for name, file in packaged.items() if file.resolve() == path]
    if not same:
        same = [name for name, file in packaged.items() if file.stat().st_size == len(data) and file.read_bytes() == data]
    return same[0] if same else None


def parse_spec_text(text: str, source: str = "<spec>") -> Setting:
    """Validate spec ``text`` (YAML) as if it were read from the file ``source``."""
    return _parse(load_located(text, source))


def _parse(doc: Located) -> Setting:
    if not isinstance(doc.data, dict):
        raise SpecError("a spec file must be a mapping at the top level", where=doc.where(()))
    name = doc.data.get("family", DEFAULT_FAMILY)
    if not isinstance(name, str):
        raise SpecError(f"expected a family name, got a {type(name).__name__}", where=doc.where(("family",)),
                        fix=f"write one of: {', '.join(FAMILIES)}")
    setting = family(name, where=doc.where(("family",))).load("spec_parser")(doc)
    _check_config_names(doc, [config.name for config in setting.configs])
    return setting


def _check_config_names(doc: Located, names: list[str]) -> None:
    """Every config name the spec makes (a family may compose them from a prefix) obeys the name rule
    of :mod:`cogen.folder.names`, and no two are one name after case folding."""
    seen: dict[str, str] = {}
    for name in names:
        where = doc.where(_name_field(doc, name))
        read_name(doc, _name_field(doc, name), name)
        other = seen.setdefault(name.casefold(), name)
        if other != name:
            raise SpecError(f"config names {other!r} and {name!r} differ only in upper and lower case, so they "
                            "would share one folder on many file systems", where=where, fix="rename one of them")


def _name_field(doc: Located, name: str) -> tuple:
    """The field a config name comes from: the key spelled so, else the prefix every name is made from."""
    return next((path for path in doc.lines if path and path[-1] == name), ("setting",))
