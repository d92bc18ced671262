"""COGITAO's endless samples: the ``stream`` role of its record, read by :class:`cogen.stream.SampleStream`.

Sample ``i`` of a stream is the same pure function of (spec, config, split, index, seed) as row
``i`` of a build (:func:`cogen.families.cogitao.generate.sampler.generate_rows` at retry 0), and a stored row's key
(:func:`stored_keys`) is the one the sampler gives it, so a stream can leave out every pair a
build stored. Out-of-domain sequences are never drawn for training: they are not in the in-domain
domain.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cogen.errors import DataError, SpecError
from cogen.families.cogitao.generate.sampler import SplitJob, generate_rows, require_ok
from cogen.families.cogitao.schema import Experiment, Setting

__all__ = ["GUARD_COLUMNS", "CogitaoStream", "stored_keys", "stream_source"]

#: The stored columns a row's key is computed from.
GUARD_COLUMNS = ("input", "transformations")


@dataclass(frozen=True)
class CogitaoStream:
    """The samples of one split of one experiment (a :class:`cogen.stream.StreamSource`)."""

    setting: Setting
    config: Experiment
    split: str
    job: SplitJob

    @property
    def largest_grid(self) -> tuple[int, int]:
        """The domain's largest grid (height, width)."""
        grid = self.job.domain.grid
        return grid.height.hi, grid.width.hi

    @property
    def max_depth(self) -> int:
        """The longest transformation sequence of the domain."""
        return self.job.domain.sequences.max_depth

    guard_columns = GUARD_COLUMNS

    def rows(self, indices: np.ndarray, retries: np.ndarray) -> dict[str, np.ndarray]:
        """Samples ``indices`` at ``retries``: ``keys``, ``inputs``, ``outputs``, ``sizes``, ``sequences``, ..."""
        rows = generate_rows(self.job, indices, retries)
        require_ok(rows, self.config.name, self.split, int(indices[0]) if len(indices) else 0)
        return rows

    def stored_keys(self, table) -> np.ndarray:
        """The sampler's key of every row of a stored split (:func:`stored_keys`)."""
        return stored_keys(table)


def stream_source(setting: Setting, config: str | None, split: str, path: str | Path) -> CogitaoStream:
    """The stream of ``split`` of experiment ``config`` of ``setting`` (the one it holds when None)."""
    experiment = _one_experiment(setting, config, path)
    if split not in experiment.splits():
        raise DataError(f"{experiment.name} has no split {split!r}; it has {', '.join(experiment.splits())}")
    job = SplitJob.of(experiment.domain(split), setting.seed, experiment.name, split)
    return CogitaoStream(setting, experiment, split, job)


def _one_experiment(setting: Setting, name: str | None, path) -> Experiment:
    names = [e.name for e in setting.experiments]
    if name is None:
        if len(names) != 1:
            raise SpecError(f"{path} holds {len(names)} configs ({', '.join(names)}); name one with --experiment")
        name = names[0]
    return setting.experiment(name)


def stored_keys(table) -> np.ndarray:
    """The sampler's content key (:func:`cogen.families.cogitao.generate._sampler.content_key`) of every stored row."""
    import pyarrow.compute as pc

    from cogen.families.cogitao.generate._sampler import content_keys
    from cogen.io.arrays import task_tokens
    from cogen.kit.export import column_shapes, pad_grid_column

    if table.num_rows == 0:
        return np.zeros((0, 2), np.uint64)
    column = table.column("input").combine_chunks()
    largest = tuple(int(v) for v in column_shapes(column, 2).max(axis=0))
    grids, shapes = pad_grid_column(column, 2, largest, 0, "input")
    sequences = table.column("transformations").combine_chunks()
    lengths = np.asarray(pc.list_value_length(sequences), np.int64)
    tokens = np.ascontiguousarray(task_tokens(sequences, depth=None))
    return content_keys(tokens, lengths, grids, shapes.astype(np.int64))
