"""Rows of a Compositional-ARC config and their Arrow columns.

Every config has the same columns (the raw ``episodes`` config adds the 3-shot examples):

* ``study_inputs`` / ``study_outputs`` / ``query_inputs`` / ``query_outputs``: ``K x 10 x 10`` grids
  (``list<list<list<int8>>>``), ready to stack into arrays; ``study_roles`` / ``query_roles`` name
  the kind of each example (``shape``, ``color+neighbor``, ``shape+color+neighbor``, ...);
* the grammar, stored explicitly: ``transformations`` and ``transformation_kwargs`` (JSON, the
  reference's ``meta_data`` kwargs) of the shape, colour and neighbour roles, ``rotation_type_8``
  (what ``rotation_type: 8`` does in this dataset: ``counter-clockwise`` as the paper says, or
  ``clockwise`` as the public code does), ``triplet``, ``shape_indicator`` (S's cells from its
  top-left), ``color_indicator`` (C), ``neighbor_indicator`` (N's cells on the grid) and
  ``neighbor_color``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cogen.carc.grammar import KINDS, ROTATION_TYPE_8, TRANSFORMATIONS, triplet_name

__all__ = ["COLUMNS", "EPISODE_COLUMNS", "RowData", "rows_table"]

GRIDS = "list<list<list<int8>>>"
COLUMNS = (
    ("id", "string"),
    ("episode", "int64"),
    ("study_inputs", GRIDS),
    ("study_outputs", GRIDS),
    ("study_roles", "list<string>"),
    ("query_inputs", GRIDS),
    ("query_outputs", GRIDS),
    ("query_roles", "list<string>"),
    ("triplet", "string"),
    ("transformations", "list<string>"),
    ("transformation_kwargs", "list<string>"),
    ("rotation_type_8", "string"),
    ("shape_indicator", "list<list<int8>>"),
    ("color_indicator", "int8"),
    ("neighbor_indicator", "list<list<int8>>"),
    ("neighbor_color", "int8"),
)
#: The raw episode pool also keeps the level-2 shots that the 3-shot configs use as study examples.
EPISODE_COLUMNS = COLUMNS[:8] + (("shot_inputs", GRIDS), ("shot_outputs", GRIDS)) + COLUMNS[8:]


@dataclass
class RowData:
    """The content of some rows, as arrays; grids are ``(row, example, input/output, 10, 10)``;
    ``rotation`` is the dataset's rotation mode (``paper`` or ``reference``)."""

    episode: np.ndarray
    study: np.ndarray
    study_kinds: np.ndarray
    queries: np.ndarray
    query_kinds: np.ndarray
    types: np.ndarray
    kwargs: np.ndarray
    shape_words: np.ndarray
    color: np.ndarray
    neighbor_words: np.ndarray
    neighbor_color: np.ndarray
    rotation: str = "paper"
    shots: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.episode)


def _offsets(count: int, step: int):
    import pyarrow as pa

    return pa.array(np.arange(count + 1, dtype=np.int32) * np.int32(step))


def grids_column(grids: np.ndarray):
    """``list<list<list<int8>>>`` of a ``(row, k, 10, 10)`` array (k may be 0)."""
    import pyarrow as pa

    n, k, height, width = grids.shape
    cells = pa.array(np.ascontiguousarray(grids, np.int8).reshape(-1), pa.int8())
    rows = pa.ListArray.from_arrays(_offsets(n * k * height, width), cells)
    return pa.ListArray.from_arrays(_offsets(n, k), pa.ListArray.from_arrays(_offsets(n * k, height), rows))


def strings_column(codes: np.ndarray, names) -> object:
    """``list<string>`` of a ``(row, k)`` array of codes into ``names``."""
    import pyarrow as pa

    n, k = codes.shape
    values = np.asarray(names, object)[codes.reshape(-1)] if codes.size else np.zeros(0, object)
    return pa.ListArray.from_arrays(_offsets(n, k), pa.array(values, pa.string()))


def cells_column(words: np.ndarray):
    """``list<list<int8>>`` of (row, col) cells decoded from 100-bit masks."""
    import pyarrow as pa

    from cogen.carc.episodes import mask_cells

    counts, cells = mask_cells(words)
    offsets = np.zeros(len(counts) + 1, np.int32)
    np.cumsum(counts, out=offsets[1:])
    pairs = pa.ListArray.from_arrays(_offsets(len(cells), 2), pa.array(cells.reshape(-1), pa.int8()))
    return pa.ListArray.from_arrays(pa.array(offsets), pairs)


def triplet_strings(types: np.ndarray) -> list[str]:
    """Triplet name of each row of role type codes."""
    return [triplet_name([TRANSFORMATIONS[t] for t in row]) for row in types.tolist()]


def rows_table(rows: RowData, ids):
    """The Arrow table of ``rows`` (the columns of :data:`COLUMNS`, plus shots when present); ``ids`` is
    the ``id`` column, an Arrow ``string`` array."""
    import pyarrow as pa

    columns = {
        "id": ids,
        "episode": pa.array(rows.episode, pa.int64()),
        "study_inputs": grids_column(rows.study[:, :, 0]),
        "study_outputs": grids_column(rows.study[:, :, 1]),
        "study_roles": strings_column(rows.study_kinds, KINDS),
        "query_inputs": grids_column(rows.queries[:, :, 0]),
        "query_outputs": grids_column(rows.queries[:, :, 1]),
        "query_roles": strings_column(rows.query_kinds, KINDS),
    }
    if rows.shots is not None:
        columns["shot_inputs"] = grids_column(rows.shots[:, :, 0])
        columns["shot_outputs"] = grids_column(rows.shots[:, :, 1])
    columns.update({
        "triplet": pa.array(triplet_strings(rows.types), pa.string()),
        "transformations": strings_column(rows.types, TRANSFORMATIONS),
        "transformation_kwargs": pa.ListArray.from_arrays(_offsets(len(rows), 3),
                                                          pa.array(rows.kwargs.reshape(-1), pa.string())),
        "rotation_type_8": pa.array([ROTATION_TYPE_8[rows.rotation]] * len(rows), pa.string()),
        "shape_indicator": cells_column(rows.shape_words),
        "color_indicator": pa.array(rows.color, pa.int8()),
        "neighbor_indicator": cells_column(rows.neighbor_words),
        "neighbor_color": pa.array(rows.neighbor_color, pa.int8()),
    })
    return pa.table(columns)
