"""Arrow columns made from NumPy buffers and read back into them, for a family's shard writer and checks.

Arrays are built from buffers, never with ``pa.array`` on the write path (it imports pandas when installed); the
column types are those of :mod:`cogen.folder.features` (``list<list<int8>>`` grids and the like).
"""

from __future__ import annotations

from cogen.pipeline.arrow import (
    Grids,
    grids_column,
    names_column,
    numbered_strings,
    numpy_array,
    padded_rows_column,
    pairs_column,
    read_grids,
    read_lists,
    string_array,
)

__all__ = ["Grids", "grids_column", "names_column", "numbered_strings", "numpy_array", "padded_rows_column",
           "pairs_column", "read_grids", "read_lists", "string_array"]
