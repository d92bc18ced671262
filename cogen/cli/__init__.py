"""The ``cogen`` command line: a thin typer layer over library functions.

Each command module holds one area (``objects``, ``transforms``, ``build``, ...) and exposes
``register(app)``. Commands import the library inside their body so that ``cogen --help``
stays fast; library errors (:class:`cogen.errors.CogenError`) are printed without a traceback.
"""

from __future__ import annotations

import sys

import typer

from cogen._version import __version__
from cogen.cli import _console

app = typer.Typer(
    name="cogen",
    help="Generate, verify, publish and score compositional-generalization benchmarks on ARC-like grids.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"cogen {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", help="Print the version and exit.",
                                 callback=_version_callback, is_eager=True),
) -> None:
    """cogen: seeded, parallel, leak-free benchmark generation."""


# One line per command module; each module's ``register(app)`` adds its commands.
_COMMAND_MODULES: tuple[str, ...] = (
    "objects",
    "transforms",
    "build",
    "evaluate",
    "prompts",
    "hub",
    "baselines",
)

for _name in _COMMAND_MODULES:
    __import__(f"cogen.cli.{_name}", fromlist=["register"]).register(app)


def main() -> None:
    """Console-script entry point: cogen errors become a one-line message and exit code 1.

    Usage errors (unknown command or option) are reported by typer itself, with exit code 2.
    """
    from cogen.errors import CogenError

    try:
        app()
    except CogenError as error:
        _console.error(str(error))
        sys.exit(1)
