"""A tiny COGITAO build with frames and a predictions file with every kind of mistake, for the
``cogen view`` tests; and the stored rows, read straight from the Parquet files (the oracle)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

CONFIG = "V-1"
SPEC = """\
setting: V
seed: 3
output: {frames: true}
defaults:
  grid: {height: [6, 8], width: [6, 8]}
  objects: {count: [1, 2], where: {is_shape_fully_connected: true, rows: [1, 3], cols: [1, 3]}}
  sizes: {train: 30, validation: 4, test: 4, validation_ood: 4, test_ood: 30}
experiments:
  V-1:
    in_domain: {sequences: [[translate_up], [rot90], [rot90, rot90]]}
    out_of_domain: {sequences: [[rot90, translate_up], [translate_up, rot90]]}
"""


def build_tiny(folder: Path) -> Path:
    """Build the tiny spec into ``folder`` (one worker) and return it."""
    from cogen.pipeline import build

    spec = folder.parent / f"{folder.name}.yaml"
    spec.write_text(SPEC)
    build(spec, folder, workers=1)
    return folder


def stored_rows(folder: Path, config: str, split: str) -> dict[str, dict]:
    """Row id -> row, read with pyarrow from the split's shard files (not through cogen)."""
    files = sorted((folder / "data" / config).glob(f"{split}-*.parquet"))
    rows = [row for file in files for row in pq.read_table(file).to_pylist()]
    return {row["id"]: row for row in rows}


def mixed_predictions(folder: Path, path: Path, split: str = "test_ood") -> dict[str, list | None]:
    """Write predictions of every kind for ``split``: right (k % 3 == 0), the input (k % 3 == 1),
    the output with one cell changed (k % 3 == 2), a null (row 2) and a missing record (row 5).
    Returns id -> what was written (None: null; absent: missing)."""
    rows = list(stored_rows(folder, CONFIG, split).values())
    written: dict[str, list | None] = {}
    for k, row in enumerate(rows):
        output = np.array(row["output"])
        if k % 3 == 1:
            output = np.array(row["input"])
        elif k % 3 == 2:
            output[0, 0] = (output[0, 0] + 1) % 10
        if k != 5:
            written[row["id"]] = None if k == 2 else output.tolist()
    with path.open("w", encoding="utf-8") as out:
        for name, grid in written.items():
            out.write(json.dumps({"id": name, "prediction": grid}) + "\n")
    return written


def wrong_ids(folder: Path, written: dict[str, list | None], split: str = "test_ood") -> set[str]:
    """The ids whose prediction is missing, null or not the stored output (the oracle of "wrong")."""
    rows = stored_rows(folder, CONFIG, split)
    return {name for name, row in rows.items() if written.get(name) is None or written[name] != row["output"]}
