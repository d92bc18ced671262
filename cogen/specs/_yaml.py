"""Load YAML into plain Python values while remembering the line of every field.

Strict validation needs to say *where* a problem is ("c1.yaml, line 12,
experiments.C1-1.grid.height"); PyYAML's ``safe_load`` forgets positions, so we compose the
node tree ourselves and keep a map from field path to line number.

The tree is composed by libyaml's C parser where PyYAML has it (15 times faster than the Python
one) and the text holds none of the characters the two read differently (:data:`C_PARSER_AVOIDS`:
YAML 1.1's extra line breaks, byte-order marks and tabs, found by comparing the two on mutated specs).
A text the C parser refuses is read again by the Python one, so every message is the one it gives.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from cogen.errors import SpecError

__all__ = ["C_PARSER_AVOIDS", "Located", "compose", "load_located"]

Path_ = tuple[Any, ...]


@dataclass(frozen=True)
class Located:
    """A parsed YAML document plus the source line (1-based) of every field path."""

    data: Any
    source: str
    lines: dict[Path_, int] = field(default_factory=dict)

    def where(self, path: Path_) -> str:
        """Human-readable location of ``path``: file, line and dotted field name."""
        line = self._line(path)
        dotted = dotted_path(path)
        parts = [self.source]
        if line is not None:
            parts.append(f"line {line}")
        if dotted:
            parts.append(f"field {dotted}")
        return ", ".join(parts)

    def _line(self, path: Path_) -> int | None:
        while True:
            if path in self.lines:
                return self.lines[path]
            if not path:
                return None
            path = path[:-1]


def dotted_path(path: Path_) -> str:
    """``("experiments", "C1-1", "sequences", 2)`` -> ``experiments.C1-1.sequences[2]``."""
    text = ""
    for key in path:
        text += f"[{key}]" if isinstance(key, int) else (f".{key}" if text else str(key))
    return text


#: Most values a spec may hold once its aliases (``*name``) are expanded: a packaged spec holds a few
#: hundred, and a "billion laughs" file, a few lines of nested aliases, would hold billions.
MAX_VALUES = 100_000
#: Deepest nesting of lists and mappings a spec may have (packaged specs: 6).
MAX_DEPTH = 50


def load_located(text: str, source: str) -> Located:
    """Parse YAML ``text`` (from file ``source``) into plain values with line numbers.

    Aliases are expanded within limits (:data:`MAX_VALUES`, :data:`MAX_DEPTH`; an alias inside
    the value it names is refused), so no file makes the reader hang or run out of memory.
    """
    try:
        node = compose(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f", line {mark.line + 1}" if mark is not None else ""
        raise SpecError(f"not valid YAML: {getattr(error, 'problem', error)}", where=f"{source}{line}",
                        fix="check indentation, colons and brackets") from None
    except RecursionError:
        raise SpecError(f"nested more than {MAX_DEPTH} levels deep", where=source,
                        fix="a spec needs a few levels of lists and mappings; check the brackets") from None
    if node is None:
        raise SpecError("the file is empty", where=source, fix="start from one of the packaged specs")
    lines: dict[Path_, int] = {}
    return Located(_Converter(source, lines).convert(node, ()), source, lines)


#: Characters that libyaml's parser and PyYAML's Python parser read differently (the Python one takes
#: NEL, LS and PS for line breaks and refuses tabs and byte-order marks where libyaml takes them): a
#: text holding one is composed by the Python parser alone.
C_PARSER_AVOIDS = frozenset("\t\x85\u2028\u2029\ufeff")


def compose(text: str) -> yaml.Node | None:
    """The node tree of ``text``, as ``yaml.compose`` with the Python ``SafeLoader`` makes it (its tags,
    values and lines), by libyaml's C parser where that gives the same tree."""
    loader = getattr(yaml, "CSafeLoader", None)
    if loader is not None and C_PARSER_AVOIDS.isdisjoint(text):
        try:
            return yaml.compose(text, Loader=loader)
        except yaml.YAMLError:
            pass  # the Python parser says what is wrong, in the words users have seen
    return yaml.compose(text, Loader=yaml.SafeLoader)


class _Converter:
    """Turns a composed node tree into plain values, counting what aliases expand to."""

    def __init__(self, source: str, lines: dict[Path_, int]):
        self.source, self.lines = source, lines
        self.values = 0
        self.open: set[int] = set()  # the nodes being converted: one met again is an alias inside itself

    def convert(self, node: yaml.Node, path: Path_) -> Any:
        self._count(node, path)
        self.lines[path] = node.start_mark.line + 1
        if not isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
            return _scalar(node, self.source)
        self.open.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                return [self.convert(item, (*path, i)) for i, item in enumerate(node.value)]
            return self._mapping(node, path)
        finally:
            self.open.discard(id(node))

    def _count(self, node: yaml.Node, path: Path_) -> None:
        where = f"{self.source}, line {node.start_mark.line + 1}"
        if id(node) in self.open:
            raise SpecError("an alias refers to the value that contains it (an endless value)", where=where,
                            fix="write the value out, or point the alias at another value")
        if len(path) > MAX_DEPTH:
            raise SpecError(f"nested more than {MAX_DEPTH} levels deep", where=where,
                            fix="a spec needs a few levels of lists and mappings; check the brackets")
        self.values += 1
        if self.values > MAX_VALUES:
            raise SpecError(f"the spec holds more than {MAX_VALUES:,} values once its aliases (*name) are expanded",
                            where=where, fix="write the values out instead of nesting aliases")

    def _mapping(self, node: yaml.MappingNode, path: Path_) -> dict:
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = _scalar(key_node, self.source)
            if key in result:
                raise SpecError(f"key {key!r} appears twice", where=f"{self.source}, line {key_node.start_mark.line + 1}",
                                fix="keep one of the two entries")
            result[key] = self.convert(value_node, (*path, key))
            self.lines[(*path, key)] = key_node.start_mark.line + 1
        return result


def _scalar(node: yaml.Node, source: str) -> Any:
    where = f"{source}, line {node.start_mark.line + 1}"
    if not isinstance(node, yaml.ScalarNode):
        raise SpecError("a mapping key must be a plain value", where=where)
    try:
        return yaml.constructor.SafeConstructor().construct_object(node)
    except (yaml.YAMLError, ValueError, OverflowError) as error:
        raise SpecError(f"cannot read the value {node.value[:40]!r} ({type(error).__name__})", where=where,
                        fix="quote it to make it text, or write a plain number") from None


def read_located(path: Path) -> Located:
    """Read and parse a YAML file; a missing or unreadable file is a clear :class:`SpecError`."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        from cogen._resources import packaged_specs

        raise SpecError("file not found", where=str(path),
                        fix="pass a path to a spec file or a packaged spec name: "
                            + ", ".join(packaged_specs())) from None
    except (OSError, UnicodeDecodeError) as error:
        raise SpecError(f"cannot read the file ({error})", where=str(path)) from None
    return load_located(text, str(path))
