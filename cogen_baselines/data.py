"""A grid experiment's splits (rows of ``input`` and ``output`` grids), padded once and held on the device.

Everything comes through :mod:`cogen.io`: each split is read as one Arrow table
(:func:`cogen.io.split_table`), turned into padded arrays and depth-4 task tokens
(:func:`cogen.io.table_arrays`, the engine of :func:`cogen.io.split_arrays`), optionally drawn as
visual-token canvases (:func:`cogen.io.visual_tokens`), and copied to the device once. A training
step then only indexes device tensors: no host copies, no per-sample Python.

Grids are padded to ``S x S``, ``S`` the largest grid side over every split of the experiment,
out-of-domain ones included (the paper's padding); canvases are ``(S+2) x (S+2)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from cogen.errors import DataError
from cogen_baselines.errors import BaselineError
from cogen_baselines.models.base import GridBatch

__all__ = ["COLUMNS", "SPLITS", "Experiment", "GridSplit", "experiment_manifest", "grid_split", "load_experiment",
           "open_stream", "task_vocabulary", "wants_task_codes"]

#: The splits of a grid experiment, in the order they are loaded.
SPLITS = ("train", "validation", "validation_ood", "test", "test_ood")
#: The columns every row of a grid experiment has (task codes come from ``transformations`` where present).
COLUMNS = frozenset({"id", "input", "output"})
_READ = COLUMNS | {"transformations"}


def task_vocabulary() -> int:
    """Task-code embedding rows: the registry's largest token id plus one (identity is 0, decision 6)."""
    from cogen.engine import TRANSFORMS

    return max(t.token for t in TRANSFORMS.values()) + 1


@dataclass
class GridSplit:
    """One split on the device: grids as ``uint8``, task tokens, object indices, and the row ids."""

    name: str
    inputs: torch.Tensor
    targets: torch.Tensor
    ids: list[str]
    tasks: torch.Tensor | None = None
    objects: torch.Tensor | None = None

    def __len__(self) -> int:
        return self.inputs.shape[0]

    def batch(self, rows: torch.Tensor | slice) -> GridBatch:
        """The rows ``rows`` (an index tensor on the device, or a slice) as a :class:`GridBatch` of int64."""
        def take(tensor):
            return None if tensor is None else tensor[rows].long()

        return GridBatch(take(self.inputs), take(self.targets), take(self.tasks), take(self.objects))


@dataclass
class Experiment:
    """An experiment ready to train on: its splits, the grid size the model sees, what the data is."""

    config: str
    setting: str
    shift: str
    splits: dict[str, GridSplit]
    height: int
    width: int
    classes: int
    task_codes: bool
    rows: dict[str, int] = field(default_factory=dict)

    def describe(self) -> dict:
        """JSON-ready facts for the run's config file."""
        return {"config": self.config, "setting": self.setting, "shift": self.shift, "task_codes": self.task_codes,
                "grid": [self.height, self.width], "classes": self.classes, "rows": self.rows}


def experiment_manifest(data, config: str) -> dict:
    """The manifest of ``config`` in a build folder or Hub repo (its spec says the shift, its columns the data)."""
    from cogen.errors import EvalError
    from cogen.folder import read_split

    try:
        return read_split(data, config, "validation").manifest
    except EvalError as error:
        raise DataError(str(error)) from None


def wants_task_codes(manifest: dict, task_codes: str) -> bool:
    """Whether a run with ``--task-codes task_codes`` gives the model task codes: ``auto`` does for
    composition (CompGen) experiments and not for environment (EnvGen) ones, as the paper."""
    if task_codes not in ("auto", "on", "off"):
        raise BaselineError(f"task_codes must be auto, on or off, not {task_codes!r}")
    if task_codes != "auto":
        return task_codes == "on"
    spec = manifest.get("spec")
    shift = spec.get("shift", "composition") if isinstance(spec, dict) else "composition"
    return shift == "composition"


def _read(data, config: str, split: str, limit: int | None, tokens: bool):
    from cogen.io import split_table, table_arrays

    table = split_table(data, config, split, keep=lambda name: name in _READ)
    if limit is not None:
        table = table.slice(0, limit)
    if tokens and "transformations" not in table.column_names:
        raise DataError(f"{config} is a composition (CompGen) experiment but its {split} split has no task codes "
                        "(no 'transformations' column); use a dataset built by cogen, or pass task_codes='off'")
    arrays = table_arrays(table, tokens=tokens, columns=["input", "output"])
    return arrays, [str(name) for name in table.column("id").to_pylist()]


def _pad_to(grids: np.ndarray, side: int) -> np.ndarray:
    from cogen.io import PAD_VALUE

    extra = side - grids.shape[-1]
    return np.pad(grids, ((0, 0), (0, side - grids.shape[-2]), (0, extra)), constant_values=PAD_VALUE)


def _tensor(array: np.ndarray | None, device, dtype) -> torch.Tensor | None:
    return None if array is None else torch.from_numpy(np.ascontiguousarray(array)).to(device=device, dtype=dtype)


