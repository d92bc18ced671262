"""The MLC model's token layout (Compositional-ARC paper Sec. 3.2; reference ``PatchTokenizer``).

NumPy only, so it loads anywhere; turn the arrays into tensors in your own training code.

* ids 0-4: ``PAD``, ``SOS``, ``EOS``, ``IO_SEP`` ("→") and ``SUP_SEP`` ("|");
* ids 5..10004: every 2x2 patch ``(a, b, c, d)`` (top-left, top-right, bottom-left, bottom-right)
  as ``5 + 1000a + 100b + 10c + d``; a 10x10 grid is 25 tokens, patches left to right, top to bottom.
* Encoder sequence of a query: ``in IO_SEP out SUP_SEP`` for each of the K study examples, then
  ``query_in IO_SEP`` (52K + 26 tokens: 650 for K = 12, 182 for K = 3). Decoder input is
  ``SOS + out``, target ``out + EOS``.
* Copy task (the reference's default): every study pair is also a decoder query, placed before the
  real queries (``is_copy`` marks them).

>>> from cogen.carc.mlc import mlc_arrays
>>> rows = datasets.load_dataset(folder, "carc-systematicity-1860", split="train").with_format("numpy")
>>> batch = mlc_arrays(rows[:200])            # dict of int arrays: encoder, decoder_input, target, is_copy
>>> for batch in mlc_batches(rows, 200): ...  # the whole split, 200 episodes at a time

:func:`reference_records` writes rows in the reference's JSONL record layout, for its own trainer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping

import numpy as np

__all__ = ["EOS", "IO_SEP", "PAD", "PATCH_OFFSET", "SOS", "SUP_SEP", "VOCAB_SIZE", "decode_grids", "encode_grids",
           "encoder_length", "mlc_arrays", "mlc_batches", "mlc_episode", "reference_meta_data", "reference_records"]

PAD, SOS, EOS, IO_SEP, SUP_SEP = range(5)
PATCH_OFFSET = 5
VOCAB_SIZE = PATCH_OFFSET + 10_000
GRID_TOKENS = 25
_WEIGHTS = np.array([1000, 100, 10, 1])


def encode_grids(grids) -> np.ndarray:
    """Patch tokens of 10x10 grids: ``(..., 10, 10)`` -> ``(..., 25)`` int64."""
    grids = np.asarray(grids, np.int64)
    lead = grids.shape[:-2]
    patches = grids.reshape(*lead, 5, 2, 5, 2).swapaxes(-3, -2).reshape(*lead, GRID_TOKENS, 4)
    return PATCH_OFFSET + patches @ _WEIGHTS


def decode_grids(tokens) -> np.ndarray:
    """Inverse of :func:`encode_grids`: ``(..., 25)`` patch tokens -> ``(..., 10, 10)`` int8 (a non-patch token
    raises ``ValueError``)."""
    tokens = np.asarray(tokens, np.int64)
    if tokens.size and (tokens.min() < PATCH_OFFSET or tokens.max() >= VOCAB_SIZE):
        raise ValueError("only patch tokens (5..10004) decode to grids")
    lead = tokens.shape[:-1]
    digits = (tokens[..., None] - PATCH_OFFSET) // _WEIGHTS % 10
    return digits.reshape(*lead, 5, 5, 2, 2).swapaxes(-3, -2).reshape(*lead, 10, 10).astype(np.int8)


def encoder_length(study_examples: int) -> int:
    """Encoder tokens per query for K study examples: 52K + 26."""
    return (2 * GRID_TOKENS + 2) * study_examples + GRID_TOKENS + 1


def mlc_episode(study_inputs, study_outputs, query_inputs, query_outputs,
                copy_task: bool = True) -> dict[str, np.ndarray]:
    """Token arrays of one episode: ``encoder (Q', 52K+26)``, ``decoder_input (Q', 26)``, ``target (Q', 26)``
    and ``is_copy (Q',)``, where Q' = K + Q with the copy task and Q without."""
    study_in, study_out = (encode_grids(np.asarray(g, np.int64).reshape(-1, 10, 10))
                           for g in (study_inputs, study_outputs))
    k = len(study_in)
    support = np.concatenate([study_in, np.full((k, 1), IO_SEP), study_out, np.full((k, 1), SUP_SEP)], axis=1)
    support = support.reshape(-1)
    query_in, query_out = encode_grids(query_inputs), encode_grids(query_outputs)
    if copy_task:
        query_in, query_out = np.concatenate([study_in, query_in]), np.concatenate([study_out, query_out])
    q = len(query_in)
    encoder = np.concatenate([np.broadcast_to(support, (q, len(support))), query_in, np.full((q, 1), IO_SEP)], axis=1)
    return {
        "encoder": encoder,
        "decoder_input": np.concatenate([np.full((q, 1), SOS), query_out], axis=1),
        "target": np.concatenate([query_out, np.full((q, 1), EOS)], axis=1),
        "is_copy": np.arange(q) < (k if copy_task else 0),
    }


def mlc_arrays(rows: Mapping, copy_task: bool = True) -> dict[str, np.ndarray]:
    """Stacked token arrays of a batch of rows (a mapping of columns, e.g. a ``datasets`` slice in numpy
    format or ``pyarrow.Table.to_pydict()``): each array gets a leading episode axis.

    Every row must have the same numbers of study examples and queries (the reference's model
    stacks them and learns one position table).
    """
    columns = [_stack(rows[name]) for name in ("study_inputs", "study_outputs", "query_inputs", "query_outputs")]
    episodes = [mlc_episode(*(c[i] for c in columns), copy_task=copy_task) for i in range(len(columns[0]))]
    return {name: np.stack([e[name] for e in episodes]) for name in ("encoder", "decoder_input", "target", "is_copy")}


def _stack(values) -> np.ndarray:
    """``(rows, k, 10, 10)`` int64 from a column (array or nested lists with the same k in every row)."""
    try:
        array = np.asarray(values if isinstance(values, np.ndarray) else list(values), np.int64)
    except ValueError:
        raise ValueError("study and query counts differ between rows; the MLC layout needs them equal") from None
    return array.reshape(len(array), -1, 10, 10)


def mlc_batches(rows, batch_size: int = 200, copy_task: bool = True) -> Iterator[dict[str, np.ndarray]]:
    """:func:`mlc_arrays` of consecutive slices of ``rows`` (a ``datasets.Dataset``, ideally in numpy
    format), so a whole split never has to sit in memory as tokens."""
    for start in range(0, len(rows), batch_size):
        yield mlc_arrays(rows[start: start + batch_size], copy_task)


_META_KEYS = ("shape_transformation", "color_transformation", "indicator_transformation")
_TURNS = {0: "clockwise", 1: "counter-clockwise"}


def reference_records(rows: Mapping) -> Iterator[dict]:
    """Rows as the reference split script writes them (``study_examples``, ``queries`` as lists of
    ``[input, output]`` grids, ``meta_data``), one dict per row: ``json.dumps`` each into a JSONL
    file and the reference's ``VisualGrammarDataset`` reads it.

    A rotation role's ``meta_data`` entry also says which way it turns (``"turns": "clockwise"`` or
    ``"counter-clockwise"``), from the rows' ``rotation_type_8`` column (counter-clockwise, the
    paper's convention, when the rows predate it): the public code turns ``rotation_type`` 8
    clockwise, so a reader of these files must not assume it. The reference's readers ignore the key.
    """
    names = ("study_inputs", "study_outputs", "query_inputs", "query_outputs", "transformations",
             "transformation_kwargs")
    count = len(rows[names[0]])
    turns_8 = rows["rotation_type_8"] if "rotation_type_8" in rows else ["counter-clockwise"] * count
    for study_in, study_out, query_in, query_out, types, kwargs, turn_8 in zip(*(rows[name] for name in names),
                                                                                turns_8, strict=True):
        yield {
            "study_examples": [[np.asarray(i).tolist(), np.asarray(o).tolist()]
                               for i, o in zip(study_in, study_out, strict=True)],
            "queries": [[np.asarray(i).tolist(), np.asarray(o).tolist()]
                        for i, o in zip(query_in, query_out, strict=True)],
            "meta_data": reference_meta_data(types, kwargs, turn_8),
        }


def reference_meta_data(types, kwargs, rotation_type_8: str = "counter-clockwise") -> dict:
    """The reference's ``meta_data`` of one row: ``{shape|color|indicator}_transformation`` ->
    ``{"type", "kwargs"}`` (plus ``"turns"`` for a rotation), from the row's ``transformations``,
    ``transformation_kwargs`` (JSON) and ``rotation_type_8``."""
    return {key: _role_record(str(t), json.loads(k), str(rotation_type_8))
            for key, t, k in zip(_META_KEYS, types, kwargs, strict=True)}


def _role_record(name: str, kwargs: dict, turn_8: str) -> dict:
    record = {"type": name, "kwargs": kwargs}
    if name == "rotation":
        record["turns"] = turn_8 if kwargs["rotation_type"] == 8 else _TURNS[kwargs["rotation_type"]]
    return record
