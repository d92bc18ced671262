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
)

for _name in _COMMAND_MODULES:
    __import__(f"cogen.cli.{_name}", fromlist=["register"]).register(app)


def main() -> None:
    """Console-script entry point: run the app, turning cogen errors into clean messages."""
    from cogen.errors import CogenError

    try:
        app(standalone_mode=False)
    except CogenError as error:
        _console.error(str(error))
        sys.exit(1)
    except KeyboardInterrupt:
        _console.error("interrupted")
        sys.exit(130)
    except SystemExit:
        raise
    except BaseException as error:  # click usage errors and aborts
        import click

        if isinstance(error, click.exceptions.ClickException):
            error.show()
            sys.exit(error.exit_code)
        if isinstance(error, click.exceptions.Exit):
            sys.exit(error.exit_code)
        if isinstance(error, click.exceptions.Abort):
            sys.exit(1)
        raise
