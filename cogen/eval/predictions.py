"""Predictions files: read them, match them to a split's ids, write them.

A predictions file has one record per sample with an ``id`` (string) and a ``prediction`` (a 2-D
grid: list of rows of integers 0..9; JSON text of one also works; ``null`` marks a reply that could
not be parsed):

* ``.jsonl``: one JSON object per line, ``{"id": "C3-1-test_ood-0", "prediction": [[0, 1], [2, 3]]}``;
* ``.parquet``: columns ``id`` and ``prediction`` (``list<list<int>>`` or string).

Nothing about a record's content stops an evaluation: unreadable lines, missing ids, duplicate
ids, ids the split does not hold and malformed grids are counted (:class:`FormatReport`); every
expected sample without exactly one well-formed prediction is scored as wrong.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cogen.errors import EvalError
from cogen.metrics.grids import GridStack

__all__ = ["GRID_BASELINES", "FormatReport", "align_predictions", "grid_baseline", "read_predictions", "read_records",
           "write_predictions"]

#: The trivial predictions :func:`grid_baseline` makes.
GRID_BASELINES = ("identity", "target", "zeros")


@dataclass(frozen=True)
class RawPredictions:
    """A predictions file as read: ids, their grids (absent when malformed) and why, per record."""

    ids: list[str | None]
    grids: GridStack
    reasons: list[str | None]
    unreadable_lines: int = 0


@dataclass(frozen=True)
class FormatReport:
    """What was wrong with a predictions file, relative to the split's expected ids.

    ``reasons`` maps each expected sample's problem (``missing``, ``duplicate id``, ``null``,
    ``ragged rows``, ...) to how many samples have it; ``extra_ids`` counts records whose id the
    split does not hold (``extra_examples``: a few of them); ``unreadable_lines`` counts JSONL
    lines that are not a JSON object with a string ``id`` (and Parquet rows with a null id).
    """

    expected: int
    reasons: dict[str, int]
    extra_ids: int
    extra_examples: list[str] = field(default_factory=list)
    unreadable_lines: int = 0

    @property
    def errors(self) -> int:
        """Expected samples without exactly one well-formed prediction."""
        return sum(self.reasons.values())

    def as_dict(self) -> dict:
        """JSON-ready form."""
        return {"total": self.errors, "missing": self.reasons.get("missing", 0),
                "duplicate": self.reasons.get("duplicate id", 0),
                "malformed": self.errors - self.reasons.get("missing", 0) - self.reasons.get("duplicate id", 0),
                "reasons": dict(sorted(self.reasons.items())), "extra_ids": self.extra_ids,
                "extra_examples": self.extra_examples, "unreadable_lines": self.unreadable_lines}


def read_predictions(path: str | Path) -> RawPredictions:
    """Read a ``.jsonl`` or ``.parquet`` predictions file (see the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise EvalError(f"{path}: no such predictions file")
    if path.suffix == ".parquet":
        return _read_parquet(path)
    if path.suffix == ".jsonl":
        return _read_jsonl(path)
    raise EvalError(f"{path}: predictions must be .jsonl or .parquet")


def _read_parquet(path: Path) -> RawPredictions:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as error:
        raise EvalError(f"{path}: not a readable Parquet file ({error})") from None
    return _from_table(table, path)


def _from_table(table, path: Path) -> RawPredictions:
    """Records of an Arrow table with columns ``id`` and ``prediction``; rows without an id cannot
    be matched and count as unreadable."""
    from cogen.eval._arrow import stack_column

    missing = {"id", "prediction"} - set(table.column_names)
    if missing:
        raise EvalError(f"{path}: no column {', '.join(sorted(missing))} (columns: {', '.join(table.column_names)})")
    ids = [None if value is None else str(value) for value in table.column("id").to_pylist()]
    grids, reasons = stack_column(table.column("prediction"))
    keep = np.array([name is not None for name in ids], bool)
    if keep.all():
        return RawPredictions(ids, grids, reasons)
    rows = np.flatnonzero(keep)
    return RawPredictions([ids[i] for i in rows], grids.take(rows), [reasons[i] for i in rows], int((~keep).sum()))


def _read_jsonl(path: Path) -> RawPredictions:
    """Arrow's JSON reader for regular files (ids as strings, grids as lists of integer lists);
    line by line in Python for anything else, so that every odd record is counted, not fatal."""
    import pyarrow as pa
    import pyarrow.json as pj

    from cogen.eval._arrow import is_grid_type

    try:
        table = pj.read_json(path)
        if table.num_rows and pa.types.is_string(table.schema.field("id").type) and \
                is_grid_type(table.schema.field("prediction").type):
            return _from_table(table.select(["id", "prediction"]), path)
    except (pa.ArrowException, KeyError):
        pass
    return _read_jsonl_lines(path)


def read_records(path: Path) -> tuple[list[dict], int]:
    """The JSON objects with a string ``id`` of a JSONL file, and how many non-blank lines are not one."""
    records, unreadable = [], 0
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                record = None
            if isinstance(record, dict) and isinstance(record.get("id"), str):
                records.append(record)
            else:
                unreadable += 1
    return records, unreadable


def _read_jsonl_lines(path: Path) -> RawPredictions:
    from cogen.eval._arrow import check_value
    from cogen.metrics.grids import stack_grids

    records, unreadable = read_records(path)
    checked = [check_value(record.get("prediction")) for record in records]
    return RawPredictions([r["id"] for r in records], stack_grids([grid for grid, _ in checked]),
                          [reason for _, reason in checked], unreadable)


def align_predictions(raw: RawPredictions, expected: Sequence[str]) -> tuple[GridStack, list[str | None], FormatReport]:
    """The predictions in the order of ``expected`` (absent where missing, duplicated or malformed),
    each expected sample's problem (None when fine) and the :class:`FormatReport`."""
    positions: dict[str, list[int]] = {}
    for i, name in enumerate(raw.ids):
        positions.setdefault(name, []).append(i)
    index = np.full(len(expected), -1, np.int64)
    problems: list[str | None] = []
    for k, name in enumerate(expected):
        found = positions.get(name, [])
        if len(found) == 1 and raw.reasons[found[0]] is None:
            index[k] = found[0]
        problems.append(None if index[k] >= 0 else
                        "missing" if not found else "duplicate id" if len(found) > 1 else raw.reasons[found[0]])
    wanted = set(expected)
    extra = [name for name in positions if name not in wanted]
    report = FormatReport(len(expected), dict(Counter(p for p in problems if p is not None)), len(extra),
                          [str(name) for name in extra[:5]], raw.unreadable_lines)
    return raw.grids.take(index), problems, report


def grid_baseline(ids: Sequence[str], inputs, targets, kind: str) -> Iterator[tuple[str, object]]:
    """``(id, grid)`` of a trivial grid baseline: ``identity`` (the input), ``target`` (the answer) or
    ``zeros`` (all background, the input's size); ``inputs``/``targets`` are :class:`GridStack` s."""
    grids = targets if kind == "target" else inputs
    for k, name in enumerate(ids):
        grid = grids.grid(k)
        yield name, np.zeros_like(grid) if kind == "zeros" else grid


def write_predictions(path: str | Path, records: Iterable[tuple[str, object]]) -> int:
    """Write ``(id, grid)`` records as ``.jsonl`` or ``.parquet`` (by suffix); returns how many.
    A grid of None is written as null (an unparsable reply)."""
    path = Path(path)
    rows = [(str(name), None if grid is None else np.asarray(grid).tolist()) for name, grid in records]
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.table({"id": pa.array([r[0] for r in rows], pa.string()),
                          "prediction": pa.array([r[1] for r in rows], pa.list_(pa.list_(pa.int8())))})
        pq.write_table(table, path)
    elif path.suffix == ".jsonl":
        with path.open("w", encoding="utf-8") as out:
            for name, grid in rows:
                out.write(json.dumps({"id": name, "prediction": grid}, separators=(",", ":")) + "\n")
    else:
        raise EvalError(f"{path}: predictions must be .jsonl or .parquet")
    return len(rows)