def load_experiment(data, config: str, *, visual_tokens: bool, objects: bool = False, task_codes: str = "auto",
                    device: str | torch.device = "cpu", train_limit: int | None = None,
                    eval_limit: int | None = None) -> Experiment:
    """Load every split of grid experiment ``config`` of ``data`` (build folder or Hub repo id) onto ``device``.

    ``visual_tokens``: 15-class canvases instead of 11-class padding; ``objects``: Grid-TF's object
    indices of the input canvases; ``task_codes``: ``auto`` (depth-4 codes for composition
    experiments, none for environment ones, as the paper), ``on`` or ``off``; ``train_limit`` and
    ``eval_limit``: keep only the first rows of the training split, of every other split.
    """
    from cogen.io import VISUAL_CLASSES
    from cogen_baselines.workload import alternatives, manifest_columns, models_for

    manifest = experiment_manifest(data, config)
    missing = sorted(COLUMNS - manifest_columns(manifest))
    if missing:
        raise BaselineError(f"{config} has no {', '.join(missing)} column(s): it is not a grid experiment; "
                            + alternatives(models_for(manifest)))
    tokens = wants_task_codes(manifest, task_codes)
    loaded = {split: _read(data, config, split, train_limit if split == "train" else eval_limit, tokens)
              for split in SPLITS if split in manifest.get("splits", {})}
    if "train" not in loaded:
        raise DataError(f"{config} has no train split")
    side = max(int(arrays[f"{c}_shape"].max(initial=1)) for arrays, _ in loaded.values() for c in ("input", "output"))
    splits = {name: grid_split(name, arrays, ids, side, visual_tokens=visual_tokens, objects=objects,
                               task_codes=tokens, device=device)
              for name, (arrays, ids) in loaded.items()}
    size = side + 2 if visual_tokens else side
    return Experiment(config, str(manifest.get("setting", config.split("-")[0])),
                      manifest["spec"].get("shift", "composition") if isinstance(manifest.get("spec"), dict)
                      else "composition", splits, size, size, VISUAL_CLASSES if visual_tokens else 11, tokens,
                      {name: len(split) for name, split in splits.items()})


def grid_split(name: str, arrays: dict[str, np.ndarray], ids: list[str], side: int, *, visual_tokens: bool,
               objects: bool, task_codes: bool, device) -> GridSplit:
    """Arrays in the form of :func:`cogen.io.split_arrays` (or a :class:`cogen.stream.SampleStream`
    batch) as a split on ``device``: padded to ``side``, drawn as visual tokens, with object indices."""
    from cogen.io import visual_tokens as draw

    grids = {c: _pad_to(arrays[c], side) for c in ("input", "output")}
    if visual_tokens:
        grids = {c: draw(grids[c], arrays[f"{c}_shape"]) for c in grids}
    object_ids = None
    if objects:
        from cogen_baselines.objects import object_indices

        object_ids = object_indices(grids["input"])
    return GridSplit(name, _tensor(grids["input"], device, torch.uint8), _tensor(grids["output"], device, torch.uint8),
                     ids, _tensor(arrays.get("tokens") if task_codes else None, device, torch.int64),
                     _tensor(object_ids, device, torch.int16))


#: Stored training rows a stream must reproduce before it may stand in for the training split.
STREAM_CHECK_ROWS = 16


def open_stream(spec: str, data, config: str):
    """The endless training stream of ``config`` from ``spec`` (a packaged spec name or a file), guarded
    against the evaluation splits stored in ``data``; refused unless it continues ``data``'s training
    split: its first samples must be the stored training rows (those the build did not regenerate),
    input, output and sequence alike. Read through the public paths only (:mod:`cogen.stream`,
    :mod:`cogen.io`)."""
    from cogen.io import split_table, table_arrays
    from cogen.stream import SampleStream

    manifest = experiment_manifest(data, config)
    stream = SampleStream(spec, config, "train", seed=manifest.get("seed"), guard=data)
    regenerated = {int(index) for index, _ in manifest["splits"]["train"].get("regenerated", [])}
    rows = min(STREAM_CHECK_ROWS, manifest["splits"]["train"].get("rows", STREAM_CHECK_ROWS))
    table = split_table(data, config, "train", keep=lambda name: name in _READ).slice(0, rows)
    stored = table_arrays(table, tokens="transformations" in table.column_names, columns=["input", "output"])
    drawn = stream.samples(0, table.num_rows)
    if not all(_same_sample(stored, drawn, k) for k in range(table.num_rows) if k not in regenerated):
        raise BaselineError(f"--stream {spec}: its {config} is not the experiment {data} was built from (its first "
                            "samples differ from the stored training rows); stream the spec the data was built with, "
                            "or rebuild the data from this spec")
    return stream


def _same_sample(stored: dict, drawn: dict, k: int) -> bool:
    """Row ``k`` of a stored split and of a stream hold the same grids (true shapes) and task tokens."""
    for column in ("input", "output"):
        (h, w), (h2, w2) = stored[f"{column}_shape"][k], drawn[f"{column}_shape"][k]
        if (h, w) != (h2, w2) or not np.array_equal(stored[column][k][:h, :w], drawn[column][k][:h, :w]):
            return False
    return "tokens" not in stored or np.array_equal(stored["tokens"][k], drawn["tokens"][k])

