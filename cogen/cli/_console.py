"""Consoles shared by the CLI commands: results on stdout, progress and errors on stderr.

Both consoles print text as it is (``markup=False``): messages carry paths, ``[lo, hi]`` ranges
and install hints such as ``pip install 'cogen-arc[dask]'``, which rich's markup would eat or choke
on. Styling is done with :class:`rich.text.Text` objects instead.
"""

from __future__ import annotations

import sys

from rich.console import Console
from rich.text import Text

#: Width when stdout is not a terminal (a pipe, a file): wide enough that tables never cut names.
PIPE_WIDTH = 1_000

out = Console(highlight=False, markup=False, width=None if sys.stdout.isatty() else PIPE_WIDTH)
err = Console(stderr=True, highlight=False, markup=False)


def styled(text: str, style: str) -> Text:
    """``text`` (taken literally) in ``style``, for tables and messages."""
    return Text(text, style=style)


def error(message: str) -> None:
    """Print an error message (no traceback) on stderr, exactly as written."""
    err.print(Text.assemble(("error:", "bold red"), " ", message), soft_wrap=True)


def note(message: str) -> None:
    """Print a note for the user (a rebuilt shard, a stale lock) on stderr, exactly as written."""
    err.print(Text.assemble(("note:", "bold yellow"), " ", message), soft_wrap=True)


def print_json(value) -> None:
    """Print ``value`` as JSON on stdout, as it is (no wrapping, no colour), for scripts."""
    import json

    print(json.dumps(value, indent=2, ensure_ascii=False, default=str), flush=True)
