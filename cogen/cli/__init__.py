"""The ``cogen`` command line: a thin typer layer over library functions.

Each command module holds one area (``objects``, ``transforms``, ``build``, ...) and exposes
``register(app)``; options shared by several commands are defined once in ``_options``.
Commands import the library inside their body so that ``cogen --help`` stays fast; library
errors (:class:`cogen.errors.CogenError`) are printed without a traceback.
"""

from __future__ import annotations

import signal
import sys

import typer

from cogen._version import __version__
from cogen.cli import _console, baselines, build, evaluate, export, hub, objects, prompts, stream, transforms, view
from cogen.cli._help import examples

app = typer.Typer(
    name="cogen",
    help="Generate, verify, publish and score compositional-generalization benchmarks on ARC-like grids.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,
    context_settings={"help_option_names": ["-h", "--help"]},  # every command and group inherits -h
    epilog=examples("cogen build", "cogen build --config c3 --scale 0.01 --out c3-small", "cogen verify cogen-data"),
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


# Each command module's ``register(app)`` adds its commands, in the order of ``cogen --help``.
for _module in (objects, transforms, build, stream, evaluate, prompts, export, hub, baselines, view):
    _module.register(app)


def _stop(signum, frame) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


#: Seconds an interrupted command may take to exit after its message (then it ends at once).
EXIT_SECONDS = 10.0


def _exit_within(seconds: float, code: int) -> None:
    """End the process with ``code`` if it has not exited ``seconds`` from now: an interrupted command
    has said what it finished, and nothing (a library thread that does not stop) may keep it running."""
    import os
    import threading

    def end() -> None:
        for output in (sys.stdout, sys.stderr):
            try:
                output.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)

    timer = threading.Timer(seconds, end)
    timer.daemon = True
    timer.start()


def main() -> None:
    """Console-script entry point: errors become a one-line message, never a traceback.

    cogen errors and file-system errors (disk full, permissions, a folder given as a file) exit
    with code 1; usage errors (unknown command or option) are reported by typer itself, with
    exit code 2. SIGTERM and SIGHUP stop a command like Ctrl-C does (exit code 130): a build
    then says what finished and that running it again resumes.
    """
    from cogen.errors import CogenError, Interrupted, os_error_text

    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) == signal.SIG_DFL:  # `nohup cogen ...` keeps ignoring HUP
            signal.signal(number, _stop)
    try:
        app()
    except Interrupted as error:
        _console.error(str(error))
        _exit_within(EXIT_SECONDS, 130)
        sys.exit(130)
    except CogenError as error:
        _console.error(str(error))
        sys.exit(1)
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        _console.error(f"{where}{os_error_text(error)}")
        sys.exit(1)


def entry() -> None:
    """The ``cogen`` console script and ``python -m cogen``: :func:`main`, then an exit without the
    interpreter's final garbage collections.

    A process that loaded Numba's kernels holds a large graph of objects in reference cycles, and
    collecting it at exit costs about a quarter of a CPU-second, more than a small build's work. So
    every live object is moved to the permanent generation (:func:`gc.freeze`) just before the
    interpreter shuts down as usual: threads are joined, ``atexit`` handlers run (temporary folders,
    logging, worker processes), modules are released, standard streams flushed; the memory goes back
    to the system with the process. Files are written whole and flushed to the disk by the commands
    themselves (:mod:`cogen.folder.atomic`) and the build lock is released when the build ends.
    Only this entry freezes: tests call :func:`main` in-process and keep the usual exit.
    """
    import gc

    try:
        main()
    finally:
        gc.freeze()
