"""Column views: a COGITAO split under the column and split names of the official COGITAO release.

The release (Hub repo ``yassinetb/COGITAO``) stores ``{train,val,test,val_ood,test_ood}.parquet``
with ``input`` and ``output`` as lists of lists of int64 and the sequence as
``transformation_suite``. :func:`cogitao_release_view` renames cogen's columns to those names and
widens the grids to int64, so code written for the release reads cogen's data unchanged; cogen's
other columns (``id``, object counts and positions) are kept under their own names.
"""

from __future__ import annotations

from cogen.errors import DataError

__all__ = ["COLUMN_VIEWS", "RELEASE_COLUMNS", "RELEASE_SPLITS", "cogitao_release_view", "column_view"]

#: cogen column -> the release's column.
RELEASE_COLUMNS = {"input": "input", "output": "output", "transformations": "transformation_suite"}
#: cogen split -> the release's file stem.
RELEASE_SPLITS = {"train": "train", "validation": "val", "test": "test", "validation_ood": "val_ood",
                  "test_ood": "test_ood"}


def cogitao_release_view(table):
    """A COGITAO split's Arrow ``table`` with the release's column names and int64 grids."""
    import pyarrow as pa

    missing = [name for name in RELEASE_COLUMNS if name not in table.column_names]
    if missing:
        raise DataError(f"the cogitao-release view needs COGITAO columns; this data lacks {', '.join(missing)}")
    grid = pa.list_(pa.list_(pa.int64()))
    columns, names = [], []
    for name in table.column_names:
        column = table[name]
        if name in ("input", "output"):
            column = column.cast(grid)
        columns.append(column)
        names.append(RELEASE_COLUMNS.get(name, name))
    return pa.table(dict(zip(names, columns, strict=True)))


#: ``--columns`` values: name -> function of an Arrow table (``cogen``: the data as built).
COLUMN_VIEWS = {"cogen": lambda table: table, "cogitao-release": cogitao_release_view}


def column_view(name: str):
    """The table function of the column view ``name``."""
    if name not in COLUMN_VIEWS:
        from cogen.errors import UnknownNameError

        raise UnknownNameError("column view", name, COLUMN_VIEWS)
    return COLUMN_VIEWS[name]
