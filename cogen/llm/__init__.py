"""In-context evaluation of language models: export prompts, parse replies into predictions.

* each family's prompt maker (the ``prompts`` role of its record, ``cogen/families/<name>/prompts.py``):
  task codes with in-context examples, an episode's study examples and one query, pairs and a
  request for code, as the family's papers prompt
* :func:`parse_reply`, :func:`parse_replies`  replies -> a predictions file for ``cogen eval``
* :func:`export_prompts`   the prompts of one split written as JSONL (:func:`make_prompts`: the same prompts)
* :mod:`cogen.llm.run`     ``cogen prompts run``: every prompt sent to an OpenAI-compatible server, each
  reply kept once, the run scored (:mod:`cogen.llm.client`: the HTTP client)
* :mod:`cogen.llm.inspect_tasks`  the same prompts and scores as Inspect AI tasks, one per family

The reply protocol, the task-code mapping and the example-selection rule are documented in
the families' prompt modules, :mod:`cogen.llm.parse` and ``docs/evaluation.md``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogen.llm.parse import MARKERS, ParseReport, parse_replies, parse_reply
from cogen.llm.prompts import Prompt, format_grid

__all__ = ["MARKERS", "MadePrompts", "ParseReport", "Prompt", "export_prompts", "format_grid", "make_prompts",
           "parse_replies", "parse_reply", "scoring_options"]


def export_prompts(data: str | Path, config: str, split: str, out: str | Path,
                   progress: Callable[[str, int, int], None] | None = None, **options: Any) -> int:
    """Write the prompts of ``split`` of ``config`` to ``out`` (JSONL: ``id``, ``prompt`` and how it
    was made); returns how many.

    ``options`` are the family's prompt options (``None`` leaves one at its default), as its record
    declares them (``cogen prompts export --help`` lists them by family), checked as declared. An
    option the family does not take is an error.
    ``progress("prompts", advance, total)`` hears of every prompt written (``advance=0``: the total).
    """
    from cogen.errors import EvalError, os_error_text

    made = make_prompts(data, config, split, **options)
    if progress:
        progress("prompts", 0, made.count())
    out = Path(out)
    count = 0
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as handle:
            for prompt in made.prompts:
                handle.write(json.dumps(prompt.as_dict()) + "\n")
                count += 1
                if progress:
                    progress("prompts", 1, 0)
    except OSError as error:
        raise EvalError(f"cannot write {out}: {os_error_text(error)}") from None
    return count


@dataclass
class MadePrompts:
    """The prompts of one split as its family makes them: ``prompts`` (an iterator of :class:`Prompt`),
    the ``split`` read, its family ``record``, the prompt ``options`` given (checked) and the
    ``eval_options`` that score these prompts (:func:`scoring_options`)."""

    split: Any
    record: Any
    options: dict[str, Any]
    eval_options: dict[str, Any]
    prompts: Iterator[Prompt]

    def count(self) -> int:
        """How many prompts the split makes without ``--per-experiment``: one per prediction id it expects."""
        evaluator = self.record.evaluation()
        return len(evaluator.expected_ids(self.split, **self.eval_options))


def make_prompts(data: str | Path, config: str, split: str, **options: Any) -> MadePrompts:
    """The prompts of ``split`` of ``config`` in ``data``, made by the family's prompt maker with
    ``options`` (checked as its record declares them): what ``cogen prompts export`` writes, ``cogen
    prompts run`` sends and the Inspect tasks ask."""
    from cogen.family import family
    from cogen.folder import read_split

    split_data = read_split(data, config, split)
    record = family(split_data.family)
    given = record.check_options("prompts", options, split_data.config)
    return MadePrompts(split_data, record, given, scoring_options(record, given),
                       record.make_prompts(data, split_data, **given))


def scoring_options(record, prompt_options: dict[str, Any]) -> dict[str, Any]:
    """The ``eval`` options that score a family's prompts: an option its record declares for both
    the prompts and the evaluation (which queries of an episode) takes the prompts' value, given or
    default, so that the prompts asked and the predictions expected are the same."""
    prompts, scoring = record.options_for("prompts"), record.options_for("eval")
    values = {name: prompt_options.get(name, prompts[name].default) for name in prompts if name in scoring}
    return {name: value for name, value in values.items() if value is not None}
