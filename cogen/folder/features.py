"""Column types written once, rendered three ways: Arrow schema, HF ``Features`` dict, card YAML.

A column type is a short string: a scalar (``"string"``, ``"int8"``, ``"int16"``, ``"int32"``,
``"int64"``, ``"bool"``, ``"float32"``) or ``"list<...>"`` of a type. Grids are
``"list<list<int8>>"`` (the true H x W, no padding). ``"image"`` is an encoded image
(``struct<bytes, path>``, which ``datasets`` decodes as ``datasets.Image``). Keeping this free of ``datasets`` lets
worker processes write Hub-ready Parquet without paying its import.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

__all__ = ["Columns", "arrow_schema", "card_features", "hf_features_dict"]

Columns = Mapping[str, str]  # column name -> type string, in column order
_SCALARS = ("string", "int8", "int16", "int32", "int64", "bool", "float32")


def _inner(type_: str) -> str | None:
    if type_.startswith("list<") and type_.endswith(">"):
        return type_[5:-1]
    if type_ not in _SCALARS and type_ != "image":
        raise ValueError(f"unknown column type {type_!r}")
    return None


def arrow_type(type_: str):
    """The pyarrow type of a type string."""
    import pyarrow as pa

    inner = _inner(type_)
    if inner is not None:
        return pa.list_(arrow_type(inner))
    if type_ == "image":
        return pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    return {"string": pa.string(), "bool": pa.bool_(), "float32": pa.float32()}.get(type_) or getattr(pa, type_)()


def hf_feature(type_: str) -> dict:
    """One column in ``datasets.Features.to_dict()`` form."""
    inner = _inner(type_)
    if inner is not None:
        return {"feature": hf_feature(inner), "_type": "List"}
    if type_ == "image":
        return {"_type": "Image"}
    return {"dtype": type_, "_type": "Value"}


def hf_features_dict(columns: Columns) -> dict:
    """The whole ``Features.to_dict()`` of ``columns``."""
    return {name: hf_feature(type_) for name, type_ in columns.items()}


def arrow_schema(columns: Columns):
    """Arrow schema carrying the ``huggingface`` metadata, so every shard knows its features."""
    import pyarrow as pa

    metadata = {b"huggingface": json.dumps({"info": {"features": hf_features_dict(columns)}}).encode()}
    return pa.schema([pa.field(name, arrow_type(t)) for name, t in columns.items()], metadata=metadata)


def _card_type(type_: str):
    inner = _inner(type_)
    return {"list": _card_type(inner)} if inner is not None else type_


def card_features(columns: Columns) -> list[dict]:
    """``dataset_info.features`` entries for the dataset card's YAML header."""
    out = []
    for name, type_ in columns.items():
        inner = _inner(type_)
        out.append({"name": name, "list": _card_type(inner)} if inner is not None else {"name": name, "dtype": type_})
    return out
