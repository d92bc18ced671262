"""Column views: a split under another layout's column names, split names and cell types.

A :class:`ColumnView` is declarative: which columns it renames, whose integer cells it widens, and
what each split's file is called. ``cogen`` (the rows as built) is the only view every family has;
the others are declared by the families (``COLUMN_VIEWS`` of a family's ``exporter`` module, e.g.
the layout of a family's official release: its names and int64 grids) and take that family's
configs only. A view converts Arrow tables and record batches (``cogen export --format
parquet --columns``) and ``datasets`` splits (:func:`cogen.io.load_configs`), batch by batch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from types import MappingProxyType

from cogen.errors import DataError

__all__ = ["AS_BUILT", "ColumnView", "column_view", "column_views"]


def _widen(type_, cell_type):
    """``type_`` (an integer, or lists of lists of one) with its integers made ``cell_type``."""
    import pyarrow as pa

    if pa.types.is_list(type_) or pa.types.is_large_list(type_):
        return pa.list_(_widen(type_.value_type, cell_type))
    if pa.types.is_integer(type_):
        return cell_type
    raise DataError(f"a column view widens integer cells; this column holds {type_}")


@dataclass(frozen=True)
class ColumnView:
    """A layout of a split: ``renames`` (cogen's column -> the view's), ``cell_types`` (cogen's column -> the
    Arrow integer type, e.g. ``"int64"``, of its cells), ``split_names`` (cogen's split -> the view's file
    stem). ``family`` is the family whose configs it takes (``None``: any), set by :func:`column_views`."""

    name: str
    description: str
    renames: Mapping[str, str] = field(default_factory=dict)
    cell_types: Mapping[str, str] = field(default_factory=dict)
    split_names: Mapping[str, str] = field(default_factory=dict)
    family: str | None = None

    def file_stem(self, split: str) -> str:
        """The name of ``split``'s file under this view."""
        return self.split_names.get(split, split)

    def check(self, columns) -> None:
        """A clear error unless the data has every column this view reads."""
        needed = list(dict.fromkeys([*self.renames, *self.cell_types]))
        missing = [name for name in needed if name not in columns]
        if missing:
            raise DataError(f"the {self.name} view needs the columns {', '.join(needed)}; this data lacks "
                            f"{', '.join(missing)}")

    def check_family(self, name: str, config: str) -> None:
        """A clear error when ``config`` (of family ``name``) is not of the family this view takes."""
        from cogen.family import FAMILIES, family

        if self.family is not None and self.family != name:
            raise DataError(f"config {config} is a {family(name).title} config; the {self.name} view takes "
                            f"{FAMILIES[self.family].title} configs")

    def _column(self, name: str, column):
        import pyarrow as pa

        if name not in self.cell_types:
            return column
        return column.cast(_widen(column.type, pa.type_for_alias(self.cell_types[name])))

    def convert(self, data):
        """A ``pyarrow.Table`` or ``RecordBatch`` under this view (the same kind, the same rows)."""
        self.check(data.column_names)
        columns = [self._column(name, data.column(name)) for name in data.column_names]
        return type(data).from_arrays(columns, names=[self.renames.get(n, n) for n in data.column_names])

    def convert_dataset(self, dataset):
        """A ``datasets.Dataset`` under this view: renamed in place, cells cast a batch at a time into
        the ``datasets`` cache (memory stays that of the plain load, whatever the split's size)."""
        import datasets
        import pyarrow as pa

        self.check(dataset.column_names)
        if self.renames:
            dataset = dataset.rename_columns({old: new for old, new in self.renames.items() if old != new})
        if not self.cell_types:
            return dataset
        features = dataset.features.copy()
        for name, cell_type in self.cell_types.items():
            new = self.renames.get(name, name)
            widened = _widen(features.arrow_schema.field(new).type, pa.type_for_alias(cell_type))
            features[new] = datasets.Features.from_arrow_schema(pa.schema([pa.field(new, widened)]))[new]
        return dataset.cast(features)


#: The rows as built: every family's configs, nothing changed.
AS_BUILT = ColumnView("cogen", "the rows as built")


@cache
def column_views() -> Mapping[str, ColumnView]:
    """Every ``--columns`` view by name: :data:`AS_BUILT`, then those the families declare."""
    from cogen.family import FAMILIES

    views = {AS_BUILT.name: AS_BUILT}
    for family in FAMILIES.values():
        exporter = family.load("exporter")
        for view in exporter.COLUMN_VIEWS if exporter else ():
            views[view.name] = replace(view, family=family.name)
    return MappingProxyType(views)


def column_view(name: str) -> ColumnView:
    """The column view ``name``."""
    views = column_views()
    if name not in views:
        from cogen.errors import UnknownNameError

        raise UnknownNameError("column view", name, views)
    return views[name]
