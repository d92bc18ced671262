"""The toy's part of ``cogen eval``: exact match of predicted grids."""

import numpy as np

from cogen.eval._arrow import stack_column
from cogen.eval.predictions import GRID_BASELINES, align_predictions, grid_baseline, read_predictions, write_predictions

OPTIONS: dict = {}
HEADLINES = ("grid_accuracy",)
BASELINES = GRID_BASELINES
read, write = read_predictions, write_predictions


def expected_ids(split):
    return [str(name) for name in split.table.column("id").to_pylist()]


def baseline(split, kind):
    grids = {c: stack_column(split.table.column(c))[0] for c in ("input", "output")}
    return grid_baseline(expected_ids(split), grids["input"], grids["output"], kind)


def score(split, raw):
    predictions, problems, report = align_predictions(raw, expected_ids(split))
    targets = stack_column(split.table.column("output"))[0]
    right = [p is None and np.array_equal(predictions.grid(k), targets.grid(k)) for k, p in enumerate(problems)]
    n, valid = len(right), sum(p is None for p in problems)
    return {"n": n, "n_valid": valid, "format_errors": report.as_dict(), "grid_accuracy": sum(right) / n,
            "errors": {"format": n - valid, "other": valid - sum(right)}}


def sample_scores(split, raw):
    predictions, problems, _ = align_predictions(raw, expected_ids(split))
    targets = stack_column(split.table.column("output"))[0]
    return [{"id": name, "valid": problems[k] is None, "error": problems[k],
             "correct": problems[k] is None and np.array_equal(predictions.grid(k), targets.grid(k))}
            for k, name in enumerate(expected_ids(split))]


def summary_rows(metrics):
    return []
