"""Object queries: conjunctions of boolean properties, numeric ranges and metadata values.

A query is a mapping ``{name: condition}``; :func:`parse_where` reads the CLI's short form::

    "is_shape_fully_connected, rows<6, cols<=5, !is_shape_hollow, family=grown"
    -> {"is_shape_fully_connected": True, "rows": (None, 5), "cols": (None, 5),
        "is_shape_hollow": False, "family": "grown"}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Union

import numpy as np

from cogen.errors import SpecError, UnknownNameError

__all__ = ["Condition", "Where", "parse_where", "select_mask"]

Condition = Union[bool, int, str, tuple]
Where = Mapping[str, Condition]

_TERM = re.compile(
    r"^(?P<neg>!|not\s+)?(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"(?:\s*(?P<op><=|>=|==|=|<|>)\s*(?P<value>[^\s].*?))?$"
)
_RANGE = re.compile(r"^(-?\d+)\s*\.\.\s*(-?\d+)$")
_TRUE, _FALSE = {"true", "yes"}, {"false", "no"}


def _value(op: str, text: str, where: str) -> Condition:
    """The condition for ``name <op> text``."""
    lowered = text.lower()
    if op in ("=", "==") and (lowered in _TRUE or lowered in _FALSE):
        return lowered in _TRUE
    match = _RANGE.match(text)
    if match and op in ("=", "=="):
        return int(match[1]), int(match[2])
    if re.fullmatch(r"-?\d+", text):
        k = int(text)
        return {"<": (None, k - 1), "<=": (None, k), ">": (k + 1, None), ">=": (k, None)}.get(op, (k, k))
    if op in ("=", "=="):
        return text
    raise SpecError(f"{op} needs a whole number, got {text!r}", where=where,
                    fix="write e.g. rows<6, pixels>=3, rows=2..5 or family=grown")


def _merge(name: str, old: Condition, new: Condition, where: str) -> Condition:
    """Combine two conditions on one name: ranges intersect, anything else must agree."""
    if isinstance(old, tuple) and isinstance(new, tuple):
        lows = [v for v in (old[0], new[0]) if v is not None]
        highs = [v for v in (old[1], new[1]) if v is not None]
        return (max(lows) if lows else None, min(highs) if highs else None)
    if old == new and type(old) is type(new):
        return old
    raise SpecError(f"{name} is given two conditions that contradict each other", where=where)


def parse_where(text: str) -> dict[str, Condition]:
    """Parse ``"prop, !prop, rows<6, cols<=5, pixels>=3, rows=2..5, family=grown"``.

    Terms are separated by commas (or ``and``); names are checked later, against the bank.
    """
    conditions: dict[str, Condition] = {}
    terms = [t.strip() for t in re.split(r",|\band\b", text)]
    if not any(terms):
        raise SpecError("empty --where", fix="give e.g. 'is_shape_fully_connected, rows<6'")
    for position, term in enumerate(terms, 1):
        where = f"--where term {position} {term!r}"
        match = _TERM.match(term)
        if not term or not match or (match["neg"] and match["op"]):
            raise SpecError("cannot read this term", where=where,
                            fix="use name, !name, name=true, name<6, name>=3, name=2..5 or name=value")
        name = match["name"]
        condition = _value(match["op"], match["value"], where) if match["op"] else not match["neg"]
        conditions[name] = _merge(name, conditions[name], condition, where) if name in conditions else condition
    return conditions


def _column_mask(name: str, column: np.ndarray, condition: Condition) -> np.ndarray:
    """Boolean mask of the rows of ``column`` meeting ``condition``."""
    if column.dtype == bool:
        if not isinstance(condition, (bool, np.bool_)):
            raise SpecError(f"{name} is a yes/no property: give True or False, not {condition!r}")
        return column == bool(condition)
    if column.dtype.kind in "US":
        if not isinstance(condition, str):
            raise SpecError(f"{name} holds names: give one of them as a string, not {condition!r}")
        if condition not in set(column.tolist()):
            raise UnknownNameError(f"{name} value", condition, sorted(set(column.tolist())))
        return column == condition
    return _range_mask(name, column, condition)


def _range_mask(name: str, column: np.ndarray, condition: Condition) -> np.ndarray:
    if isinstance(condition, (bool, np.bool_, str)):
        raise SpecError(f"{name} is numeric: give a range (lo, hi) or a number, not {condition!r}")
    if isinstance(condition, (int, np.integer)):
        condition = (condition, condition)
    try:
        lo, hi = condition
    except (TypeError, ValueError):
        raise SpecError(f"{name}: a range is a pair (lo, hi), got {condition!r}") from None
    mask = np.ones(len(column), bool)
    if lo is not None:
        mask &= column >= lo
    if hi is not None:
        mask &= column <= hi
    return mask


def select_mask(columns: Mapping[str, np.ndarray], n: int, where: Where) -> np.ndarray:
    """Rows of a table (``columns``, ``n`` rows) meeting every condition of ``where``."""
    mask = np.ones(n, bool)
    for name, condition in where.items():
        if name not in columns:
            raise UnknownNameError("object property or column", name, columns)
        mask &= _column_mask(name, columns[name], condition)
    return mask
