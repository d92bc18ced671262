"""Python code in a model's reply, fenced or not, found in bounded time.

* With Markdown fences (```` ```python ````, ```` ```py ````, or a bare ```` ``` ````; an unclosed
  fence runs to the end of the reply; a fence indented inside a list is dedented): the last Python
  block that defines the requested function (``def f(``), else the last block that parses, else the
  last block.
* Without fences: the whole reply when it parses as Python and holds a line that starts code (its
  first line may be any statement: ``exec(...)``, ``main()``); otherwise, from a line that starts code
  (``def``, ``import``, ``from``, ``class``, a decorator, an assignment, a comment), the stretch up
  to the first line that does not parse (each parse error cuts the stretch at its line), trying the
  next start line when the first line itself is prose. A reply with no such line holds no code.

Untrusted text never costs unbounded time: a reply longer than :data:`MAX_REPLY` characters, or code
longer than :data:`MAX_PROGRAM`, is ``too long``; the search parses at most :data:`PARSE_BUDGET`
characters in all and looks at most :data:`LINE_PREFIX` characters into each line.

:func:`extract_code` returns the code, or ``None`` and the reason (``no code`` or ``too long: ...``).
A stretch that never parses is still returned: the scorer reports its syntax error.
"""

from __future__ import annotations

import ast
import re
import textwrap

__all__ = ["MAX_PROGRAM", "MAX_REPLY", "PARSE_BUDGET", "extract_code"]

#: Longest reply read (characters); a longer one is scored as ``too long``.
MAX_REPLY = 400_000
#: Longest program scored (characters): an enumeration of the 16 samples takes about 1,000.
MAX_PROGRAM = 100_000
#: Characters :func:`extract_code` may parse in all while it looks for code without fences.
PARSE_BUDGET = 1_000_000
#: Characters of each line matched against the code-start pattern.
LINE_PREFIX = 200
_FENCE = re.compile(r"```[ \t]*([\w+.-]*)[^\n]*\n(.*?)(?:\n[ \t]*```|\Z)", re.S)
_THINKING = re.compile(r"\A\s*<think>.*?</think>", re.S)
_PYTHON = {"", "python", "py", "python3", "py3", "python3.11", "python3.12"}
_CODE_START = re.compile(r"(def |async def |import |from \S+ import |class |@|#|[A-Za-z_][\w.\[\], ]*[+\-*/]?=[^=])")


def _parse_error(code: str) -> int | None:
    """None when ``code`` parses, else the line of the error (0 when unknown)."""
    try:
        ast.parse(code)
    except SyntaxError as error:
        return error.lineno or 0
    except (ValueError, RecursionError, MemoryError):
        return 0
    return None


def _defines(code: str, function: str) -> bool:
    return re.search(rf"^[ \t]*(async[ \t]+)?def[ \t]+{re.escape(function)}[ \t]*\(", code, re.M) is not None


def _fenced(reply: str, function: str) -> str | None:
    blocks = [textwrap.dedent(body) for lang, body in _FENCE.findall(reply) if lang.lower() in _PYTHON and body.strip()]
    short = [b for b in blocks if len(b) <= MAX_PROGRAM]
    if not short:
        return blocks[-1] if blocks else None
    for test in (lambda b: _defines(b, function) and _parse_error(b) is None, lambda b: _defines(b, function),
                 lambda b: _parse_error(b) is None):
        chosen = [b for b in short if test(b)]
        if chosen:
            return chosen[-1]
    return short[-1]


def _stretch(lines: list[str], budget: list[int]) -> list[str] | None:
    """The longest parsable stretch of ``lines`` from its first line (each parse error cuts it at its
    line), or None when its first line is prose or the parse budget is spent."""
    while lines:
        code = "\n".join(lines)
        budget[0] -= len(code)
        if budget[0] < 0:
            return None
        error = _parse_error(code)
        if error is None:
            return lines
        if error <= 1:
            return None
        lines = lines[: error - 1]
    return None


def _unfenced(reply: str) -> str | None:
    reply = _THINKING.sub("", reply, count=1).strip("\n")
    lines = reply.split("\n")
    starts = [i for i, line in enumerate(lines) if _CODE_START.match(line[:LINE_PREFIX])]
    if starts and starts[0] > 0 and len(reply) <= MAX_PROGRAM and _parse_error(reply) is None:
        return reply  # the whole reply is a program that starts with another statement: exec(...), main()
    budget = [PARSE_BUDGET]
    for start in starts:
        tail = "\n".join(lines[start:])
        if len(tail) > MAX_PROGRAM:
            return tail  # too long to be scored
        found = _stretch(lines[start:], budget)
        if found and "\n".join(found).strip():
            return "\n".join(found)
        if budget[0] <= 0:
            break
    return "\n".join(lines[starts[0]:]) if starts else None


def extract_code(reply, function: str = "f") -> tuple[str | None, str | None]:
    """``(code, None)``, or ``(None, "no code")``, or ``(None, "too long: ...")``."""
    if not isinstance(reply, str) or not reply.strip():
        return None, "no code"
    if len(reply) > MAX_REPLY:
        return None, f"too long: a reply of {len(reply):,} characters (at most {MAX_REPLY:,})"
    reply = reply.replace("\r\n", "\n")
    code = _fenced(reply, function) if "```" in reply else None
    if code is None:
        code = _unfenced(reply)
    if code is None or not code.strip():
        return None, "no code"
    if len(code) > MAX_PROGRAM:
        return None, f"too long: a program of {len(code):,} characters (at most {MAX_PROGRAM:,})"
    return code.strip("\n") + "\n", None
