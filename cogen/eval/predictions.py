"""Predictions files: read them, match them to a split's ids, write them.

A predictions file has one record per sample with an ``id`` (string) and a ``prediction`` (a 2-D
grid: list of rows of integers 0..9; ``null`` marks a reply that could not be parsed; a string, even
JSON text of a grid, is a format error: it hides a double encoding):

* ``.jsonl``: one JSON object per line, ``{"id": "C3-1-test_ood-0", "prediction": [[0, 1], [2, 3]]}``;
* ``.parquet``: columns ``id`` and ``prediction`` (``list<list<int>>``).

Nothing about a record's content stops an evaluation: unreadable lines (a line nested too deep for
any parser included), missing ids, duplicate ids, ids the split does not hold and malformed grids are
counted (:class:`FormatReport`); every expected sample without exactly one well-formed prediction is
scored as wrong. A malformed prediction is kept as written (up to a bound), so ``cogen view`` can
draw what the model produced.

Memory stays near that of the grids as int8: a JSONL file is read a block of lines at a time (Arrow's
JSON reader with a fixed schema), each block's grids packed into int8 before the next is read.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cogen.errors import EvalError
from cogen.metrics.grids import PAD, GridStack

__all__ = ["GRID_BASELINES", "FormatReport", "RawPredictions", "align_predictions", "as_written", "grid_baseline",
           "read_predictions", "read_records", "write_predictions"]

#: The trivial predictions :func:`grid_baseline` makes.
GRID_BASELINES = ("identity", "target", "zeros")
#: Bytes of a JSONL file parsed at a time.
BLOCK_BYTES = 1 << 20
#: Lines read at a time by the line-by-line reader.
BLOCK_LINES = 4096
#: A file whose brackets nest deeper than this is read line by line (Arrow's JSON parser recurses without a
#: bound, and a line nested 100,000 deep crashes it); a grid record nests 3 deep.
MAX_NESTING = 32
#: Malformed predictions kept as written, at most this many per file, each at most this many cells
#: (or characters of JSON text): enough to draw what a model emitted, never a copy of a hostile file.
MAX_KEPT = 10_000
MAX_KEPT_CELLS = 4_096


@dataclass(frozen=True)
class RawPredictions:
    """A predictions file as read: ids, their grids (absent when malformed) and why, per record;
    ``malformed`` maps a malformed record's index to its value as written (bounded: :data:`MAX_KEPT`)."""

    ids: list[str | None]
    grids: GridStack
    reasons: list[str | None]
    unreadable_lines: int = 0
    malformed: Mapping[int, Any] = field(default_factory=dict)


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
        parquet = pq.ParquetFile(path)
        missing = {"id", "prediction"} - set(parquet.schema_arrow.names)
        if missing:
            raise EvalError(f"{path}: no column {', '.join(sorted(missing))} "
                            f"(columns: {', '.join(parquet.schema_arrow.names)})")
        parts = [_from_table(pa.Table.from_batches([batch]))
                 for batch in parquet.iter_batches(batch_size=BLOCK_LINES, columns=["id", "prediction"])]
    except (OSError, pa.ArrowException) as error:
        raise EvalError(f"{path}: not a readable Parquet file ({error})") from None
    return _concat(parts)


def _kept(value) -> Any:
    """A malformed value as written, if small enough to keep (else a note of its size)."""
    import pyarrow as pa

    if isinstance(value, pa.Scalar):
        if isinstance(value, pa.ListScalar) and value.is_valid:
            cells = value.values
            while isinstance(cells, (pa.ListArray, pa.LargeListArray)):
                cells = cells.flatten()
            if len(cells) > MAX_KEPT_CELLS:
                return f"({len(cells):,} cells, too many to show)"
        value = value.as_py()
    if isinstance(value, str):
        return value if len(value) <= MAX_KEPT_CELLS else value[:MAX_KEPT_CELLS] + "…"
    text = json.dumps(value, default=str)
    return value if len(text) <= 4 * MAX_KEPT_CELLS else f"({len(text):,} characters of JSON, too many to show)"


def _malformed(values, reasons: list[str | None]) -> dict[int, Any]:
    """Index -> value as written of the malformed records (not nulls), the first :data:`MAX_KEPT` of them."""
    found: dict[int, Any] = {}
    for k, reason in enumerate(reasons):
        if reason is not None and reason != "null":
            found[k] = _kept(values[k])
            if len(found) >= MAX_KEPT:
                break
    return found


def _from_table(table) -> RawPredictions:
    """Records of an Arrow table with columns ``id`` and ``prediction``; rows without an id cannot
    be matched and count as unreadable."""
    from cogen.eval._arrow import stack_column

    ids = [None if value is None else str(value) for value in table.column("id").to_pylist()]
    column = table.column("prediction").combine_chunks()
    grids, reasons = stack_column(column)
    malformed = _malformed(column, reasons)
    keep = np.array([name is not None for name in ids], bool)
    if keep.all():
        return RawPredictions(ids, grids, reasons, 0, malformed)
    rows = np.flatnonzero(keep)
    renumber = {int(old): new for new, old in enumerate(rows)}
    return RawPredictions([ids[i] for i in rows], grids.take(rows), [reasons[i] for i in rows], int((~keep).sum()),
                          {renumber[k]: v for k, v in malformed.items() if k in renumber})


