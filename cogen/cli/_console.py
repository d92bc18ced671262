"""Consoles shared by the CLI commands: results on stdout, progress and errors on stderr.

Both consoles print text as it is (``markup=False``): messages carry paths, ``[lo, hi]`` ranges
and install hints such as ``pip install 'cogen[dask]'``, which rich's markup would eat or choke
on. Styling is done with :class:`rich.text.Text` objects instead.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

out = Console(highlight=False, markup=False)
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
