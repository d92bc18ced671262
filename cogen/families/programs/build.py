"""The string-to-grid programs family of ``cogen build``: one config per setting, one row per function.

Function ``i`` of a config is a pure function of (seed, config name, i, retry)
(:func:`cogen.families.programs.functions.sample`). The builder (a :class:`cogen.kit.build.FamilyBuilder`)
samples every function of a config once, regenerates the repeats of an earlier function in canonical order (the
paper's functions are "different"), records those regenerations in the manifest and writes the rows in shards;
any shard can be regenerated from the manifest alone.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from cogen.families.programs.functions import (
    CELLS,
    CHARACTERS,
    INPUTS,
    SAMPLES,
    SIZE,
    FunctionBatch,
    input_bits,
    sample,
    stream_seed,
)
from cogen.families.programs.spec import ProgramsConfig, setting_from_dict
from cogen.kit.build import FamilyBuilder, ShardTask, add_stats, row_groups

__all__ = ["COLUMNS", "ProgramsBuilder", "rows_table", "shard_tables"]

#: Columns of every programs config, in order.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "string"),
    ("setting", "string"),
    ("inputs", "list<string>"),
    ("outputs", "list<string>"),
    ("cell_groups", "list<list<int8>>"),
    ("patterns", "list<string>"),
    ("character_rows", "list<int8>"),
    ("sample_inputs", "list<list<list<int8>>>"),
    ("sample_outputs", "list<list<list<int8>>>"),
)


def _nested(values, shape: tuple[int, ...]):
    """A pyarrow list array of ``len(shape) - 1`` nesting levels over flat ``values`` (an array or a
    pyarrow array) of a regular shape."""
    import pyarrow as pa

    array = values if isinstance(values, pa.Array) else pa.array(np.asarray(values).reshape(-1))
    for depth in range(len(shape) - 1, 0, -1):
        count = int(np.prod(shape[:depth]))
        array = pa.ListArray.from_arrays(pa.array(np.arange(count + 1, dtype=np.int32) * shape[depth]), array)
    return array


def _texts(cells: np.ndarray, width: int, row: int | None = None):
    """Rows of 0/1 ``cells`` (``width`` per string) as a pyarrow string array of ``.``/``*``, with a
    newline after every ``row`` characters but the last."""
    import pyarrow as pa

    chars = np.where(cells.reshape(-1, width) > 0, ord("*"), ord(".")).astype(np.uint8)
    if row is not None:
        lines = chars.reshape(len(chars), width // row, row)
        newline = np.full((len(chars), width // row, 1), ord("\n"), np.uint8)
        chars = np.concatenate([lines, newline], axis=2).reshape(len(chars), -1)[:, :-1]
    count, length = chars.shape
    offsets = pa.py_buffer((np.arange(count + 1, dtype=np.int32) * length).tobytes())
    data = pa.py_buffer(np.ascontiguousarray(chars).tobytes())
    return pa.Array.from_buffers(pa.string(), count, [None, offsets, data])


def rows_table(batch: FunctionBatch, ids):
    """The rows of ``batch`` as an Arrow table with :data:`COLUMNS`; ``ids`` is the ``id`` column, an
    Arrow ``string`` array."""
    import pyarrow as pa

    n = len(batch)
    outputs = batch.outputs()
    inputs = pa.array(list(INPUTS) * n, pa.string())
    columns = {
        "id": ids,
        "setting": pa.array([batch.setting] * n, pa.string()),
        "inputs": _nested(inputs, (n, SAMPLES)),
        "outputs": _nested(_texts(outputs, CELLS, SIZE), (n, SAMPLES)),
        "cell_groups": _nested(batch.groups.astype(np.int8), (n, SIZE, SIZE)),
        "patterns": _nested(_texts(batch.patterns, SIZE), (n, CHARACTERS)),
        "character_rows": _nested(batch.rows.astype(np.int8), (n, CHARACTERS)),
        "sample_inputs": _nested(np.tile(input_bits().astype(np.int8), (n, 1)), (n, SAMPLES, 1, CHARACTERS)),
        "sample_outputs": _nested(outputs.astype(np.int8), (n, SAMPLES, SIZE, SIZE)),
    }
    return pa.table(columns)


def shard_tables(task: ShardTask, stats: dict[str, int]) -> Iterator:
    """Arrow tables (one per row group) of a programs shard; ``stats`` counts functions and regenerations."""
    for start, rows in row_groups(task):
        add_stats(stats, accepted=len(rows), regenerated=rows.regenerated)
        kind, stream = rows.source
        yield rows_table(sample(kind, stream, rows.indices, rows.retries), task.ids(start, len(rows)))


class ProgramsBuilder(FamilyBuilder):
    """Plans the configs of a programs spec: every function of each setting, made distinct."""

    family = "programs"
    #: Bump when the sampler changes what a (seed, config, index, retry) produces.
    GENERATOR_VERSION = 1
    COLUMNS = COLUMNS
    setting_from_dict = staticmethod(setting_from_dict)

    def source(self, config: ProgramsConfig, split: str) -> tuple[str, int]:
        """A config's functions: its setting (kind) and its word stream."""
        return config.kind, stream_seed(self.setting.seed, config.name)

    def keys(self, source: tuple[str, int], indices: np.ndarray, retries: np.ndarray) -> np.ndarray:
        """Each function's key (its outputs): no function twice in a config."""
        return sample(*source, indices, retries).keys()

    def config_info(self, config: ProgramsConfig) -> dict:
        """The config's setting (``kind``)."""
        return {"kind": config.kind}
