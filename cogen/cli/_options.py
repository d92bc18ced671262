"""Options shared by the commands, defined once so that a name means one thing everywhere.

* ``--config`` names dataset configs. Commands that *make* data (``cogen build``) take a spec
  (a YAML file or a packaged spec name: all its configs) or one config name; commands that
  *read* data (``eval``, ``prompts``, ``render``) take one config of that data, and a spec
  given there is refused with a message that says what to pass instead.
* ``--data`` is data to read: a dataset folder or a Hub dataset repo id.
* ``FOLDER`` (an argument) is a dataset folder that a command checks, publishes or rewrites;
  ``--out`` is where a command writes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from cogen.cli._help import complete_configs, complete_specs

__all__ = ["ConfigOpt", "DataOpt", "packaged_spec_names", "FolderArg", "OutFolderOpt", "SpecOrConfigOpt", "SplitOpt", "number",
           "one_config", "output_file"]


def number(option: str, minimum: float | None = None, maximum: float | None = None, *,
           above: float | None = None) -> Callable:
    """The one validator of numeric options (a typer ``callback``): the value must be finite, at least
    ``minimum`` (or greater than ``above``) and at most ``maximum``; ``None`` (not given) passes."""

    def check(value):
        if value is None:
            return value
        if isinstance(value, float) and not math.isfinite(value):
            raise typer.BadParameter(f"{option} must be a finite number, got {value}")
        if above is not None and not value > above:
            raise typer.BadParameter(f"{option} must be greater than {above:g}, got {value}")
        if minimum is not None and value < minimum:
            raise typer.BadParameter(f"{option} must be at least {minimum:g}, got {value}")
        if maximum is not None and value > maximum:
            raise typer.BadParameter(f"{option} must be at most {maximum:g}, got {value}")
        return value

    return check


def one_config(value: str | None) -> str | None:
    """``--config`` of a command that reads data: one config name, never a spec."""
    if value is None:
        return value
    from cogen.specs import is_spec_reference

    if is_spec_reference(value):
        raise typer.BadParameter(
            f"{value!r} is a spec; here --config names one config of the data, such as C3-1 "
            f"(`cogen build --config {value}` builds a spec)")
    return value


def output_file(path: Path, option: str) -> Path:
    """Check, before any work is done, that ``path`` can be the file an option names (not a folder,
    not below a file); raises a one-line :class:`cogen.errors.CogenError` otherwise."""
    from cogen.errors import CogenError

    if path.is_dir():
        raise CogenError(f"{option} {path} is a folder; give a file name, e.g. {path / ('out' + path.suffix)}")
    blocking = next((parent for parent in path.parents if parent.exists() and not parent.is_dir()), None)
    if blocking is not None:
        raise CogenError(f"{option} {path}: {blocking} is a file, not a folder; choose another path")
    return path


def packaged_spec_names() -> list[str]:
    """The packaged spec names (``c1``, ``g2``, ``as_run/c1``, ...), read from the files shipped
    with cogen so that ``--help`` can never miss one (a glob: no spec module is imported)."""
    from cogen._resources import specs_dir

    root = specs_dir()
    paths = sorted(root.rglob("*.yaml"), key=lambda path: (len(path.relative_to(root).parts), str(path)))
    return [path.relative_to(root).with_suffix("").as_posix() for path in paths]


SpecOrConfigOpt = Annotated[str, typer.Option(
    "--config", "-c", help=f"What to build: a spec file, a packaged spec ({', '.join(packaged_spec_names())}) "
                           "or one config of a packaged spec (e.g. C3-1).", autocompletion=complete_specs)]
ConfigOpt = Annotated[str, typer.Option("--config", "-c", callback=one_config, autocompletion=complete_configs,
                                        help="One config of the data, e.g. C3-1.")]
DataOpt = Annotated[str, typer.Option("--data", "-d",
                                      help="A dataset folder (`cogen build` or `cogen merge` output), or a Hub "
                                           "dataset repo id (owner/name).")]
FolderArg = Annotated[Path, typer.Argument(help="A dataset folder written by `cogen build` or `cogen merge`.")]
OutFolderOpt = Annotated[Path, typer.Option("--out", "-o", help="Dataset folder to write (Hub repo layout).")]
SplitOpt = Annotated[str, typer.Option("--split", "-s", help="Split: train, validation, test, validation_ood or "
                                                             "test_ood, as the config has them.")]
