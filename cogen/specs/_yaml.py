"""Load YAML into plain Python values while remembering the line of every field.

Strict validation needs to say *where* a problem is ("c1.yaml, line 12,
experiments.C1-1.grid.height"); PyYAML's ``safe_load`` forgets positions, so we compose the
node tree ourselves and keep a map from field path to line number.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from cogen.errors import SpecError

__all__ = ["Located", "load_located"]

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


def load_located(text: str, source: str) -> Located:
    """Parse YAML ``text`` (from file ``source``) into plain values with line numbers."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f", line {mark.line + 1}" if mark is not None else ""
        raise SpecError(f"not valid YAML: {getattr(error, 'problem', error)}", where=f"{source}{line}",
                        fix="check indentation, colons and brackets") from None
    if node is None:
        raise SpecError("the file is empty", where=source, fix="start from one of the packaged specs")
    lines: dict[Path_, int] = {}
    return Located(_convert(node, (), lines, source), source, lines)


def _convert(node: yaml.Node, path: Path_, lines: dict[Path_, int], source: str) -> Any:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = _scalar(key_node)
            if key in result:
                raise SpecError(f"key {key!r} appears twice", where=f"{source}, line {key_node.start_mark.line + 1}",
                                fix="keep one of the two entries")
            result[key] = _convert(value_node, (*path, key), lines, source)
            lines[(*path, key)] = key_node.start_mark.line + 1
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_convert(item, (*path, i), lines, source) for i, item in enumerate(node.value)]
    return _scalar(node)


def _scalar(node: yaml.Node) -> Any:
    if not isinstance(node, yaml.ScalarNode):
        raise SpecError("a mapping key must be a plain value", where=f"line {node.start_mark.line + 1}")
    return yaml.constructor.SafeConstructor().construct_object(node)


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
