"""Python code in a model's reply, fenced or not.

* With Markdown fences (```` ```python ````, ```` ```py ````, or a bare ```` ``` ````; an unclosed
  fence runs to the end of the reply): the last Python block that defines the requested function
  (``def f(``), else the last block that parses, else the last block.
* Without fences: the whole reply when it parses as Python; otherwise the lines from the first
  one that starts code (``def``, ``import``, ``from``, ``class``, a decorator, an assignment, a
  comment) up to the longest stretch that parses — so prose before and after the code is dropped.
  A reply with no such line holds no code.

:func:`extract_code` returns the code, or ``None`` and the reason (``no code``). A stretch that
never parses is still returned: the scorer reports its syntax error.
"""

from __future__ import annotations

import ast
import re

__all__ = ["MAX_REPLY", "extract_code"]

#: Longest reply read (characters); the rest is ignored.
MAX_REPLY = 1_000_000
_FENCE = re.compile(r"```[ \t]*([\w+.-]*)[^\n]*\n(.*?)(?:\n[ \t]*```|\Z)", re.S)
_PYTHON = {"", "python", "py", "python3", "py3", "python3.11", "python3.12"}
_CODE_START = re.compile(r"^(def |async def |import |from \S+ import |class |@|#|[A-Za-z_][\w.\[\], ]*\s*[+\-*/]?=[^=])")
_MAX_TRIES = 400


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _defines(code: str, function: str) -> bool:
    return re.search(rf"^\s*(async\s+)?def\s+{re.escape(function)}\s*\(", code, re.M) is not None


def _fenced(reply: str, function: str) -> str | None:
    blocks = [body for lang, body in _FENCE.findall(reply) if lang.lower() in _PYTHON and body.strip()]
    if not blocks:
        return None
    for test in (lambda b: _defines(b, function) and _parses(b), lambda b: _defines(b, function), _parses):
        chosen = [b for b in blocks if test(b)]
        if chosen:
            return chosen[-1]
    return blocks[-1]


def _unfenced(reply: str) -> str | None:
    if _parses(reply) and _CODE_START.search(reply.lstrip()):
        return reply
    lines = reply.split("\n")
    first = next((i for i, line in enumerate(lines) if _CODE_START.match(line)), None)
    if first is None:
        return None
    tail = lines[first:]
    for stop in range(len(tail), max(0, len(tail) - _MAX_TRIES), -1):
        candidate = "\n".join(tail[:stop])
        if _parses(candidate):
            return candidate
    return "\n".join(tail)


def extract_code(reply, function: str = "f") -> tuple[str | None, str | None]:
    """``(code, None)``, or ``(None, "no code")`` for a reply without any."""
    if not isinstance(reply, str) or not reply.strip():
        return None, "no code"
    reply = reply[:MAX_REPLY].replace("\r\n", "\n")
    code = _fenced(reply, function) if "```" in reply else None
    if code is None:
        code = _unfenced(reply.strip("\n"))
    if code is None or not code.strip():
        return None, "no code"
    return code.strip("\n") + "\n", None
