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
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from cogen.errors import DataError
from cogen.kit.export import ExportSource, Written

__all__ = ["SPLIT_FILES", "default_name", "grid_texts", "record_lines", "write_mlc"]

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


def write_mlc(source: ExportSource, folder: Path, name: str | None = None) -> Written:
    """Write ``train_/val_/test_<name>.jsonl`` and ``config_<name>.json`` of the config into ``folder``."""
    manifest = source.manifest
    if manifest.get("kind") == "episodes":
        raise DataError(f"{source.config} is the raw episode pool (one split, no held-out triplets); export one of "
                        "its split configs, such as carc-systematicity-1860, carc-3shot-1860 or carc-static")
    name = name or default_name(manifest)
    if not name or "/" in name or "\\" in name:
        raise DataError(f"--name {name!r}: give a plain file name part, such as systematicity_seed_1860")
    missing = [split for split in SPLIT_FILES if split not in manifest["splits"]]
    if missing:
        raise DataError(f"{source.config} has no {', '.join(missing)} split; the mlc format needs train, validation "
                        "and test")
    labels: Counter = Counter()
    files = {f"{mode}_{name}.jsonl": _write_split(source, split, folder / f"{mode}_{name}.jsonl",
                                                  labels if split == "train" else None)
             for split, mode in SPLIT_FILES.items()}
    record = _config_record(source, labels, folder)
    (folder / f"config_{name}.json").write_text(json.dumps(record, indent=4) + "\n", encoding="utf-8")
    return Written({**files, f"config_{name}.json": 1})


def _write_split(source: ExportSource, split: str, path: Path, labels: Counter | None) -> int:
    """One split as JSONL, a batch at a time; counts the function labels of its rows into ``labels``."""
    with path.open("wb") as file:
        for batch in source.batches(split, rows=BATCH_ROWS):
            file.writelines(record_lines(batch))
            if labels is not None:
                labels.update(_batch_labels(batch))
    return source.rows(split)


# A 10x10 grid of one-digit values is always the same 320 characters of JSON but for its digits.
_ROW = "[" + ", ".join(["0"] * 10) + "]"
_TEMPLATE = np.frombuffer(("[" + ", ".join([_ROW] * 10) + "]").encode(), np.uint8)
_DIGITS = np.flatnonzero(_TEMPLATE == ord("0"))


def grid_texts(grids: np.ndarray) -> np.ndarray:
    """``json.dumps`` of each 10x10 grid of values 0..9, as rows of ASCII bytes ``(n, 320)``."""
    grids = np.asarray(grids).reshape(-1, 100)
    if grids.size and (grids.min() < 0 or grids.max() > 9):
        raise DataError("a grid holds a value outside 0..9; the mlc format's patch tokens need digits")
    texts = np.tile(_TEMPLATE, (len(grids), 1))
    texts[:, _DIGITS] = grids + ord("0")
    return texts


def record_lines(batch) -> list[bytes]:
    """The JSONL lines of a record batch: byte for byte ``json.dumps`` of each record of
    :func:`cogen.carc.mlc.reference_records`, with the grids formatted by :func:`grid_texts` rather
    than converted to Python lists (several times faster on a paper-size split)."""
    from cogen.carc.mlc import reference_meta_data

    pairs = {name: _pairs_texts(batch.column(f"{name}_inputs"), batch.column(f"{name}_outputs"))
             for name in ("study", "query")}
    types, kwargs = (batch.column(name).to_pylist() for name in ("transformations", "transformation_kwargs"))
    turns = batch.column("rotation_type_8").to_pylist() if "rotation_type_8" in batch.schema.names else \
        ["counter-clockwise"] * batch.num_rows
    return [b'{"study_examples": ' + study + b', "queries": ' + queries + b', "meta_data": '
            + json.dumps(reference_meta_data(t, k, turn)).encode() + b"}\n"
            for study, queries, t, k, turn in zip(pairs["study"], pairs["query"], types, kwargs, turns, strict=True)]


def _pairs_texts(inputs, outputs) -> list[bytes]:
    """Per row, the JSON list of ``[input, output]`` pairs of two ``list<list<list<int8>>>`` columns."""
    counts = inputs.value_lengths().to_numpy(zero_copy_only=False)
    texts_in = grid_texts(inputs.flatten().flatten().flatten().to_numpy(zero_copy_only=False))
    texts_out = grid_texts(outputs.flatten().flatten().flatten().to_numpy(zero_copy_only=False))
    lines, start = [], 0
    for count in counts.tolist():
        pairs = [b"[" + texts_in[k].tobytes() + b", " + texts_out[k].tobytes() + b"]"
                 for k in range(start, start + count)]
        lines.append(b"[" + b", ".join(pairs) + b"]")
        start += count
    return lines


def _batch_labels(batch) -> Iterator[str]:
    """The reference split script's function label of every role of every row of ``batch``."""
    for types, kwargs in zip(batch.column("transformations").to_pylist(),
                             batch.column("transformation_kwargs").to_pylist(), strict=True):
        yield from (_label(t, k) for t, k in zip(types, kwargs, strict=True))


def _config_record(source: ExportSource, labels: Counter, folder: Path) -> dict:
    """The split script's config fields, counted from the rows, and cogen's provenance."""
    from cogen.carc.grammar import ROTATION_TYPE_8

    manifest = source.manifest
    return {
        "train_func_compositions": manifest.get("train_triplets"),
        "test_func_compositions": manifest.get("held_out_triplets"),
        "func_freq": dict(sorted(labels.items())),
        "num_train_samples": source.rows("train"),
        "num_val_samples": source.rows("validation"),
        "num_test_samples": source.rows("test"),
        "rotation_type_8": ROTATION_TYPE_8[manifest["spec"]["rotation"]],
        "source": {"data": source.relative_data(folder), "config": manifest["config"], "kind": manifest.get("kind"),
                   "split_seed": manifest.get("split_seed"), "generator_version": manifest.get("generator_version"),
                   "fingerprint": manifest.get("fingerprint")},
    }


def _label(name: str, kwargs: str) -> str:
    """The reference split script's function label, e.g. ``translation direction_x step_size_1``."""
    return " ".join([name, *(f"{key}_{value}" for key, value in json.loads(kwargs).items())])
