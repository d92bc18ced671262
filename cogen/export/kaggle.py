"""``cogen export --format kaggle``: a config as ARC Prize's (Kaggle's) challenge and solution files.

ARC Prize ships each set as two JSON files: ``*_challenges.json`` maps a task id to
``{"train": [{"input", "output"}, ...], "test": [{"input"}, ...]}`` (the test outputs removed) and
``*_solutions.json`` maps the same id to the list of test outputs; a submission (``submission.json``)
maps each task id to one ``{"attempt_1": grid, "attempt_2": grid}`` per test input, and a test output
counts when either attempt equals it (pass@2). This writer makes ``<config>_<split>_challenges.json``
and ``<config>_<split>_solutions.json`` per split from the family's ARC tasks (the ones ``arc-json``
writes: each family's exporter says which rows make a task).

A task's id is the id of the row that holds its test pairs (its last row), so a submission needs no
lookup table: ``cogen eval --predictions submission.json`` maps test output ``j`` of task ``T`` to the
``j``-th prediction id of row ``T`` (``T`` itself, or ``T-q<j>`` for an episode's queries) and reports
pass@1 and pass@2. The files are written a task at a time, never held in memory.
"""

from __future__ import annotations

import json
from pathlib import Path

from cogen.export import ExportSource, Written
from cogen.export.arc_json import ArcTask, describe, finish_index, task_hook

__all__ = ["describe", "kaggle_names", "write_kaggle"]


def kaggle_names(config: str, split: str) -> tuple[str, str]:
    """The challenges and solutions file names of one split."""
    return f"{config}_{split}_challenges.json", f"{config}_{split}_solutions.json"


class _JsonObject:
    """A JSON object written one member at a time."""

    def __init__(self, path: Path):
        self.handle, self.first = path.open("w", encoding="utf-8"), True
        self.handle.write("{")

    def add(self, key: str, value) -> None:
        self.handle.write(("" if self.first else ",\n") + json.dumps(key) + ":" + json.dumps(value, separators=(",", ":")))
        self.first = False

    def close(self) -> None:
        self.handle.write("}\n")
        self.handle.close()


def _write_split(source: ExportSource, split: str, tasks, folder: Path, written: Written,
                 demonstrations: set[int]) -> None:
    names = kaggle_names(source.config, split)
    challenges, solutions = _JsonObject(folder / names[0]), _JsonObject(folder / names[1])
    count, used = 0, 0
    try:
        for task in tasks:
            task: ArcTask
            task_id = task.rows[-1]
            challenges.add(task_id, {"train": task.train, "test": [{"input": p["input"]} for p in task.test]})
            solutions.add(task_id, [p["output"] for p in task.test])
            written.index["tasks"][task_id] = {"split": split, "rows": task.rows, **task.fields}
            count, used = count + 1, used + len(task.rows)
            demonstrations.add(len(task.train))
    finally:
        challenges.close()
        solutions.close()
    written.files.update({names[0]: count, names[1]: count})
    written.index["rows_in_no_task"][split] = source.rows(split) - used


def write_kaggle(source: ExportSource, folder: Path, shots: int | None = None) -> Written:
    """Write every split of the config as ARC Prize challenge and solution files (``shots``: demonstration
    pairs per task, for families that group rows into tasks)."""
    options = {} if shots is None else {"shots": shots}
    hook = task_hook(source, options, "kaggle")
    written = Written({}, {}, {"shots": shots, "task_ids": "the id of the row holding the task's test pairs",
                               "rows_in_no_task": {}, "tasks": {}})
    demonstrations: set[int] = set()
    for split in source.splits:
        _write_split(source, split, hook(source, split, **options), folder, written, demonstrations)
    finish_index(written, demonstrations)
    return written
