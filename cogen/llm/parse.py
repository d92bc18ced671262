"""Turn model replies into predictions for ``cogen eval``.

A reply holds its answer as a 2-D list of integers, either after the marker ``output:`` (the
protocol of episodic prompts: the grid after the *last* marker counts) or, with no marker, as
the whole reply (prompts that ask for the bare list; a surrounding Markdown code fence is
tolerated). Anything else is *unparsable*; a list that is found but is not a grid of 0..9 is
*malformed* (:func:`cogen.metrics.grids.check_grid` gives the reason). Both become ``null``
predictions, which ``cogen eval`` counts as format errors and leaves out of ``*_valid`` accuracies
(the papers exclude unparsable replies from accuracy).
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cogen.errors import EvalError
from cogen.metrics.grids import check_grid

__all__ = ["MARKERS", "REPLY_KEYS", "ParseReport", "extract_list", "parse_replies", "parse_reply"]

#: ``auto``: the marker when present, else the bare reply; ``output``: the marker is required
#: (episodic prompts); ``raw``: the whole reply must be the list (prompts that ask for the bare list).
MARKERS = ("auto", "output", "raw")
#: Keys a replies record may hold its text under (first present wins).
REPLY_KEYS = ("reply", "response", "text", "content")

_MARKER = re.compile(r"output\s*:", re.IGNORECASE)
_FENCE = re.compile(r"^```[\w-]*\s*|\s*```$")


def extract_list(text: str, start: int = 0) -> str | None:
    """The bracketed text from the first ``[`` at or after ``start`` to its matching ``]``."""
    open_at = text.find("[", start)
    if open_at < 0:
        return None
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "[":
            depth += 1
        elif text[i] == "]":
            depth -= 1
            if depth == 0:
                return text[open_at: i + 1]
    return None


def _literal(text: str):
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def parse_reply(text: str | None, marker: str = "auto") -> tuple[np.ndarray | None, str | None]:
    """``(grid, None)``, or ``(None, reason)`` with reason ``unparsable`` or a grid-check reason.

    >>> parse_reply("I think... output: [[1, 0], [0, 1]]")[0].tolist()
    [[1, 0], [0, 1]]
    >>> parse_reply("no grid here")
    (None, 'unparsable')
    """
    if marker not in MARKERS:
        raise EvalError(f"marker must be one of {', '.join(MARKERS)}, not {marker!r}")
    if not isinstance(text, str):
        return None, "unparsable"
    found = list(_MARKER.finditer(text)) if marker != "raw" else []
    if found:
        candidate = extract_list(text, found[-1].end())
    elif marker == "output":
        candidate = None
    else:
        bare = _FENCE.sub("", text.strip()).strip()
        candidate = bare if bare.startswith("[") and extract_list(bare) == bare else None
    value = None if candidate is None else _literal(candidate)
    if value is None:
        return None, "unparsable"
    return check_grid(value)


@dataclass(frozen=True)
class ParseReport:
    """Counts of a replies file: ``total`` records, ``parsed`` grids, and the reasons of the rest."""

    total: int
    parsed: int
    reasons: dict[str, int]
    unreadable_lines: int = 0

    @property
    def unparsable(self) -> int:
        """Replies without a grid."""
        return self.total - self.parsed


def _reply_text(record: dict) -> str | None:
    for key in REPLY_KEYS:
        if key in record:
            return record[key]
    return None


def parse_replies(replies: str | Path, out: str | Path, marker: str = "auto") -> ParseReport:
    """Parse a JSONL file of ``{"id": ..., "reply": ...}`` records into a predictions file
    (``.jsonl`` or ``.parquet``) for ``cogen eval``; unparsable replies become null predictions."""
    from cogen.eval.predictions import read_records, write_predictions

    replies = Path(replies)
    if not replies.is_file():
        raise EvalError(f"{replies}: no such replies file")
    parsed, reasons = [], Counter()
    records, unreadable = read_records(replies)
    for record in records:
        grid, reason = parse_reply(_reply_text(record), marker)
        if reason:
            reasons[reason] += 1
        parsed.append((record["id"], grid))
    write_predictions(out, parsed)
    return ParseReport(len(parsed), len(parsed) - sum(reasons.values()), dict(reasons), unreadable)
