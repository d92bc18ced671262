"""Field readers shared by every spec parser: strict keys, ``[lo, hi]`` ranges, names, ints.

Each reader takes the :class:`Located` document and the field path, so its errors say where.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from cogen.errors import SpecError, close_matches
from cogen.folder.names import NAME_RULE, name_problem
from cogen.specs._yaml import Located, Path_

__all__ = ["Range", "expect_keys", "read_choice", "read_int", "read_mapping", "read_name", "read_range", "read_str",
           "read_list"]


class Range(tuple):
    """An inclusive integer range ``[lo, hi]`` (a 2-tuple, so it hashes and compares)."""

    __slots__ = ()

    def __new__(cls, lo, hi=None):
        if hi is None:  # Range([lo, hi]) or Range(iterable), as dataclasses.asdict rebuilds it
            lo, hi = lo
        return super().__new__(cls, (int(lo), int(hi)))

    @property
    def lo(self) -> int:
        return self[0]

    @property
    def hi(self) -> int:
        return self[1]

    def __repr__(self) -> str:
        return f"[{self.lo}, {self.hi}]"


def read_mapping(doc: Located, path: Path_, value: Any) -> Mapping[str, Any]:
    """``value`` must be a mapping."""
    if not isinstance(value, Mapping):
        raise SpecError(f"expected a mapping (key: value lines), got {_kind(value)}", where=doc.where(path))
    return value


def expect_keys(doc: Located, path: Path_, value: Any, required: Iterable[str], optional: Iterable[str] = ()) -> Mapping:
    """``value`` must be a mapping with all ``required`` keys and no key outside ``required | optional``."""
    mapping = read_mapping(doc, path, value)
    required, optional = tuple(required), tuple(optional)
    allowed = required + optional
    for key in mapping:
        if key not in allowed:
            hint = close_matches(str(key), allowed)
            fix = f"did you mean {hint[0]!r}? " if hint else ""
            raise SpecError(f"unknown key {key!r}", where=doc.where((*path, key)),
                            fix=f"{fix}valid keys here: {', '.join(allowed)}")
    for key in required:
        if key not in mapping:
            raise SpecError(f"missing required key {key!r}", where=doc.where(path),
                            fix=f"add `{key}:` (required keys here: {', '.join(required)})")
    return mapping


def read_int(doc: Located, path: Path_, value: Any, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` must be an integer within ``[minimum, maximum]``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecError(f"expected an integer, got {_kind(value)}", where=doc.where(path))
    if minimum is not None and value < minimum:
        raise SpecError(f"{value} is below the minimum {minimum}", where=doc.where(path))
    if maximum is not None and value > maximum:
        raise SpecError(f"{value} is above the maximum {maximum}", where=doc.where(path))
    return value


def read_str(doc: Located, path: Path_, value: Any) -> str:
    """``value`` must be a non-empty string."""
    if not isinstance(value, str) or not value.strip():
        raise SpecError(f"expected a non-empty string, got {_kind(value)}", where=doc.where(path))
    return value


def read_name(doc: Located, path: Path_, value: Any, what: str = "config") -> str:
    """``value`` must be a name that can become a folder and file names (:mod:`cogen.folder.names`);
    the error names the file, the line, the name and the rule."""
    problem = name_problem(value)
    if problem is not None:
        shown = repr(value if not isinstance(value, str) else value[:80])
        raise SpecError(f"{what} name {shown} cannot be used: {problem}", where=doc.where(path),
                        fix=f"rename it: {NAME_RULE}")
    return value


def read_choice(doc: Located, path: Path_, value: Any, choices: Iterable[str], meaning: str = "") -> str:
    """``value`` must be one of ``choices``; the error lists them (and what they mean, when given)."""
    choices = tuple(choices)
    if value not in choices:
        hint = close_matches(str(value), choices)
        fix = f"did you mean {hint[0]!r}? " if hint else ""
        raise SpecError(f"unknown value {value!r}", where=doc.where(path),
                        fix=f"{fix}use one of: {', '.join(choices)}" + (f" ({meaning})" if meaning else ""))
    return value


def read_list(doc: Located, path: Path_, value: Any, non_empty: bool = True) -> list:
    """``value`` must be a list (non-empty unless told otherwise)."""
    if not isinstance(value, list):
        raise SpecError(f"expected a list, got {_kind(value)}", where=doc.where(path), fix="write it as [a, b] or as `- item` lines")
    if non_empty and not value:
        raise SpecError("the list is empty", where=doc.where(path))
    return value


def read_range(doc: Located, path: Path_, value: Any, minimum: int, maximum: int) -> Range:
    """``value`` must be ``[lo, hi]`` (or a single int meaning ``[n, n]``) with minimum <= lo <= hi <= maximum."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value, value]
    if not (isinstance(value, list) and len(value) == 2):
        raise SpecError(f"expected a range [lo, hi], got {_kind(value)}", where=doc.where(path),
                        fix="write e.g. [2, 4] (both ends included) or a single number")
    lo = read_int(doc, (*path, 0), value[0], minimum, maximum)
    hi = read_int(doc, (*path, 1), value[1], minimum, maximum)
    if lo > hi:
        raise SpecError(f"empty range [{lo}, {hi}]: lo is greater than hi", where=doc.where(path),
                        fix=f"write [{hi}, {lo}]")
    return Range(lo, hi)


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"a boolean ({value})"
    if isinstance(value, (int, float, str)):
        return f"{type(value).__name__} {value!r}"
    return f"a {type(value).__name__}"
