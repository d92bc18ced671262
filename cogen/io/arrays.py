"""Splits to padded NumPy arrays and task-code tokens, ready for a model.

Grids are stored at their true size; models want one fixed shape. :func:`split_arrays` pads
every grid column of a split to a common ``H x W`` (chosen, or the largest grid) with a pad value
that cannot be mistaken for a colour, and keeps each grid's true shape beside it. The
transformation sequence becomes a row of token ids from the registry, padded to ``depth`` with
the identity token 0 (the papers' models take depth-4 task codes).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cogen.errors import DataError

__all__ = ["DEPTH", "PAD_VALUE", "pad_grids", "split_arrays", "table_arrays", "task_tokens"]

#: Default pad value: one past the last colour (9), so padding never reads as background (0).
PAD_VALUE = 10
#: Default task-code length: the deepest sequences of the paper's experiments, padded with the identity.
DEPTH = 4


def _size(size, shapes: list[np.ndarray]) -> tuple[int, int]:
    if size is None:
        flat = [s.reshape(-1, 2) for s in shapes if s.size]
        return tuple(int(v) for v in np.max(np.vstack(flat), axis=0)) if flat else (0, 0)
    if isinstance(size, int):
        return (size, size)
    height, width = size
    return (int(height), int(width))


def _check_pad(pad_value: int) -> None:
    if not -128 <= pad_value <= 127:
        raise DataError(f"pad_value={pad_value} does not fit the int8 grids; use a value from -128 to 127")


def _token_lookup(names: Sequence[str]) -> dict[str, int]:
    from cogen.engine.registry import resolve

    return {name: resolve(name).token for name in names}


def task_tokens(sequences, depth: int | None = DEPTH, pad_token: int | None = None) -> np.ndarray:
    """``(n, depth)`` int64 token ids of transformation sequences, padded with the identity token.

    ``sequences`` is a list of name lists or an Arrow ``list<string>`` array; ``depth=None`` uses
    the longest sequence. Unknown names raise :class:`cogen.errors.UnknownNameError`.
    """
    import pyarrow as pa

    from cogen.engine.registry import IDENTITY_TOKEN
    from cogen.io._arrow import token_matrix

    array = sequences if isinstance(sequences, (pa.Array, pa.ChunkedArray)) else \
        pa.array([list(s) for s in sequences], pa.list_(pa.string()))
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    names = array.flatten().unique().to_pylist()
    if depth is None:
        import pyarrow.compute as pc

        depth = int(pc.max(pc.list_value_length(array)).as_py() or 0)
    return token_matrix(array, _token_lookup(names), depth, IDENTITY_TOKEN if pad_token is None else pad_token)


def _tokens_or_none(column, depth: int | None, required: bool | None) -> np.ndarray | None:
    from cogen.errors import UnknownNameError

    try:
        return task_tokens(column, depth)
    except UnknownNameError:
        if required:
            raise
        return None  # not the engine's transformation names (another family's grammar)


def table_arrays(table, *, size=None, pad_value: int = PAD_VALUE, depth: int | None = DEPTH,
                 tokens: bool | None = None, columns: Sequence[str] | None = None) -> dict[str, np.ndarray]:
    """Padded arrays of every grid column of an Arrow table (see :func:`split_arrays`)."""
    from cogen.io._arrow import column_shapes, grid_depth, pad_grid_column

    _check_pad(pad_value)
    grid_columns = {name: grid_depth(name, table.schema.field(name).type) for name in table.column_names}
    grid_columns = {name: d for name, d in grid_columns.items() if d and (columns is None or name in columns)}
    missing = [c for c in columns or () if c not in grid_columns]
    if missing:
        raise DataError(f"no grid column {', '.join(map(repr, missing))}; grid columns: {', '.join(grid_columns)}")
    arrays = {name: table.column(name).combine_chunks() for name in grid_columns}
    size = _size(size, [column_shapes(arrays[name], d) for name, d in grid_columns.items()])
    out = {}
    for name, grid_depth_ in grid_columns.items():
        out[name], out[f"{name}_shape"] = pad_grid_column(arrays[name], grid_depth_, size, pad_value, name)
    if "transformations" in table.column_names and tokens is not False:
        matrix = _tokens_or_none(table.column("transformations"), depth, tokens)
        if matrix is not None:
            out["tokens"] = matrix
    elif tokens:
        raise DataError("tokens=True but the split has no 'transformations' column")
    return out


def split_arrays(source, config: str | None = None, split: str = "train", *, size=None,
                 pad_value: int = PAD_VALUE, depth: int | None = DEPTH, tokens: bool | None = None,
                 columns: Sequence[str] | None = None) -> dict[str, np.ndarray]:
    """One split as padded NumPy arrays.

    ``source``: a ``datasets.Dataset``/``DatasetDict``, a build folder, a Hub repo id or a
    ``pyarrow.Table``. For every grid column ``name`` (or only ``columns``) the result holds
    ``name`` (int8, ``(rows, H, W)``, or ``(rows, k, H, W)`` for lists of grids) and
    ``name_shape`` (the true heights and widths; zeros mark missing list entries): a sequential
    build's ``frames`` become ``(rows, depth + 1, H, W)``. ``size`` is an
    int, an ``(H, W)`` pair or ``None`` for the largest grid; a grid larger than ``size`` raises
    :class:`cogen.errors.DataError`. ``tokens`` (``(rows, depth)`` int64) is added when the
    transformation names are registry names (``tokens=None``), always (``True``) or never (``False``).

    >>> arrays = split_arrays("cogen-data", "C1-1", split="test_ood", size=20)  # doctest: +SKIP
    >>> arrays["input"].shape, arrays["tokens"][0]                              # doctest: +SKIP
    ((10, 20, 20), array([1, 5, 0, 0]))
    """
    from cogen.io._arrow import GRID_NAME
    from cogen.io.source import split_table

    def keep(name: str) -> bool:  # read only what becomes arrays, where the source allows it
        return name == "transformations" or bool(GRID_NAME.search(name)) and (columns is None or name in columns)

    return table_arrays(split_table(source, config, split, keep), size=size, pad_value=pad_value, depth=depth,
                        tokens=tokens, columns=columns)


def _as_lists(value):
    return value.tolist() if isinstance(value, np.ndarray) else value


def pad_grids(grids, size=None, pad_value: int = PAD_VALUE) -> tuple[np.ndarray, np.ndarray]:
    """Pad a list of 2-D grids (nested lists or arrays) to ``(n, H, W)`` int8; also returns their shapes."""
    import pyarrow as pa

    array = pa.array([[_as_lists(row) for row in _as_lists(grid)] for grid in grids], pa.list_(pa.list_(pa.int8())))
    out = table_arrays(pa.table({"input": array}), size=size, pad_value=pad_value, tokens=False)
    return out["input"], out["input_shape"]
