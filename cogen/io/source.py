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

__all__ = ["load_split", "split_table"]


def _is_dataset(source) -> bool:
    return hasattr(source, "with_format") and hasattr(source, "features") and not isinstance(source, Mapping)


def _pick_split(source, split: str):
    if isinstance(source, Mapping):  # a DatasetDict
        if split not in source:
            raise DataError(f"no split {split!r}; this dataset has {', '.join(source)}")
        return source[split]
    return source


def _build_folder_table(folder: Path, config: str | None, split: str, keep: Callable[[str], bool] | None):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from cogen.build.manifest import read_manifests

    manifests = read_manifests(folder)
    if config is None and len(manifests) == 1:
        config = next(iter(manifests))
    if config not in manifests:
        raise DataError(f"{folder} has no config {config!r}; it has {', '.join(manifests) or 'none'}")
    splits = manifests[config]["splits"]
    if split not in splits:
        raise DataError(f"config {config} has no split {split!r}; it has {', '.join(splits)}")
    columns = [c for c in manifests[config]["columns"] if keep(c)] if keep else None
    tables = [pq.read_table(folder / file, columns=columns) for file in splits[split]["files"]]
    return pa.concat_tables(tables).replace_schema_metadata(None)


def _is_build_folder(source) -> bool:
    return isinstance(source, (str, Path)) and (Path(source) / "manifests").is_dir()


def load_split(source, config: str | None = None, split: str = "train"):
    """One split as a ``datasets.Dataset``.

    ``source`` is a ``Dataset`` (returned as is), a ``DatasetDict``, a local folder (a build
    folder or any folder ``load_dataset`` reads) or a Hub repo id such as ``"org/cogitao"``.
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
    if _is_build_folder(source):
        return _build_folder_table(Path(source), config, split, keep)
    dataset = load_split(source, config, split)
    return dataset.with_format("arrow")[:]
