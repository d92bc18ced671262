"""``cogen export --format arc-json``: a config as ARC task files, the format every ARC solver reads.

Each task is one JSON file ``<split>/<task id>.json`` holding ``{"train": [{"input", "output"}, ...],
"test": [{"input", "output"}, ...]}``, grids as lists of rows of colour ints (true size, no
padding). How samples become tasks:

* COGITAO: samples of one split with the same transformation sequence are grouped, in row order,
  into tasks of ``shots`` demonstration pairs and one test pair (rows left over at the end of a
  sequence's group, fewer than ``shots + 1``, make no task and are counted in the index);
* Compositional-ARC: an episode is a task already: its study examples are the demonstrations,
  its queries the test pairs.

``index.json`` beside the split folders maps every task id to its split, its source row ids
and (COGITAO) its transformation sequence, so any task can be traced back to the data.
"""

from __future__ import annotations

import json
from pathlib import Path

from cogen.errors import DataError
from cogen.export import ExportedFile, ExportReport, require_family

__all__ = ["cogitao_tasks", "write_arc_json"]


def _pair(grid_in, grid_out) -> dict:
    return {"input": [list(row) for row in grid_in], "output": [list(row) for row in grid_out]}


def cogitao_tasks(rows: list[dict], shots: int) -> list[tuple[list[dict], tuple[str, ...]]]:
    """Rows grouped by transformation sequence (first appearance order) into runs of ``shots + 1``:
    each run of rows becomes one task (its sequence beside it)."""
    groups: dict[tuple[str, ...], list[dict]] = {}
    for row in rows:
        groups.setdefault(tuple(row["transformations"]), []).append(row)
    size = shots + 1
    return [(members[start:start + size], sequence) for sequence, members in groups.items()
            for start in range(0, len(members) - size + 1, size)]


def _write_task(path: Path, train: list[dict], test: list[dict]) -> None:
    path.write_text(json.dumps({"train": train, "test": test}, separators=(",", ":")) + "\n", encoding="utf-8")


def write_arc_json(data: str | Path, config: str, folder: Path, shots: int = 3) -> ExportReport:
    """Write every split of ``config`` as ARC task files under ``folder/<split>/`` plus ``index.json``."""
    from cogen.folder import read_split
    from cogen.folder.manifest import read_manifests
    from cogen.folder.splits import is_dataset_folder

    if shots < 1:
        raise DataError(f"--shots {shots}: a task needs at least one demonstration pair; give 1 or more")
    first = None
    if is_dataset_folder(data):
        manifest = read_manifests(Path(data).expanduser()).get(config)
        if manifest is None:
            raise DataError(f"{data} has no config {config!r}")
        splits = list(manifest["splits"])
    else:
        first = read_split(data, config, "train")
        manifest, splits = first.manifest, list(first.manifest["splits"])
    require_family(manifest, ("cogitao", "carc"), "arc-json")
    index: dict[str, dict] = {}
    files, leftover = [], {}
    for split in splits:
        table = first.table if first is not None and split == "train" else read_split(data, config, split).table
        rows = table.to_pylist()
        out = folder / split
        out.mkdir(parents=True, exist_ok=True)
        count = 0
        if manifest.get("family", "cogitao") == "carc":
            for row in rows:
                task_id = f"{config}-{split}-{count:06d}"
                _write_task(out / f"{task_id}.json",
                            [_pair(i, o) for i, o in zip(row["study_inputs"], row["study_outputs"], strict=True)],
                            [_pair(i, o) for i, o in zip(row["query_inputs"], row["query_outputs"], strict=True)])
                index[task_id] = {"split": split, "rows": [row["id"]]}
                count += 1
        else:
            tasks = cogitao_tasks(rows, shots)
            for members, sequence in tasks:
                task_id = f"{config}-{split}-{count:06d}"
                pairs = [_pair(r["input"], r["output"]) for r in members]
                _write_task(out / f"{task_id}.json", pairs[:-1], pairs[-1:])
                index[task_id] = {"split": split, "rows": [r["id"] for r in members], "transformations": list(sequence)}
                count += 1
            leftover[split] = len(rows) - sum(len(members) for members, _ in tasks)
        files.append(ExportedFile(out, count))
    index_path = folder / "index.json"
    record = {"config": config, "source": str(data), "shots": shots, "rows_in_no_task": leftover, "tasks": index}
    index_path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return ExportReport("arc-json", config, folder, [*files, ExportedFile(index_path, len(index))])
