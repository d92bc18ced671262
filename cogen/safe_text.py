"""Untrusted text made safe to show: exception messages, function and model names, program excerpts.

Programs and replies files are hostile input. Their text reaches JSON, Markdown and the terminal only
through :func:`clean`, which drops every control and format character (ESC sequences, bidirectional
overrides, NUL, line separators) and bounds the length, and, for Markdown, :func:`markdown_cell`.

>>> clean("KeyError: '\\x1b[31mred\\x1b[0m'")
"KeyError: '?[31mred?[0m'"
>>> markdown_cell("a|b <script>")
'a\\\\|b &lt;script&gt;'
"""

from __future__ import annotations

import unicodedata

__all__ = ["LIMIT", "clean", "identifier", "markdown_cell"]

#: Longest text kept (characters); longer text ends with an ellipsis.
LIMIT = 160


def _safe(character: str) -> str:
    if character in "\t\n\r\v\f":
        return " "
    category = unicodedata.category(character)
    return "?" if category[0] == "C" or category in ("Zl", "Zp") else character


def clean(text: object, limit: int = LIMIT) -> str:
    """``text`` on one line, without control or format characters, at most ``limit`` characters."""
    text = text if isinstance(text, str) else str(text)
    text = " ".join("".join(_safe(c) for c in text[: 4 * limit]).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def identifier(text: object, fallback: str = "?") -> str:
    """``text`` when it is a Python identifier of at most 60 characters (a function or exception name),
    else ``fallback``: such names can never look like the sandbox's own reasons, which hold spaces."""
    return text if isinstance(text, str) and text.isidentifier() and len(text) <= 60 else fallback


_MARKDOWN = {"|": "\\|", "\\": "\\\\", "<": "&lt;", ">": "&gt;", "`": "\\`", "[": "\\[", "]": "\\]"}


def markdown_cell(text: object, limit: int = 80) -> str:
    """:func:`clean` text that cannot end a table cell, open a link or inject HTML in Markdown."""
    return "".join(_MARKDOWN.get(c, c) for c in clean(text, limit))
