"""One sample from a sequence given on the command line (``cogen sample``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cogen.errors import GenerationError, SpecError
from cogen.specs import Range

__all__ = ["Sample", "sample_one"]

DEFAULT_WHERE = {"is_shape_fully_connected": True, "rows": (1, 5), "cols": (1, 5)}


@dataclass(frozen=True)
class Sample:
    """An input/output pair with its sequence and the bank objects it was drawn from."""

    input: np.ndarray
    output: np.ndarray
    transformations: tuple[str, ...]
    object_ids: tuple[int, ...]
    positions: tuple[tuple[int, int], ...]
    attempts: int


def _condition(value):
    """A filter value as a spec holds it: a closed ``[lo, hi]`` as a Range, an open one (``rows<6``
    gives ``(None, 5)``) as a plain pair, which the bank's query reads as unbounded on that side."""
    if isinstance(value, (tuple, list)):
        return Range(*value) if None not in value else tuple(value)
    return value


def sample_one(transforms, height: int = 20, width: int = 20, objects: int = 2, where=None, seed: int = 0) -> Sample:
    """Draw one sample of ``transforms`` on a ``height`` x ``width`` grid with ``objects`` objects.

    ``where`` is a bank filter (mapping, or the CLI string syntax); by default fully connected
    objects of at most 5x5, as in the paper's studies. As in specs by default, a draw whose output
    equals its input is redrawn.
    """
    from cogen.bank import load_bank, parse_where
    from cogen.engine import resolve
    from cogen.families.cogitao.generate.sampler import SplitJob, generate_rows, rejection_fix, rejection_text
    from cogen.families.cogitao.schema import Domain, Grid, ObjectFilter, SequenceSet
    from cogen.families.cogitao.spec import MAX_GRID, max_objects_on_grid, object_query
    from cogen.specs import Range

    if not transforms:
        raise SpecError("no transformation given", fix="e.g. --transforms rot90,translate_up")
    sequence = tuple(resolve(name).name for name in transforms)
    if not (1 <= height <= MAX_GRID and 1 <= width <= MAX_GRID):
        raise SpecError(f"grid {height}x{width} is outside 1..{MAX_GRID}")
    if objects > max_objects_on_grid(height, width):
        raise SpecError(f"{objects} objects cannot fit on a {height}x{width} grid with an empty cell between objects",
                        fix=f"use at most {max_objects_on_grid(height, width)} objects or a larger grid")
    conditions = parse_where(where) if isinstance(where, str) else dict(where or DEFAULT_WHERE)
    filters = tuple(sorted((k, _condition(v)) for k, v in conditions.items()))
    domain = Domain(SequenceSet(sequences=(sequence,)), Grid(Range(height, height), Range(width, width)),
                    ObjectFilter(Range(objects, objects), filters))
    query = object_query(domain.objects, sequence)
    if query is None or len(load_bank().select(query)) == 0:
        raise SpecError(f"no bank object satisfies the filter and the preconditions of {' -> '.join(sequence)}")
    rows = generate_rows(SplitJob.of(domain, seed, "cogen-sample", "train"), np.array([0]))
    if not rows["ok"][0]:
        causes = rows["causes"][0]
        raise GenerationError(f"no valid grid found: {rejection_text(causes)}; {rejection_fix(causes)}")
    h, w = rows["sizes"][0]
    n = int(rows["n_objects"][0])
    return Sample(rows["inputs"][0, :h, :w].copy(), rows["outputs"][0, :h, :w].copy(), sequence,
                  tuple(int(i) for i in rows["object_ids"][0, :n]),
                  tuple((int(r), int(c)) for r, c in rows["positions"][0, :n]), int(rows["causes"][0].sum()))
