"""``cogen eval``: score a predictions file against one split of a built dataset.

>>> metrics = evaluate("cogen-data", "C3-1", "test_ood", "preds.jsonl")   # doctest: +SKIP
>>> metrics["grid_accuracy"], metrics["stubbornness"]["value"]             # doctest: +SKIP

* :func:`evaluate`            the whole evaluation, as a JSON-ready dict
* :func:`baseline_records`    trivial predictions (``identity``: the input) to smoke-test a pipeline
* :func:`write_baseline`      write them in the family's predictions format
* :func:`write_predictions`   write ``(id, grid)`` records as ``.jsonl`` or ``.parquet``
* :func:`summary_rows`        the headline numbers of a metrics dict, for a table
* :func:`sample_scores`       each expected id's own scores (pass@k, the Inspect tasks' per-sample scores)

The split comes from :func:`cogen.folder.read_split`; what is scored, and how, is the family's
evaluator (:attr:`cogen.families.Family.evaluator`, ``cogen/families/<name>/evaluate.py``).
Definitions of every number: :mod:`cogen.metrics` and ``docs/evaluation.md``.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

from cogen.errors import EvalError
from cogen.eval._text import percent
from cogen.eval.predictions import write_predictions
from cogen.eval.submission import is_submission, score_submission
from cogen.family import Evaluator, family
from cogen.folder import SplitData, read_split

__all__ = ["baseline_records", "evaluate", "evaluator_options", "expected_ids", "json_ready", "only_rows", "sample_scores",
           "summary_rows", "write_baseline",
           "write_predictions"]


def evaluator_options(split: SplitData, options: dict[str, Any], command: str = "eval") -> tuple[Evaluator, dict[str, Any]]:
    """The family evaluator of ``split`` and the options it takes (``None`` means "not given"), each
    checked as the family's record declares it (:meth:`cogen.family.Family.check_options`).

    An option the family does not take is an error that names the families it applies to.
    """
    record = family(split.family)
    return record.evaluation(), record.check_options(command, options, split.config)


def expected_ids(split: SplitData, **options: Any) -> list[str]:
    """The prediction ids a split expects, as its family's evaluator names them (row ids, or one per
    query of an episode: ``<row id>-q<j>``)."""
    evaluator, given = evaluator_options(split, options)
    return evaluator.expected_ids(split, **given)


def evaluate(data: str | Path, config: str, split: str, predictions: str | Path, rows: Collection[str] | None = None,
             **options: Any) -> dict:
    """Score ``predictions`` (a ``.jsonl`` / ``.parquet`` file, or ARC Prize's ``submission.json``:
    :mod:`cogen.eval.submission`, pass@1 and pass@2) against ``split`` of ``config``.

    ``data``: a ``cogen build`` folder or a Hub dataset repo id. ``options`` are the family's
    (``None`` leaves one at its default): the ``eval`` options its record declares (``cogen eval
    --help`` lists them by family), checked as declared; an option the family does not take is an
    error that names the families it applies to.
    ``rows`` limits the evaluation to those row ids of the split (the rows a sample of prompts asked
    about, ``cogen prompts export --per-experiment``).
    Returns the metrics as a JSON-ready dict; malformed predictions are counted, never raised.
    """
    start = time.perf_counter()
    split_data = read_split(data, config, split)
    if rows is not None:
        split_data = _only_rows(split_data, set(rows))
    evaluator, given = evaluator_options(split_data, options)
    header = {"family": split_data.family, "config": split_data.config, "split": split,
              "data": split_data.source, "predictions": str(predictions)}
    if is_submission(predictions):
        metrics = score_submission(evaluator, split_data, Path(predictions), given)
    else:
        metrics = evaluator.score(split_data, evaluator.read(predictions), **given)
    return {**header, **metrics, "seconds": round(time.perf_counter() - start, 3)}


def sample_scores(split: SplitData, predictions: str | Path, **options: Any) -> list[dict]:
    """Each expected id's own scores (``correct``, ``valid``, ``error`` and the family's numbers, whose means
    are its headline metrics) for ``predictions`` against ``split`` (already read; :func:`only_rows` keeps
    some of its rows), by the family's evaluator (its ``sample_scores``), with ``options`` as :func:`evaluate`."""
    evaluator, given = evaluator_options(split, options)
    return evaluator.sample_scores(split, evaluator.read(predictions), **given)


def json_ready(value):
    """``value`` with every NaN as ``None`` (JSON has no NaN), dicts and lists walked."""
    import math

    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_ready(v) for v in value]
    return value


def only_rows(split: SplitData, rows: set[str]) -> SplitData:
    """``split`` with only the rows whose id is in ``rows`` (in the split's order); an error when none is."""
    return _only_rows(split, set(rows))


def _only_rows(split: SplitData, rows: set[str]) -> SplitData:
    import dataclasses

    keep = [k for k, name in enumerate(split.table.column("id").to_pylist()) if name in rows]
    if not keep:
        raise EvalError(f"none of the {len(rows)} requested rows is a row of {split.config} {split.split}")
    return dataclasses.replace(split, table=split.table.take(keep))


def baseline_records(split: SplitData, kind: str = "identity", **options: Any) -> Iterator[tuple[str, object]]:
    """Trivial predictions for every expected id, as the family makes them (its ``BASELINES``): for
    grid families ``identity`` predicts the input, ``target`` the answer (an oracle: 100 %), ``zeros``
    an all-background grid of the input's size; a family scored on code may offer ``target`` code only."""
    evaluator, given = evaluator_options(split, options, "baseline")
    if kind not in evaluator.BASELINES:
        raise EvalError(f"no baseline {kind!r} for {family(split.family).title} configs "
                        f"(choose from {', '.join(evaluator.BASELINES)})")
    return evaluator.baseline(split, kind, **given)


def write_baseline(path: str | Path, split: SplitData, kind: str = "identity", **options: Any) -> int:
    """Write :func:`baseline_records` to ``path`` in the family's predictions format; returns how many."""
    evaluator, _ = evaluator_options(split, options, "baseline")
    return evaluator.write(path, baseline_records(split, kind, **options))


def summary_rows(metrics: dict) -> list[tuple[str, str]]:
    """``(name, value)`` rows of the headline numbers of an :func:`evaluate` result."""
    evaluator = family(metrics["family"]).evaluation()
    rows = [("samples", f"{metrics['n']} ({metrics['n_valid']} well-formed)"),
            ("format errors", _format_errors(metrics["format_errors"]))]
    rows += [(name, percent(metrics[name])) for name in evaluator.HEADLINES]
    if "submission" in metrics:
        section = metrics["submission"]
        rows += [("pass@1 (attempt_1)", percent(section["pass_at_1"])),
                 ("pass@2 (either attempt)", percent(section["pass_at_2"]))]
    rows += evaluator.summary_rows(metrics)
    rows.append(("errors", ", ".join(f"{k} {v}" for k, v in metrics["errors"].items() if v) or "none"))
    return rows


def _format_errors(errors: dict) -> str:
    parts = [f"{reason} {count}" for reason, count in errors["reasons"].items()]
    if errors["extra_ids"]:
        parts.append(f"extra ids {errors['extra_ids']}")
    if errors["unreadable_lines"]:
        parts.append(f"unreadable lines {errors['unreadable_lines']}")
    return f"{errors['total']}" + (f" ({', '.join(parts)})" if parts else "")
