"""``cogen export --format chat``: a config as chat rows for fine-tuning, one Parquet file per split.

The writer of the ``chat`` record of :data:`cogen.export.GENERIC_FORMATS`; it lives here, beside the prompts
it is made of (the export package names it by string and does not import it).

Each row of ``<split>.parquet`` is one prompt of the family's prompt maker (the one ``cogen prompts
export`` writes, with its default options) and the answer as the reply the family's parser reads as
right (the family's prompt module may say how with ``answer(target)``; else a grid is written as a
Python list of lists and any other target as it is):

* ``messages``: ``[{"role": "user", "content": prompt}, {"role": "assistant", "content": answer}]``
  (TRL's conversational language-modelling rows);
* ``prompt`` / ``completion``: the same two turns split (TRL's conversational prompt-completion rows);
* ``id`` (the prediction id the prompt asks for), ``split`` and ``meta`` (how the prompt was made, JSON).

Pick the columns a trainer wants: ``load_dataset("parquet", data_files={"train": "chat/train.parquet"})``
then ``select_columns(["messages"])`` or ``["prompt", "completion"]``.

Held-out data stays held out: a split the family does not hold out of training is written only from its
own rows, and every row its prompts show as examples comes from a split that is not held out either
(checked from the row ids, ``{config}-{split}-{index}``); a leak is an error, not a file.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

from cogen.errors import DataError
from cogen.export import ExportSource, Written

__all__ = ["BATCH_ROWS", "answer_text", "write_chat"]

#: Rows written per Parquet row group.
BATCH_ROWS = 1_024


def _schema():
    import pyarrow as pa

    turn = pa.struct([("role", pa.string()), ("content", pa.string())])
    return pa.schema([("id", pa.string()), ("split", pa.string()), ("messages", pa.list_(turn)),
                      ("prompt", pa.list_(turn)), ("completion", pa.list_(turn)), ("meta", pa.string())])


def answer_text(target, answer=None) -> str:
    """The assistant turn for ``target``: the family's ``answer(target)``, else a grid as a Python list of lists,
    else the target as it is (a reply text)."""
    from cogen.llm.prompts import format_grid

    if answer is not None:
        return answer(target)
    return target if isinstance(target, str) else format_grid(target)


def _split_of(config: str, row_id: str) -> str | None:
    match = re.fullmatch(rf"{re.escape(config)}-(?P<split>.+)-\d+(?:-.+)?", str(row_id))
    return match["split"] if match else None


def _check_held_out(source: ExportSource, split: str, prompt) -> None:
    """A prompt of a split used for training shows no row of a held-out split (its own id and its examples)."""
    from cogen.family import family

    record = family(source.family)
    if record.is_held_out(split):
        return
    shown = [prompt.id, *(prompt.meta.get("examples") or ())]
    leaked = [name for name in shown if (found := _split_of(source.config, name)) and record.is_held_out(found)]
    if leaked:
        raise DataError(f"the chat export of {source.config} {split} would show the held-out row {leaked[0]}; "
                        "nothing was written (this is a bug in the family's prompts, please report it)")


def _rows(source: ExportSource, split: str):
    """``(id, prompt text, answer text, meta)`` of every prompt of ``split``."""
    from cogen.family import family
    from cogen.folder import read_split

    record = family(source.family)
    data = read_split(source.data, source.config, split)
    evaluator = record.evaluation()
    if "target" not in evaluator.BASELINES:
        raise DataError(f"{record.title} configs have no answers to write as assistant turns")
    targets = dict(evaluator.baseline(data, "target"))
    answer = getattr(importlib.import_module(record.prompts.partition(":")[0]), "answer", None)
    for prompt in record.make_prompts(source.data, data):
        _check_held_out(source, split, prompt)
        if prompt.id not in targets:
            raise DataError(f"{source.config} {split}: no answer for the prompt {prompt.id}")
        yield prompt.id, prompt.prompt, answer_text(targets[prompt.id], answer), prompt.meta
    source.progress(source.rows(split))


def _write_split(source: ExportSource, split: str, path: Path) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema, count, batch = _schema(), 0, []

    def flush(writer) -> None:
        columns = list(zip(*batch, strict=True))
        users = [[{"role": "user", "content": text}] for text in columns[1]]
        replies = [[{"role": "assistant", "content": text}] for text in columns[2]]
        table = pa.table({"id": list(columns[0]), "split": [split] * len(batch),
                          "messages": [u + r for u, r in zip(users, replies, strict=True)], "prompt": users,
                          "completion": replies, "meta": [json.dumps(m, sort_keys=True) for m in columns[3]]},
                         schema=schema)
        writer.write_table(table)
        batch.clear()

    with pq.ParquetWriter(path, schema) as writer:
        for row in _rows(source, split):
            batch.append(row)
            count += 1
            if len(batch) == BATCH_ROWS:
                flush(writer)
        if batch:
            flush(writer)
    return count


def write_chat(source: ExportSource, folder: Path) -> Written:
    """Write every split of the config as ``folder/<split>.parquet`` chat rows (see the module docstring)."""
    from cogen.family import family

    record = family(source.family)
    files = {f"{split}.parquet": _write_split(source, split, folder / f"{split}.parquet") for split in source.splits}
    held = [split for split in source.splits if record.is_held_out(split)]
    return Written(files, index={"columns": ["id", "split", "messages", "prompt", "completion", "meta"],
                                 "held_out_splits": held,
                                 "train_on": [s for s in source.splits if s not in held]})
