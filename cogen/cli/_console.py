"""Consoles shared by the CLI commands: results on stdout, progress and errors on stderr."""

from __future__ import annotations

from rich.console import Console

out = Console(highlight=False)
err = Console(stderr=True, highlight=False)


def error(message: str) -> None:
    """Print an error message (no traceback) on stderr."""
    err.print(f"[bold red]error:[/] {message}", soft_wrap=True, markup=True)
