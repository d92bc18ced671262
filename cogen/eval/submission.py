"""ARC Prize's ``submission.json``: two attempts per test output, scored pass@1 and pass@2.

A submission maps each task id to one ``{"attempt_1": grid, "attempt_2": grid}`` per test input, in the
order of the task's test pairs (``cogen export --format kaggle`` writes the tasks; a task's id is the id
of the row that holds its test pairs). Test output ``j`` of task ``T`` answers the ``j``-th prediction id
the split expects of row ``T``: ``T`` itself for a row with one test pair, ``T-q<j>`` for an episode's
queries. ``attempt_1`` is scored by the family's own metrics (pass@1); an expected prediction counts
for pass@2 when either attempt equals the answer.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from cogen.errors import EvalError

__all__ = ["ATTEMPTS", "is_submission", "pass_at_2", "read_submission", "score_submission", "submission_predictions",
           "write_attempt"]

#: The keys of one test output's attempts, as ARC Prize names them.
ATTEMPTS = ("attempt_1", "attempt_2")


def is_submission(path: str | Path) -> bool:
    """True for a ``.json`` predictions file (ARC Prize's ``submission.json`` layout)."""
    return Path(path).suffix == ".json"


def read_submission(path: str | Path) -> dict[str, list[dict]]:
    """Task id -> its list of attempt dicts; a clear error for any other layout."""
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise EvalError(f"{path}: cannot read the submission ({error.strerror or error})") from None
    except (ValueError, RecursionError):
        raise EvalError(f"{path}: not JSON; a submission is {{task id: [{{\"attempt_1\": grid, \"attempt_2\": "
                        "grid}, ...]}}") from None
    if not isinstance(document, dict) or not all(isinstance(v, list) for v in document.values()):
        raise EvalError(f"{path}: a submission maps each task id to a list of {{\"attempt_1\": grid, \"attempt_2\": "
                        "grid}, one per test input")
    return document


def _by_row(expected: Sequence[str], rows: Sequence[str]) -> dict[str, list[str]]:
    """Row id -> the prediction ids the split expects of it, in order (the row itself, or ``<row>-<suffix>``)."""
    known, found = set(rows), {}
    for name in expected:
        row = name if name in known else name[: name.rfind("-")]
        found.setdefault(row, []).append(name)
    return found


def submission_predictions(document: dict[str, list[dict]], expected: Sequence[str], rows: Sequence[str],
                           ) -> tuple[list[list[tuple[str, object]]], int]:
    """Per attempt, ``(prediction id, value)`` records for a predictions file; and how many submitted test
    outputs answer no expected prediction (unknown task, or more test outputs than the row has)."""
    by_row = _by_row(expected, rows)
    attempts: list[list[tuple[str, object]]] = [[] for _ in ATTEMPTS]
    extra = 0
    for task, outputs in document.items():
        names = by_row.get(str(task), [])
        extra += max(0, len(outputs) - len(names))
        for name, output in zip(names, outputs, strict=False):
            for number, key in enumerate(ATTEMPTS):
                attempts[number].append((name, output.get(key) if isinstance(output, dict) else None))
    return attempts, extra


def write_attempt(records: list[tuple[str, object]], folder: Path, number: int) -> Path:
    """One attempt's records as a JSONL predictions file in ``folder`` (values as submitted)."""
    path = folder / f"attempt_{number + 1}.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for name, value in records:
            out.write(json.dumps({"id": name, "prediction": value}, separators=(",", ":")) + "\n")
    return path


def pass_at_2(attempts: list[list[tuple[str, object]]], targets: dict[str, np.ndarray]) -> dict:
    """``pass_at_1`` and ``pass_at_2`` over the expected predictions (a missing one counts as wrong)."""
    from cogen.eval._arrow import check_value

    right = [set(), set()]
    for number, records in enumerate(attempts):
        for name, value in records:
            grid, _ = check_value(value)
            target = targets.get(name)
            if grid is not None and target is not None and np.array_equal(grid, np.asarray(target)):
                right[number].add(name)
    total = len(targets)
    return {"expected": total, "pass_at_1": len(right[0]) / total if total else float("nan"),
            "pass_at_2": len(right[0] | right[1]) / total if total else float("nan")}


def score_submission(evaluator, split, path: Path, options: dict) -> dict:
    """The family's metrics of ``attempt_1`` and a ``submission`` section with pass@1 and pass@2."""
    if "target" not in evaluator.BASELINES:
        raise EvalError(f"{path}: a submission holds grids; these configs are not scored on predicted grids")
    expected = list(evaluator.expected_ids(split, **options))
    rows = [str(name) for name in split.table.column("id").to_pylist()]
    document = read_submission(path)
    attempts, extra = submission_predictions(document, expected, rows)
    targets = dict(evaluator.baseline(split, "target", **options))
    with tempfile.TemporaryDirectory(prefix="cogen-submission-") as scratch:
        metrics = evaluator.score(split, evaluator.read(write_attempt(attempts[0], Path(scratch), 0)), **options)
    section = {**pass_at_2(attempts, targets), "tasks": len(document), "unmatched_outputs": extra}
    return {**metrics, "submission": section}
