"""Draw grids in the terminal with their ARC colours (used by ``objects show``, ``sample``, ...)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group
from rich.table import Table
from rich.text import Text

from cogen.palette import ARC_HEX

__all__ = ["grid_text", "grids_side_by_side"]


def grid_text(grid) -> Text:
    """A rich ``Text`` drawing ``grid`` (2-D ints 0-9) as two-character coloured cells.

    Cells of colour 0 get a dim dot so that the grid's extent stays visible.
    """
    text = Text()
    for row in grid:
        for value in row:
            value = int(value)
            if value == 0:
                text.append(" ·", style="grey35 on #000000")
            else:
                text.append(f"{value:>2}", style=f"bold #000000 on {ARC_HEX[value]}")
        text.append("\n")
    return text


def grids_side_by_side(grids: Sequence, titles: Sequence[str]) -> Table:
    """A borderless table showing several grids next to each other under their titles."""
    table = Table(show_header=True, box=None, padding=(0, 2), header_style="bold")
    for title in titles:
        table.add_column(title, no_wrap=True)
    table.add_row(*(Group(grid_text(g)) for g in grids))
    return table
