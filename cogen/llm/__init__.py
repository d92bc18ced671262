"""In-context evaluation of language models: export prompts, parse replies into predictions.

* :func:`cogitao_prompts`  COGITAO prompts, ``explicit`` or ``coded`` task codes, in-context examples from train
* :func:`carc_prompts`     Compositional-ARC text prompts (study examples, then one query input)
* :func:`parse_reply`, :func:`parse_replies`  replies -> a predictions file for ``cogen eval``
* :func:`export_prompts`   the prompts of one split written as JSONL

The reply protocol, the task-code mapping and the example-selection rule are documented in
:mod:`cogen.llm.prompts`, :mod:`cogen.llm.parse` and ``docs/evaluation.md``.
"""

from __future__ import annotations

import json
from pathlib import Path

from cogen.llm.parse import MARKERS, ParseReport, parse_replies, parse_reply
from cogen.llm.prompts import REGIMES, Prompt, carc_prompts, cogitao_prompts, format_grid, task_codes

__all__ = ["MARKERS", "REGIMES", "ParseReport", "Prompt", "carc_prompts", "cogitao_prompts", "export_prompts",
           "format_grid", "parse_replies", "parse_reply", "task_codes"]


def export_prompts(data: str | Path, config: str, split: str, out: str | Path, *, regime: str = "explicit",
                   examples: int = 5, seed: int = 0, queries: str = "first") -> int:
    """Write the prompts of ``split`` of ``config`` to ``out`` (JSONL: ``id``, ``prompt`` and how it
    was made); returns how many. COGITAO draws its in-context examples from the config's train split."""
    from cogen.eval import load_split

    split_data = load_split(data, config, split)
    if split_data.family == "carc":
        prompts = carc_prompts(split_data, queries)
    else:
        prompts = cogitao_prompts(split_data, load_split(data, config, "train"), regime, examples, seed)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with out.open("w", encoding="utf-8") as handle:
        for prompt in prompts:
            handle.write(json.dumps(prompt.as_dict()) + "\n")
            count += 1
    return count
