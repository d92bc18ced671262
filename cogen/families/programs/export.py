"""What string-to-grid programs configs become in other tools' formats (the family's ``exporter``).

Nothing beyond the generic ``parquet`` format with the rows as built: a function's 16 pairs are
explained by a program, not solved as an ARC task, so the family declares no ``arc_tasks``, no
format and no column view of its own.
"""

from __future__ import annotations

__all__ = ["COLUMN_VIEWS", "FORMATS"]

#: Formats only string-to-grid configs take: none.
FORMATS = ()
#: Column views of its rows beyond the rows as built: none.
COLUMN_VIEWS = ()
