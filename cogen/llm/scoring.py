"""Replies made into predictions and scored, the one way ``cogen prompts run`` and the Inspect tasks share.

A reply becomes a line of a predictions file by the family's ``reply_parser`` (a grid, or null,
under ``prediction``), or stays the reply text (under ``reply``) for a family scored on the code a
model writes (:func:`prediction_line`). :func:`score_reply` scores one reply alone: a predictions
file of that one line against the prompt's row, through the family evaluator's ``sample_scores``,
exactly as a whole run's predictions are scored.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["prediction_line", "score_reply", "split_options"]


def prediction_line(parser, name: str, reply: str | None, model: str | None, prompt_version: str | None) -> dict:
    """The predictions-file record of one reply (``parser``: the family's ``reply_parser``, or None)."""
    line = {"id": name, "model": model, "prompt_version": prompt_version}
    if parser is None:
        line["reply"] = reply
    else:
        grid, _ = parser(reply)
        line["prediction"] = None if grid is None else grid.tolist()
    return line


def split_options(record, options: dict[str, Any], config: str) -> tuple[dict, dict]:
    """The family options given, as prompt options and evaluation options (a name may be both); an
    error naming the families that take an option this family takes for neither."""
    prompts, scoring = record.options_for("prompts"), record.options_for("eval")
    unknown = {k: v for k, v in options.items() if k not in prompts and k not in scoring}
    record.check_options("prompts", unknown, config)
    return ({k: v for k, v in options.items() if k in prompts and v is not None},
            {k: v for k, v in options.items() if k in scoring and v is not None})


def score_reply(record, split, prompt: dict, reply: str | None, model: str | None,
                eval_options: dict[str, Any]) -> dict:
    """One reply's own scores (:func:`cogen.eval.sample_scores` of the prompt's row, the reply as its only
    prediction), with the ``prediction`` it was read as; ``prompt`` is the exported prompt record."""
    from cogen.eval import only_rows, sample_scores

    line = prediction_line(record.load("reply_parser"), prompt["id"], reply, model, prompt.get("prompt_version"))
    row = only_rows(split, {str(prompt.get("row", prompt["id"]))})
    with tempfile.TemporaryDirectory(prefix="cogen-reply-") as folder:
        path = Path(folder) / "predictions.jsonl"
        path.write_text(json.dumps(line) + "\n", encoding="utf-8")
        found = [s for s in sample_scores(row, path, **eval_options) if s["id"] == prompt["id"]]
    entry = found[0] if found else {"id": prompt["id"], "correct": False, "valid": False, "error": "missing"}
    return {**entry, "prediction": line.get("prediction", line.get("reply"))}
