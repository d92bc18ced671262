"""``cogen export --format mlc``: a Compositional-ARC split as the reference MLC trainer reads it.

The reference's ``VisualGrammarDataset`` reads ``<data_dir>/<mode>_<data_file_name>.jsonl`` with
``mode`` in ``train``, ``val``, ``test`` (note ``val``, where cogen says ``validation``); each line is
a record of its split script (:func:`cogen.carc.mlc.reference_records`: ``study_examples``,
``queries``, ``meta_data``). ``data_file_name`` defaults to the split script's own names,
``systematicity_seed_<seed>`` (the 3-shot configs too: the reference's notebooks keep the name
and change the folder) and ``static_systematicity_seed_<seed>``. Beside the three files,
``config_<name>.json`` has the fields of the split script's config file (triplets, function
frequencies, counts) plus where the data came from and what ``rotation_type`` 8 does in it.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from cogen.errors import DataError
from cogen.export import ExportedFile, ExportReport, require_family

__all__ = ["SPLIT_FILES", "default_name", "write_mlc"]

#: cogen's split name -> the reference trainer's ``mode``.
SPLIT_FILES = {"train": "train", "validation": "val", "test": "test"}
#: Rows converted to JSON at a time (keeps memory flat on the 80,000-episode training splits).
BATCH_ROWS = 1_000


def default_name(manifest: dict) -> str:
    """The reference split script's ``data_file_name`` for a config."""
    kind, seed = manifest.get("kind"), manifest.get("split_seed")
    if kind == "static":
        return f"static_systematicity_seed_{manifest['spec']['static']['seed']}"
    return f"systematicity_seed_{seed}"


def write_mlc(data: str | Path, config: str, folder: Path, name: str | None = None) -> ExportReport:
    """Write ``train_/val_/test_<name>.jsonl`` and ``config_<name>.json`` of ``config`` into ``folder``."""
    from cogen.folder import read_split

    splits = {"train": read_split(data, config, "train")}
    manifest = splits["train"].manifest
    require_family(manifest, ("carc",), "mlc")
    if manifest.get("kind") == "episodes":
        raise DataError(f"{config} is the raw episode pool (one split, no held-out triplets); export one of its "
                        "split configs, such as carc-systematicity-1860, carc-3shot-1860 or carc-static")
    name = name or default_name(manifest)
    if not name or "/" in name or "\\" in name:
        raise DataError(f"--name {name!r}: give a plain file name part, such as systematicity_seed_1860")
    for split in ("validation", "test"):
        splits[split] = read_split(data, config, split)
    folder.mkdir(parents=True, exist_ok=True)
    files = [_write_split(split, folder / f"{SPLIT_FILES[cogen_name]}_{name}.jsonl")
             for cogen_name, split in splits.items()]
    config_path = folder / f"config_{name}.json"
    config_path.write_text(json.dumps(_config_record(manifest, splits, data), indent=4) + "\n", encoding="utf-8")
    return ExportReport("mlc", config, folder, [*files, ExportedFile(config_path, 1)])


def _write_split(split, path: Path) -> ExportedFile:
    """One split as JSONL, written under a temporary name and renamed when complete."""
    from cogen.carc.mlc import reference_records

    partial = path.with_name(path.name + ".partial")
    with partial.open("w", encoding="utf-8") as file:
        for batch in split.table.to_batches(BATCH_ROWS):
            for record in reference_records(batch.to_pydict()):
                file.write(json.dumps(record) + "\n")
    partial.replace(path)
    return ExportedFile(path, split.table.num_rows)


def _config_record(manifest: dict, splits: dict, data) -> dict:
    """The split script's config fields, recomputed from the rows, and cogen's provenance."""
    from cogen.carc.grammar import ROTATION_TYPE_8

    train = splits["train"].table
    labels = Counter(_label(t, k) for types, kwargs in zip(train.column("transformations").to_pylist(),
                                                         train.column("transformation_kwargs").to_pylist(), strict=True)
                     for t, k in zip(types, kwargs, strict=True))
    held_out = manifest.get("held_out_triplets")
    return {
        "train_func_compositions": manifest.get("train_triplets"),
        "test_func_compositions": held_out,
        "func_freq": dict(sorted(labels.items())),
        "num_train_samples": train.num_rows,
        "num_val_samples": splits["validation"].table.num_rows,
        "num_test_samples": splits["test"].table.num_rows,
        "rotation_type_8": ROTATION_TYPE_8[manifest["spec"]["rotation"]],
        "source": {"data": str(data), "config": manifest["config"], "kind": manifest.get("kind"),
                   "split_seed": manifest.get("split_seed"), "generator_version": manifest.get("generator_version"),
                   "fingerprint": manifest.get("fingerprint")},
    }


def _label(name: str, kwargs: str) -> str:
    """The reference split script's function label, e.g. ``translation direction_x step_size_1``."""
    return " ".join([name, *(f"{key}_{value}" for key, value in json.loads(kwargs).items())])
