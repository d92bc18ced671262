"""In-context evaluation of language models: export prompts, parse replies into predictions.

* :func:`cogitao_prompts`  COGITAO prompts, ``explicit`` or ``coded`` task codes, in-context examples from train
  (or the paper's selection and sampling: :mod:`cogen.llm.paper`)
* :func:`carc_prompts`     Compositional-ARC text prompts (study examples, then one query input), optionally
  with an image of them (:mod:`cogen.llm.images`)
* :mod:`cogen.llm.programs`  string-to-grid programs: all 16 pairs and a request for code (versioned)
* :func:`parse_reply`, :func:`parse_replies`  replies -> a predictions file for ``cogen eval``
* :func:`export_prompts`   the prompts of one split written as JSONL

The reply protocol, the task-code mapping and the example-selection rule are documented in
:mod:`cogen.llm.prompts`, :mod:`cogen.llm.parse` and ``docs/evaluation.md``.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

from cogen.llm.parse import MARKERS, ParseReport, parse_replies, parse_reply
from cogen.llm.prompts import REGIMES, Prompt, carc_prompts, cogitao_prompts, format_grid, task_codes

__all__ = ["MARKERS", "REGIMES", "ParseReport", "Prompt", "carc_prompts", "cogitao_prompts", "export_prompts",
           "format_grid", "parse_replies", "parse_reply", "task_codes"]


def export_prompts(data: str | Path, config: str, split: str, out: str | Path, **options: Any) -> int:
    """Write the prompts of ``split`` of ``config`` to ``out`` (JSONL: ``id``, ``prompt`` and how it
    was made); returns how many.

    ``options`` are the family's prompt maker's (``None`` leaves one at its default): COGITAO takes
    ``regime``, ``examples`` and ``seed`` (in-context examples from the config's train split),
    ``selection`` (``paper``: the paper's selection and sampling, :mod:`cogen.llm.paper`) and
    ``per_experiment``; Compositional-ARC takes ``queries``, ``selection``, ``images`` (a folder
    for text+image prompts) and ``no_code``; string-to-grid programs take ``version``. An option
    the family does not take is an error.
    """
    from cogen.families import family
    from cogen.folder import read_split

    split_data = read_split(data, config, split)
    record = family(split_data.family)
    prompts = record.make_prompts(data, split_data, **_prompt_options(record, split_data.config, options))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with out.open("w", encoding="utf-8") as handle:
        for prompt in prompts:
            handle.write(json.dumps(prompt.as_dict()) + "\n")
            count += 1
    return count


def _prompt_options(record, config: str, options: dict[str, Any]) -> dict[str, Any]:
    """The options given (not ``None``) that the family's prompt maker takes; a clear error for any other."""
    from cogen.errors import EvalError

    accepted = inspect.signature(record.load("prompts")).parameters
    given = {name: value for name, value in options.items() if value is not None}
    for name in given:
        if name not in accepted or name in ("data", "split"):
            raise EvalError(f"option {name!r} does not apply to prompts for {record.title} configs such as {config}")
    return given
