"""A COGITAO experiment's splits, padded once and held on the device.

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

__all__ = ["SPLITS", "Experiment", "GridSplit", "experiment_manifest", "grid_split", "load_experiment", "open_stream",
           "task_vocabulary"]

#: The splits of a COGITAO experiment, in the order they are loaded.
SPLITS = ("train", "validation", "validation_ood", "test", "test_ood")
_COLUMNS = frozenset({"id", "input", "output", "transformations"})


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
    """The manifest of ``config`` in a build folder or Hub repo (its spec says the shift and the family)."""
    from cogen.errors import EvalError
    from cogen.folder import read_split as load_split

    try:
        return load_split(data, config, "validation").manifest
    except EvalError as error:
        raise DataError(str(error)) from None


def _wants_task_codes(manifest: dict, task_codes: str) -> bool:
    if task_codes not in ("auto", "on", "off"):
        raise BaselineError(f"task_codes must be auto, on or off, not {task_codes!r}")
    if task_codes != "auto":
        return task_codes == "on"
    spec = manifest.get("spec")
    shift = spec.get("shift", "composition") if isinstance(spec, dict) else "composition"
    return shift == "composition"


def _read(data, config: str, split: str, limit: int | None, tokens: bool):
    from cogen.io import split_table, table_arrays

    table = split_table(data, config, split, keep=lambda name: name in _COLUMNS)
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
                    device: str | torch.device = "cpu", train_limit: int | None = None) -> Experiment:
    """Load every split of COGITAO experiment ``config`` of ``data`` (build folder or Hub repo id) onto ``device``.

    ``visual_tokens``: 15-class canvases instead of 11-class padding; ``objects``: Grid-TF's object
    indices of the input canvases; ``task_codes``: ``auto`` (depth-4 codes for composition
    experiments, none for environment ones, as the paper), ``on`` or ``off``; ``train_limit``: keep
    only the first rows of the training split.
    """
    from cogen.io import VISUAL_CLASSES

    manifest = experiment_manifest(data, config)
    if manifest.get("family", "cogitao") != "cogitao":
        raise BaselineError(f"{config} is a {manifest.get('family')} config; the COGITAO models train on COGITAO "
                            "experiments (use --model mlc for Compositional-ARC)")
    tokens = _wants_task_codes(manifest, task_codes)
    loaded = {split: _read(data, config, split, train_limit if split == "train" else None, tokens)
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


def open_stream(spec: str, data, config: str):
    """The endless training stream of ``config`` from ``spec`` (a packaged spec name or a file), guarded
    against the evaluation splits stored in ``data``; refused unless ``data`` was built from that spec."""
    from cogen.families.cogitao.build import CogitaoBuilder
    from cogen.stream import SampleStream

    manifest = experiment_manifest(data, config)
    stream = SampleStream(spec, config, "train", seed=manifest.get("seed"), guard=data)
    built = CogitaoBuilder(stream.setting).fingerprint(stream.experiment)
    if built != manifest.get("fingerprint"):
        raise BaselineError(f"--stream {spec}: its {config} is not the experiment {data} was built from (their "
                            "fingerprints differ); stream the spec the data was built with, or rebuild the data "
                            "from this spec")
    return stream

