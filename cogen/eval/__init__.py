"""``cogen eval``: score a predictions file against one split of a built dataset.

>>> metrics = evaluate("cogen-data", "C3-1", "test_ood", "preds.jsonl")   # doctest: +SKIP
>>> metrics["grid_accuracy"], metrics["stubbornness"]["value"]             # doctest: +SKIP

* :func:`evaluate`            the whole evaluation, as a JSON-ready dict
* :func:`baseline_records`    trivial predictions (``identity``: the input) to smoke-test a pipeline
* :func:`write_predictions`   write ``(id, grid)`` records as ``.jsonl`` or ``.parquet``
* :func:`summary_rows`        the headline numbers of a metrics dict, for a table

Definitions of every number: :mod:`cogen.metrics` and ``docs/evaluation.md``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from pathlib import Path

from cogen.errors import EvalError
from cogen.eval.data import SplitData, load_split
from cogen.eval.predictions import align_predictions, read_predictions, write_predictions

__all__ = ["BASELINES", "SplitData", "baseline_records", "evaluate", "expected_ids", "load_split", "summary_rows",
           "write_predictions"]

#: Trivial predictions :func:`baseline_records` can make.
BASELINES = ("identity", "target", "zeros")


def expected_ids(split: SplitData, queries: str = "all") -> list[str]:
    """The prediction ids a split expects (row ids; ``<row id>-q<j>`` per query for Compositional-ARC)."""
    if split.family == "carc":
        from cogen.eval.carc import expected_queries

        return expected_queries(split, queries).ids
    return [str(name) for name in split.table.column("id").to_pylist()]


def evaluate(data: str | Path, config: str, split: str, predictions: str | Path, *,
             pad: tuple[int, int] | None = None, stubbornness: bool = True, queries: str = "all") -> dict:
    """Score ``predictions`` (a ``.jsonl`` / ``.parquet`` file) against ``split`` of ``config``.

    ``data``: a ``cogen build`` folder or a Hub dataset repo id. ``pad``: the fixed ``m x n`` of the
    paper's padded per-pixel accuracy (default: the experiment's largest grid). ``stubbornness``:
    compute it on out-of-domain splits of composition experiments. ``queries``: for
    Compositional-ARC, ``all`` queries of each episode or only the ``first``.
    Returns the metrics as a JSON-ready dict; malformed predictions are counted, never raised.
    """
    start = time.perf_counter()
    split_data = load_split(data, config, split)
    raw = read_predictions(predictions)
    header = {"family": split_data.family, "config": split_data.config, "split": split,
              "data": split_data.source, "predictions": str(predictions)}
    if split_data.family == "carc":
        from cogen.eval.carc import evaluate_carc, expected_queries

        index = expected_queries(split_data, queries)
        aligned, _, report = align_predictions(raw, index.ids)
        metrics = evaluate_carc(split_data, aligned, report, index)
        header["queries"] = queries
    elif split_data.family == "cogitao":
        from cogen.eval.cogitao import evaluate_cogitao

        aligned, _, report = align_predictions(raw, expected_ids(split_data))
        metrics = evaluate_cogitao(split_data, aligned, report, pad, stubbornness)
    else:
        raise EvalError(f"{split_data.source}: unknown dataset family {split_data.family!r}")
    return {**header, **metrics, "seconds": round(time.perf_counter() - start, 3)}


def _split_grids(split: SplitData, column: str, queries: str):
    from cogen.eval._arrow import stack_column

    if split.family == "carc":
        from cogen.eval.carc import expected_queries, query_grids

        return query_grids(split, f"query_{column}s", expected_queries(split, queries).positions)
    return stack_column(split.table.column(column))[0]


def baseline_records(split: SplitData, kind: str = "identity", queries: str = "all") -> Iterator[tuple[str, object]]:
    """``(id, grid)`` for every expected id: ``identity`` predicts the input, ``target`` the answer
    (an oracle: 100 %), ``zeros`` an all-background grid of the input's size."""
    import numpy as np

    if kind not in BASELINES:
        raise EvalError(f"unknown baseline {kind!r} (choose from {', '.join(BASELINES)})")
    grids = _split_grids(split, "output" if kind == "target" else "input", queries)
    for k, name in enumerate(expected_ids(split, queries)):
        grid = grids.grid(k)
        yield name, np.zeros_like(grid) if kind == "zeros" else grid


_HEADLINES = {
    "cogitao": ("grid_accuracy", "grid_accuracy_valid", "per_pixel_accuracy", "per_pixel_accuracy_padded",
                "object_pixel_accuracy", "object_pixel_error_paper", "no_transformation"),
    "carc": ("exact_match", "exact_match_valid", "color_accuracy", "color_accuracy_code", "shape_accuracy",
             "shape_accuracy_code", "valid_rate"),
}


def summary_rows(metrics: dict) -> list[tuple[str, str]]:
    """``(name, value)`` rows of the headline numbers of an :func:`evaluate` result."""
    rows = [("samples", f"{metrics['n']} ({metrics['n_valid']} well-formed)"),
            ("format errors", _format_errors(metrics["format_errors"]))]
    for name in _HEADLINES[metrics["family"]]:
        rows.append((name, _percent(metrics[name])))
    if metrics["family"] == "cogitao":
        rows.append(("pad size", "x".join(map(str, metrics["pad_size"]))))
        objects = metrics["objects"]
        rows.append(("objects found / missed / extra", f"{objects['found']} / {objects['missed']} / {objects['extra']}"))
        stubborn = metrics["stubbornness"]
        rows.append(("stubbornness", f"{_percent(stubborn['value'])} ({stubborn['stubborn']} of {metrics['n']}; "
                                     f"{_percent(stubborn['of_errors'])} of errors)" if stubborn["computed"]
                     else f"– ({stubborn['reason']})"))
    rows.append(("errors", ", ".join(f"{k} {v}" for k, v in metrics["errors"].items() if v) or "none"))
    return rows


def _percent(value: float) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:.2f} %"


def _format_errors(errors: dict) -> str:
    parts = [f"{reason} {count}" for reason, count in errors["reasons"].items()]
    if errors["extra_ids"]:
        parts.append(f"extra ids {errors['extra_ids']}")
    if errors["unreadable_lines"]:
        parts.append(f"unreadable lines {errors['unreadable_lines']}")
    return f"{errors['total']}" + (f" ({', '.join(parts)})" if parts else "")
