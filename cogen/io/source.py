"""Where a split comes from: a ``datasets.Dataset``, a build folder, or a Hub repository.

``split_table`` returns the split as one Arrow table, the cheapest form for turning it into
arrays: a build folder is read straight from the Parquet files its manifest lists (no
``datasets`` cache), a ``Dataset`` gives its Arrow view (respecting ``select``/``shuffle``), and
a repo id goes through ``datasets.load_dataset``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from cogen.errors import DataError
from cogen.folder import is_dataset_folder, read_split
from cogen.folder.locate import locate_data

__all__ = ["load_configs", "load_split", "split_table"]


def _is_dataset(source) -> bool:
    return hasattr(source, "with_format") and hasattr(source, "features") and not isinstance(source, Mapping)


def _pick_split(source, split: str):
    if isinstance(source, Mapping):  # a DatasetDict
        if split not in source:
            raise DataError(f"no split {split!r}; this dataset has {', '.join(source)}")
        return source[split]
    return source


def load_split(source, config: str | None = None, split: str = "train"):
    """One split as a ``datasets.Dataset``.

    ``source`` is a ``Dataset`` (returned as is), a ``DatasetDict``, a local folder (a build
    folder or any folder ``load_dataset`` reads) or a Hub repo id such as ``"org/benchmark"``.
    """
    if _is_dataset(source) or isinstance(source, Mapping):
        return _pick_split(source, split)
    import datasets

    return datasets.load_dataset(str(source), config, split=split)


def split_table(source, config: str | None = None, split: str = "train", keep: Callable[[str], bool] | None = None):
    """One split as a ``pyarrow.Table`` (see :func:`load_split` for ``source``).

    ``keep(column)`` is a hint: a build folder reads only the columns it keeps; other sources
    may return more columns.
    """
    import pyarrow as pa

    if isinstance(source, pa.Table):
        return source
    if isinstance(source, (str, Path)):
        source = locate_data(source)  # a folder, or a Hub repo id: told apart at once
        if isinstance(source, Path) and is_dataset_folder(source):
            return read_split(source, config, split, keep).table
    dataset = load_split(source, config, split)
    return dataset.with_format("arrow")[:]


def load_configs(source, configs: list[str] | None = None, split: str | None = None,
                 columns: str = "cogen") -> dict:
    """Every config of a build folder or Hub repo in one call: config -> ``DatasetDict`` (or the
    ``Dataset`` of ``split`` when given), in the card's order.

    ``configs`` limits the configs; ``columns`` names a column view (:mod:`cogen.io.views`), such as a
    family's official release layout (its column names and int64 grids), converted a batch at a time
    into the ``datasets`` cache (peak memory stays that of the plain load).
    """
    import datasets

    from cogen.io.views import AS_BUILT, column_view

    view = column_view(columns)
    if configs is None:
        if is_dataset_folder(source):
            from cogen.folder import read_manifests

            configs = list(read_manifests(source))
        else:
            configs = datasets.get_dataset_config_names(str(source))
    loaded = {}
    for name in configs:
        data = datasets.load_dataset(str(source), name, split=split)
        if view is not AS_BUILT:
            data = view.convert_dataset(data) if split is not None else \
                datasets.DatasetDict({key: view.convert_dataset(value) for key, value in data.items()})
        loaded[name] = data
    return loaded
