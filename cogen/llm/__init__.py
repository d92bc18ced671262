"""In-context evaluation of language models: export prompts, parse replies into predictions.

* each family's prompt maker (the ``prompts`` role of its record, ``cogen/families/<name>/prompts.py``):
  task codes with in-context examples, an episode's study examples and one query, pairs and a
  request for code, as the family's papers prompt
* :func:`parse_reply`, :func:`parse_replies`  replies -> a predictions file for ``cogen eval``
* :func:`export_prompts`   the prompts of one split written as JSONL

The reply protocol, the task-code mapping and the example-selection rule are documented in
the families' prompt modules, :mod:`cogen.llm.parse` and ``docs/evaluation.md``.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cogen.llm.parse import MARKERS, ParseReport, parse_replies, parse_reply
from cogen.llm.prompts import Prompt, format_grid

__all__ = ["MARKERS", "ParseReport", "Prompt", "export_prompts", "format_grid", "parse_replies", "parse_reply"]


def export_prompts(data: str | Path, config: str, split: str, out: str | Path,
                   progress: Callable[[str, int, int], None] | None = None, **options: Any) -> int:
    """Write the prompts of ``split`` of ``config`` to ``out`` (JSONL: ``id``, ``prompt`` and how it
    was made); returns how many.

    ``options`` are the family's prompt maker's keyword parameters (``None`` leaves one at its
    default), described by the ``prompt_help`` of its record (``cogen prompts export --help`` lists
    them by family). An option the family does not take is an error.
    ``progress("prompts", advance, total)`` hears of every prompt written (``advance=0``: the total).
    """
    from cogen.errors import EvalError, os_error_text
    from cogen.family import family
    from cogen.folder import read_split

    split_data = read_split(data, config, split)
    record = family(split_data.family)
    given = _prompt_options(record, split_data.config, options)
    prompts = record.make_prompts(data, split_data, **given)
    if progress:
        progress("prompts", 0, _prompt_count(split_data, given))
    out = Path(out)
    count = 0
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as handle:
            for prompt in prompts:
                handle.write(json.dumps(prompt.as_dict()) + "\n")
                count += 1
                if progress:
                    progress("prompts", 1, 0)
    except OSError as error:
        raise EvalError(f"cannot write {out}: {os_error_text(error)}") from None
    return count


def _prompt_count(split_data, options: dict[str, Any]) -> int:
    """How many prompts a split makes: one per prediction id it expects."""
    from cogen.eval import expected_ids
    from cogen.family import family

    evaluator = family(split_data.family).evaluation()
    return len(expected_ids(split_data, **{k: v for k, v in options.items() if k in evaluator.OPTIONS}))


def _prompt_options(record, config: str, options: dict[str, Any]) -> dict[str, Any]:
    """The options given (not ``None``) that the family's prompt maker takes; a clear error for any other."""
    from cogen.errors import EvalError

    accepted = inspect.signature(record.load("prompts")).parameters
    given = {name: value for name, value in options.items() if value is not None}
    for name in given:
        if name not in accepted or name in ("data", "split"):
            raise EvalError(f"option {name!r} does not apply to prompts for {record.title} configs such as {config}")
    return given
