"""What Compositional-ARC configs become in other tools' formats (the family's ``exporter``, see :mod:`cogen.export`).

* ARC tasks (``arc-json``): an episode is a task already: its study examples are the demonstrations
  (12, the 3-shot configs' 3, none in the static variant), its queries the test pairs.
* ``mlc``: the reference MLC trainer's JSONL files (:mod:`cogen.families.carc.export_mlc`).
* ``index_fields``: every export's ``index.json`` records the rotation convention of ``rotation_type`` 8.
"""

from __future__ import annotations

from collections.abc import Iterator

from cogen.kit.export import ArcTask, ExportFormat, ExportSource, pair

__all__ = ["COLUMN_VIEWS", "FORMATS", "arc_tasks", "index_fields"]

#: Formats only Compositional-ARC configs take.
FORMATS = (
    ExportFormat("mlc", "Compositional-ARC split configs as the reference MLC trainer's JSONL files "
                        "(train_/val_/test_<name>.jsonl and config_<name>.json)",
                 "cogen.families.carc.export_mlc:write_mlc"),
)
#: Column views of Compositional-ARC rows beyond the rows as built: none.
COLUMN_VIEWS = ()

_COLUMNS = ["id", "study_inputs", "study_outputs", "query_inputs", "query_outputs"]


def index_fields(source: ExportSource) -> dict:
    """What every export's ``index.json`` says of a Compositional-ARC config: which way ``rotation_type`` 8
    turns in its rows (the paper's counter-clockwise, or the reference code's clockwise)."""
    from cogen.carc.grammar import ROTATION_TYPE_8

    return {"rotation_type_8": ROTATION_TYPE_8[(source.manifest.get("spec") or {}).get("rotation", "paper")]}


def _pairs(inputs, outputs) -> list[dict]:
    return [pair(grid_in, grid_out) for grid_in, grid_out in zip(inputs, outputs, strict=True)]


def arc_tasks(source: ExportSource, split: str) -> Iterator[ArcTask]:
    """an episode per task (its study examples, then its queries as test pairs).

    One task per row of ``split``, in row order.
    """
    number = 0
    for batch in source.batches(split, _COLUMNS):
        for row in batch.to_pylist():
            yield ArcTask(number, _pairs(row["study_inputs"], row["study_outputs"]),
                          _pairs(row["query_inputs"], row["query_outputs"]), [row["id"]])
            number += 1
