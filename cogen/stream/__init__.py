"""Endless, deterministic streams of samples, without building anything.

>>> stream = SampleStream("c1", "C1-1", guard="cogen-data")      # doctest: +SKIP
>>> batch = next(iter(stream))                                    # doctest: +SKIP
>>> batch["input"].shape, batch["tokens"][0]                      # doctest: +SKIP
((1024, 20, 20), array([1, 5, 0, 0]))

A family whose record has a ``stream`` role makes the samples (:class:`StreamSource`); sample ``i``
of a stream is the same pure function of (spec, config, split, index, seed) as row ``i`` of a
build at retry 0, so a stream can stand in for a stored split, indefinitely. Batches come as
:func:`cogen.io.split_arrays` gives a stored split (``input``, ``input_shape``, ``output``,
``output_shape``, ``tokens``), padded to the domain's largest grid unless ``size`` says
otherwise, plus ``index`` and ``retry``: swapping stored data for a stream changes one line of a
training loop.

*Leak-free against stored evaluation data*: given ``guard`` (a dataset folder or Hub repo built
from the same config), the stream never yields an (input, sequence) pair of that config's other
splits; a sample that would is regenerated (retry 1, 2, ...) exactly as a build's dedup does,
so the result is still a pure function of its index.

:meth:`SampleStream.torch_dataset` wraps a stream as a PyTorch ``IterableDataset`` that shares
batches among DataLoader workers and distributed ranks (torch is imported only then).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from cogen.errors import DataError, GenerationError, SpecError
from cogen.family import family
from cogen.io.arrays import DEPTH, PAD_VALUE
from cogen.pipeline.dedup import MAX_RETRIES
from cogen.specs import SPLITS, load_spec, locate_configs

if TYPE_CHECKING:
    from cogen.stream._torch import StreamDataset

__all__ = ["DEFAULT_BATCH", "Guard", "SampleStream", "StreamDataset", "StreamSource"]

#: Samples per batch, the unit the kernels generate and DataLoader workers share.
DEFAULT_BATCH = 1024


class StreamSource(Protocol):
    """A family's endless samples of one split of one config: what its ``stream`` role,
    ``stream_source(setting, config, split, path)``, returns.

    ``rows(indices, retries)`` gives, per sample, ``keys`` (``(n, 2)`` uint64, the key a build
    deduplicates on), ``inputs`` and ``outputs`` (``(n, H, W)`` int8, zero-padded to
    :attr:`largest_grid`), ``sizes`` (``(n, 2)``: the true height and width) and ``sequences``
    (``(n, depth)`` transformation tokens, -1 padded). ``stored_keys(table)`` gives the same keys
    of a stored split, read from its ``guard_columns``.
    """

    setting: Any
    config: Any
    split: str
    guard_columns: tuple[str, ...]

    @property
    def largest_grid(self) -> tuple[int, int]: ...

    @property
    def max_depth(self) -> int: ...

    def rows(self, indices: np.ndarray, retries: np.ndarray) -> dict[str, np.ndarray]: ...

    def stored_keys(self, table) -> np.ndarray: ...


@dataclass(frozen=True)
class Guard:
    """The (input, sequence) keys a stream must never yield: those of a config's stored splits."""

    source: str
    splits: tuple[str, ...]
    keys: np.ndarray = field(repr=False)  # (n, 2) uint64, sorted rows, no repeats

    @classmethod
    def of(cls, source: str | Path, config: str, exclude: str, stream: StreamSource) -> Guard:
        """The keys (``stream.stored_keys``) of every split of ``config`` in ``source`` (a dataset folder or
        a Hub repo) but ``exclude``."""
        from cogen.folder import read_manifests, read_split
        from cogen.folder.splits import is_repo_id

        if not is_repo_id(source) and config not in read_manifests(source):
            raise DataError(f"{source} holds no config {config!r} to guard against; build it first or pass "
                            "the folder that holds it")
        parts, names = [], []
        for split in SPLITS:
            if split == exclude:
                continue
            try:
                data = read_split(source, config, split, keep=set(stream.guard_columns).__contains__)
            except DataError as error:
                if "has no split" in str(error):
                    continue
                raise
            parts.append(stream.stored_keys(data.table))
            names.append(split)
        keys = np.unique(np.concatenate(parts), axis=0) if parts else np.zeros((0, 2), np.uint64)
        return cls(str(source), tuple(names), keys)

    def contains(self, keys: np.ndarray) -> np.ndarray:
        """Which rows of ``keys`` (``(n, 2)`` uint64) are guarded."""
        if not len(self.keys) or not len(keys):
            return np.zeros(len(keys), bool)
        first = np.searchsorted(self.keys[:, 0], keys[:, 0], side="left")
        last = np.searchsorted(self.keys[:, 0], keys[:, 0], side="right")
        hit = np.zeros(len(keys), bool)
        for row in np.flatnonzero(last > first):  # rare: a first-word match; check the second word exactly
            hit[row] = bool((self.keys[first[row]:last[row], 1] == keys[row, 1]).any())
        return hit