def _concat(parts: list[RawPredictions]) -> RawPredictions:
    """One :class:`RawPredictions` of blocks read in turn (their grids copied once onto a common canvas)."""
    if len(parts) == 1:
        return parts[0]
    height = max((p.grids.cells.shape[1] for p in parts), default=1)
    width = max((p.grids.cells.shape[2] for p in parts), default=1)
    cells = np.full((sum(len(p.ids) for p in parts), height, width), PAD, np.int8)
    ids, reasons, malformed, start = [], [], {}, 0
    for part in parts:
        block = part.grids.cells
        cells[start:start + len(part.ids), :block.shape[1], :block.shape[2]] = block
        ids += part.ids
        reasons += part.reasons
        if len(malformed) < MAX_KEPT:
            malformed.update((start + k, v) for k, v in part.malformed.items())
        start += len(part.ids)
    heights = np.concatenate([p.grids.heights for p in parts]) if parts else np.zeros(0, np.int32)
    widths = np.concatenate([p.grids.widths for p in parts]) if parts else np.zeros(0, np.int32)
    return RawPredictions(ids, GridStack(cells, heights, widths), reasons,
                          sum(p.unreadable_lines for p in parts), malformed)


def _nesting(path: Path) -> int:
    """The deepest bracket nesting of a file (``[``/``{`` against ``]``/``}``, strings not excluded: an
    overestimate at worst), read a block at a time."""
    depth, deepest = 0, 0
    with path.open("rb") as handle:
        while block := handle.read(BLOCK_BYTES):
            data = np.frombuffer(block, np.uint8)
            where = np.flatnonzero((data == 91) | (data == 123) | (data == 93) | (data == 125))
            if not len(where):
                continue
            steps = np.where((data[where] == 91) | (data[where] == 123), 1, -1).astype(np.int64)
            levels = depth + np.cumsum(steps)
            deepest, depth = max(deepest, int(levels.max())), int(levels[-1])
    return deepest


def _read_jsonl(path: Path) -> RawPredictions:
    """Arrow's JSON reader, a block at a time with a fixed schema (ids as strings, grids as lists of
    integer lists), for regular files; line by line in Python for anything else, so that every odd
    record is counted, not fatal."""
    import pyarrow as pa
    import pyarrow.json as pj

    if _nesting(path) <= MAX_NESTING:
        schema = pa.schema([("id", pa.string()), ("prediction", pa.list_(pa.list_(pa.int64())))])
        try:
            reader = pj.open_json(path, read_options=pj.ReadOptions(use_threads=False, block_size=BLOCK_BYTES),
                                  parse_options=pj.ParseOptions(explicit_schema=schema,
                                                                unexpected_field_behavior="ignore"))
            parts = [_from_table(pa.Table.from_batches([batch])) for batch in reader]
            if parts:
                return _concat(parts)
        except (pa.ArrowException, OSError):
            pass
    return _read_jsonl_lines(path)


def _records(path: Path) -> Iterator[dict | None]:
    """Each non-blank line of a JSONL file as a JSON object with a string ``id``, or None when it is not one
    (not JSON, another value, or nested too deep for the parser)."""
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                record = None
            yield record if isinstance(record, dict) and isinstance(record.get("id"), str) else None


def read_records(path: Path) -> tuple[list[dict], int]:
    """The JSON objects with a string ``id`` of a JSONL file, and how many non-blank lines are not one."""
    records, unreadable = [], 0
    for record in _records(path):
        if record is None:
            unreadable += 1
        else:
            records.append(record)
    return records, unreadable


def _read_jsonl_lines(path: Path) -> RawPredictions:
    from cogen.eval._arrow import check_value
    from cogen.metrics.grids import stack_grids

    parts: list[RawPredictions] = []
    ids, values, unreadable = [], [], 0

    def flush() -> None:
        checked = [check_value(value) for value in values]
        reasons = [reason for _, reason in checked]
        parts.append(RawPredictions(list(ids), stack_grids([grid for grid, _ in checked]), reasons, 0,
                                    _malformed(values, reasons)))
        ids.clear()
        values.clear()

    for record in _records(path):
        if record is None:
            unreadable += 1
            continue
        ids.append(record["id"])
        values.append(record.get("prediction"))
        if len(ids) == BLOCK_LINES:
            flush()
    if ids or not parts:
        flush()
    found = _concat(parts)
    return RawPredictions(found.ids, found.grids, found.reasons, unreadable, found.malformed)


def as_written(raw: RawPredictions, expected: Sequence[str]) -> dict[int, Any]:
    """Expected sample -> its prediction as written, for the samples whose one record is malformed and kept."""
    if not raw.malformed:
        return {}
    kept = {raw.ids[i]: i for i in raw.malformed}
    counts = Counter(name for name in raw.ids if name in kept)
    return {k: raw.malformed[kept[name]] for k, name in enumerate(expected) if counts.get(name) == 1}


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
