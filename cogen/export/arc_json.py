"""``cogen export --format arc-json``: a config as ARC task files, the format every ARC solver reads.

Each task is one JSON file ``<split>/<task id>.json`` holding ``{"train": [{"input", "output"}, ...],
"test": [{"input", "output"}, ...]}``, grids as lists of rows of colour ints (true size, no
padding). Which rows make a task is the family's: its ``exporter`` module's ``arc_tasks(source,
split, **options)`` yields :class:`ArcTask` records (one family groups samples of one sequence,
another writes an episode per task); a family without it has no ARC tasks.

``index.json`` beside the split folders maps every task id to its split, its source row ids and
the fields the family adds (such as the transformation sequence), so any task can be traced back
to the data; ``shots`` is the number of demonstration pairs the tasks have, and
``rows_in_no_task`` counts, per split, the rows no task uses.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from cogen.errors import DataError
from cogen.export import ExportSource, Written

__all__ = ["ArcTask", "finish_index", "pair", "task_hook", "write_arc_json"]


@dataclass(frozen=True)
class ArcTask:
    """One ARC task: its number in its split (tasks may come out of order), its demonstration (``train``)
    and ``test`` pairs, the ids of the rows it was made of (the last one holds the test pairs), and fields
    for its ``index.json`` entry."""

    number: int
    train: list[dict]
    test: list[dict]
    rows: list[str]
    fields: dict = field(default_factory=dict)


def pair(grid_in, grid_out) -> dict:
    """An ARC pair of two grids given as sequences of rows."""
    return {"input": [list(row) for row in grid_in], "output": [list(row) for row in grid_out]}


def _takers() -> dict[str, object]:
    """Family title -> its ``arc_tasks``, for the families whose rows make ARC tasks."""
    from cogen.family import FAMILIES

    hooks = {f.title: getattr(f.load("exporter"), "arc_tasks", None) for f in FAMILIES.values()}  # None: no exporter
    return {title: hook for title, hook in hooks.items() if hook is not None}


def describe() -> str:
    """What makes a task, per family (the first line of each family's ``arc_tasks`` docstring)."""
    return "; ".join(f"{title}, {hook.__doc__.strip().splitlines()[0].rstrip('.')}" for title, hook in _takers().items())


def task_hook(source: ExportSource, options: dict, format: str = "arc-json"):
    """The family's ``arc_tasks``, after checking that it exists and takes ``options``."""
    from cogen.family import family

    record = family(source.family)
    hook = getattr(record.load("exporter"), "arc_tasks", None)  # None when the family has no exporter
    if hook is None:
        raise DataError(f"config {source.config} is a {record.title} config; the {format} format writes "
                        f"{', '.join(_takers())} configs")
    accepted = list(inspect.signature(hook).parameters)[2:]
    for option in options:
        if option not in accepted:
            raise DataError(f"--{option} does not apply to the {format} export of {record.title} configs"
                            + (f" (it takes {', '.join('--' + a for a in accepted)})" if accepted else ""))
    return hook


def _write_task(path: Path, task: ArcTask) -> None:
    path.write_text(json.dumps({"train": task.train, "test": task.test}, separators=(",", ":")) + "\n",
                    encoding="utf-8")


def _write_split(source: ExportSource, split: str, tasks: Iterator[ArcTask], folder: Path, written: Written,
                 demonstrations: set[int]) -> None:
    """Write one split's tasks under ``folder/split`` and record them in ``written``."""
    (folder / split).mkdir()
    entries, used = [], 0
    for task in tasks:
        task_id = f"{source.config}-{split}-{task.number:06d}"
        _write_task(folder / split / f"{task_id}.json", task)
        written.files[f"{split}/{task_id}.json"] = 1
        entries.append((task.number, task_id, {"split": split, "rows": task.rows, **task.fields}))
        used += len(task.rows)
        demonstrations.add(len(task.train))
    written.index["tasks"].update((task_id, entry) for _, task_id, entry in sorted(entries))
    written.index["rows_in_no_task"][split] = source.rows(split) - used
    written.summary[split] = len(entries)


def write_arc_json(source: ExportSource, folder: Path, shots: int | None = None) -> Written:
    """Write every split of the config as ARC task files under ``folder/<split>/`` (``shots``: demonstration
    pairs per task, for families that group rows into tasks)."""
    options = {} if shots is None else {"shots": shots}
    hook = task_hook(source, options)
    written = Written({}, {}, {"shots": shots, "rows_in_no_task": {}, "tasks": {}})
    demonstrations: set[int] = set()
    for split in source.splits:
        _write_split(source, split, hook(source, split, **options), folder, written, demonstrations)
    finish_index(written, demonstrations)
    return written


def finish_index(written: Written, demonstrations: set[int]) -> None:
    """``shots`` as written (not as asked: an episode brings its own study examples) and the note on the rows
    that made no task."""
    if demonstrations:
        written.index["shots"] = demonstrations.pop() if len(demonstrations) == 1 else \
            {"min": min(demonstrations), "max": max(demonstrations)}
    left = {split: rows for split, rows in written.index["rows_in_no_task"].items() if rows}
    if left:
        written.notes.append("rows in no task (the last rows of a group, too few for a task): "
                             + ", ".join(f"{split} {rows}" for split, rows in left.items()))