class SampleStream:
    """An endless, deterministic stream of the samples of one split of one config.

    ``spec``: a spec file or packaged spec name, or one config name (``C1-1``); ``config``: the
    config when the spec holds several; ``guard``: a dataset folder or Hub repo whose other splits
    of this config the stream must never repeat. ``size`` pads the grids (default: the domain's
    largest grid), ``depth`` the task codes, as :func:`cogen.io.split_arrays`. The samples come
    from :attr:`source`, the family's :class:`StreamSource`; :attr:`experiment` is its config.
    """

    def __init__(self, spec: str | Path, config: str | None = None, split: str = "train", *, seed: int | None = None,
                 guard: str | Path | None = None, batch_size: int = DEFAULT_BATCH, size=None,
                 pad_value: int = PAD_VALUE, depth: int = DEPTH):
        path, selected = locate_configs(spec)
        setting = load_spec(path).with_seed(seed)
        self.source = _stream_source(setting, config or (selected[0] if selected else None), split, path)
        if batch_size < 1:
            raise DataError(f"batch_size must be at least 1, got {batch_size}")
        self.setting, self.experiment = setting, self.source.config
        self.split, self.seed, self.batch_size = split, setting.seed, int(batch_size)
        self.size = _pad_size(size, *self.source.largest_grid)
        self.pad_value, self.depth = int(pad_value), int(depth)
        if self.source.max_depth > self.depth:
            raise DataError(f"{self.experiment.name} has sequences of {self.source.max_depth} "
                            f"transformations, more than depth={self.depth}; pass a larger depth")
        self.guard = Guard.of(guard, self.experiment.name, split, self.source) if guard is not None else None

    def samples(self, start: int, stop: int) -> dict[str, np.ndarray]:
        """Samples ``start .. stop - 1`` as one batch of padded arrays."""
        if not 0 <= start <= stop:
            raise DataError(f"sample range {start}..{stop} is not a range of indices >= 0")
        indices = np.arange(start, stop, dtype=np.int64)
        rows, retries = self._rows(indices)
        return self._arrays(rows, indices, retries)

    def batch(self, number: int) -> dict[str, np.ndarray]:
        """Batch ``number``: samples ``number * batch_size`` to ``(number + 1) * batch_size - 1``."""
        return self.samples(number * self.batch_size, (number + 1) * self.batch_size)

    def batches(self, start: int = 0, stop: int | None = None, step: int = 1) -> Iterator[dict[str, np.ndarray]]:
        """Batches ``start, start + step, ...`` (before ``stop``; endless when ``stop`` is None)."""
        number = start
        while stop is None or number < stop:
            yield self.batch(number)
            number += step

    def __iter__(self) -> Iterator[dict[str, np.ndarray]]:
        return self.batches()

    def torch_dataset(self, *, rank: int | None = None, world_size: int | None = None, limit: int | None = None,
                      tensors: bool = True) -> StreamDataset:
        """This stream as a torch ``IterableDataset`` of batches (use ``DataLoader(dataset, batch_size=None)``).

        Batches are shared among DataLoader workers and ranks (``rank``/``world_size``, by default
        from ``torch.distributed`` when it is initialised) so that no sample is produced twice and
        none is skipped; ``limit`` stops after that many samples in all.
        """
        from cogen.errors import optional_import

        optional_import("torch", "SampleStream.torch_dataset()")
        from cogen.stream._torch import StreamDataset

        return StreamDataset(self, rank=rank, world_size=world_size, limit=limit, tensors=tensors)

    # ------------------------------------------------------------------ internals
    def _rows(self, indices: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
        retries = np.zeros(len(indices), np.int64)
        rows = self.source.rows(indices, retries)
        if self.guard is None:
            return rows, retries
        todo = np.flatnonzero(self.guard.contains(rows["keys"]))
        while len(todo):
            retries[todo] += 1
            if retries[todo].max() > MAX_RETRIES:
                raise GenerationError(f"{self.experiment.name} {self.split}: sample {int(indices[todo[0]])} still "
                                      f"repeats a stored pair after {MAX_RETRIES} regenerations; the spec's space of "
                                      "distinct pairs is too small")
            again = self.source.rows(indices[todo], retries[todo])
            for name, values in again.items():
                if len(values) == len(todo):  # not ``frames`` unless the job records them
                    rows[name][todo] = values
            todo = todo[self.guard.contains(again["keys"])]
        return rows, retries

    def _arrays(self, rows: dict, indices: np.ndarray, retries: np.ndarray) -> dict[str, np.ndarray]:
        from cogen.stream._kernels import pad_outside

        height, width = self.size
        sizes = rows["sizes"].astype(np.int32)
        batch = {}
        for name in ("input", "output"):
            grids = rows[f"{name}s"]  # zero-padded to the domain's largest grid; freshly made, so ours to change
            if grids.shape[1:] != (height, width):
                grids = np.pad(grids, ((0, 0), (0, height - grids.shape[1]), (0, width - grids.shape[2])))
            pad_outside(grids, sizes, np.int8(self.pad_value))
            batch[name], batch[f"{name}_shape"] = grids, sizes
        sequences = rows["sequences"]
        tokens = np.zeros((len(indices), self.depth), np.int64)
        tokens[:, : sequences.shape[1]] = np.maximum(sequences, 0)  # -1 pads become the identity token 0
        batch["tokens"] = tokens
        batch["index"] = indices
        batch["retry"] = retries
        return batch


def _stream_source(setting, config: str | None, split: str, path) -> StreamSource:
    """The samples of the family of ``setting``; a clear error for a family that has no streams."""
    from cogen.family import FAMILIES

    record = family(setting.family)
    make = record.load("stream")
    if make is None:
        streaming = [other.title for other in FAMILIES.values() if other.stream]
        raise SpecError(f"{path}: {record.title} specs have no streams; build them with `cogen build` (streams are "
                        f"made of {' or '.join(streaming) or 'no family'} samples)")
    return make(setting, config, split, path)


def _pad_size(size, max_height: int, max_width: int) -> tuple[int, int]:
    if size is None:
        return (max_height, max_width)
    height, width = (size, size) if isinstance(size, int) else (int(size[0]), int(size[1]))
    if height < max_height or width < max_width:
        raise DataError(f"size {height}x{width} is smaller than the domain's largest grid {max_height}x{max_width}; "
                        "pass a larger size (or size=None)")
    return (height, width)


def __getattr__(name: str) -> Any:
    if name == "StreamDataset":  # torch is imported only when the dataset class is asked for
        from cogen.stream._torch import StreamDataset

        return StreamDataset
    raise AttributeError(f"module 'cogen.stream' has no attribute {name!r}")
