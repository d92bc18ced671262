"""What COGITAO configs become in other tools' formats (the family's ``exporter``, see :mod:`cogen.export`).

* ARC tasks (``arc-json``): samples of one split with the same transformation sequence are grouped,
  in row order, into tasks of ``shots`` demonstration pairs and one test pair; rows left over at the
  end of a sequence's group (fewer than ``shots + 1``) make no task. Tasks are numbered sequence by
  sequence (in order of first appearance), then in row order, and written as they complete, so the
  split is read twice (the sequences alone, then every row) and never held in memory.
* The ``cogitao-release`` column view: the official COGITAO release (Hub repo ``yassinetb/COGITAO``)
  stores ``{train,val,test,val_ood,test_ood}.parquet`` with ``input`` and ``output`` as lists of lists
  of int64 and the sequence as ``transformation_suite``; cogen's other columns (``id``, object counts
  and positions) keep their names.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from cogen.errors import DataError
from cogen.kit.export import ArcTask, ColumnView, ExportSource, pair

__all__ = ["COLUMN_VIEWS", "FORMATS", "RELEASE_VIEW", "arc_tasks", "task_numbers"]

#: Formats only COGITAO configs take: none (the generic ones cover it).
FORMATS = ()

#: The official COGITAO release's layout.
RELEASE_VIEW = ColumnView(
    "cogitao-release", "the official COGITAO release's file and column names, int64 grids",
    renames={"input": "input", "output": "output", "transformations": "transformation_suite"},
    cell_types={"input": "int64", "output": "int64"},
    split_names={"train": "train", "validation": "val", "test": "test", "validation_ood": "val_ood",
                 "test_ood": "test_ood"})
COLUMN_VIEWS = (RELEASE_VIEW,)


def task_numbers(sequences: list[tuple[str, ...]], shots: int) -> np.ndarray:
    """For every row (given by its sequence), the number of the task it belongs to, or -1 for none."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for row, sequence in enumerate(sequences):
        groups.setdefault(sequence, []).append(row)
    numbers, size, task = np.full(len(sequences), -1, np.int64), shots + 1, 0
    for members in groups.values():
        for start in range(0, len(members) - size + 1, size):
            numbers[members[start:start + size]] = task
            task += 1
    return numbers


def _sequences(source: ExportSource, split: str) -> list[tuple[str, ...]]:
    return [tuple(sequence) for batch in source.batches(split, ["transformations"], count=False)
            for sequence in batch.column(0).to_pylist()]


def arc_tasks(source: ExportSource, split: str, shots: int = 3) -> Iterator[ArcTask]:
    """samples of one sequence grouped --shots + 1 to a task (--shots demonstrations, one test pair).

    Tasks of ``split`` in the order they complete; each row in one task at most.
    """
    if shots < 1:
        raise DataError(f"--shots {shots}: a task needs at least one demonstration pair; give 1 or more")
    numbers = task_numbers(_sequences(source, split), shots)
    pending: dict[int, list[dict]] = {}
    row = 0
    for batch in source.batches(split, ["id", "input", "output", "transformations"]):
        for record in batch.to_pylist():
            number, row = int(numbers[row]), row + 1
            if number < 0:
                continue
            members = pending.setdefault(number, [])
            members.append(record)
            if len(members) == shots + 1:
                del pending[number]
                pairs = [pair(member["input"], member["output"]) for member in members]
                yield ArcTask(number, pairs[:-1], pairs[-1:], [member["id"] for member in members],
                              {"transformations": list(record["transformations"])})
