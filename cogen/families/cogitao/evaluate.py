"""Score predictions against a COGITAO split: the metrics of :mod:`cogen.metrics`, stubbornness,
error categories and breakdowns by transformation and by sequence."""

from __future__ import annotations

import itertools
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from cogen.folder import SplitData
from cogen.kit.evaluate import (
    GRID_BASELINES,
    FormatReport,
    RawPredictions,
    align_predictions,
    grid_baseline,
    percent,
    read_predictions,
    stack_column,
    write_predictions,
)
from cogen.metrics.cogitao import GridScores, equal_grids, score_grids
from cogen.metrics.grids import GridStack
from cogen.metrics.stubborn import Scene, stubbornness

__all__ = ["BASELINES", "baseline", "read", "write", "ERROR_CATEGORIES", "HEADLINES", "MAX_IN_DOMAIN_SEQUENCES", "OPTIONS", "evaluate_cogitao", "expected_ids",
           "experiment_pad", "in_domain_sequences", "parse_pad", "reference_grids", "Samples", "sample_errors", "sample_scores", "scenes", "score", "score_samples",
           "summary_rows"]

#: Options of ``cogen eval`` for COGITAO configs, with their defaults (see :func:`score`).
OPTIONS = {"pad": None, "stubbornness": True}
#: Reads and writes a predictions file (``id``, ``prediction`` grid) for :func:`score`.
read, write = read_predictions, write_predictions
#: The trivial predictions :func:`baseline` makes.
BASELINES = GRID_BASELINES
#: The metrics ``cogen eval`` prints first.
HEADLINES = ("grid_accuracy", "grid_accuracy_valid", "per_pixel_accuracy", "per_pixel_accuracy_padded",
             "object_pixel_accuracy", "object_pixel_error_paper", "no_transformation")

#: Stubbornness re-applies every in-domain sequence to every sample; beyond this many it is skipped.
MAX_IN_DOMAIN_SEQUENCES = 5_000
#: Categories of wrong predictions, decided in this order (``stubborn`` only where computed).
ERROR_CATEGORIES = ("format", "no_transformation", "stubborn", "other")


def _experiment(manifest: dict):
    from cogen.families.cogitao.schema import experiment_from_dict

    return experiment_from_dict(manifest["spec"])


def experiment_pad(manifest: dict) -> tuple[int, int] | None:
    """The paper's fixed ``m x n``: the largest grid height and width of the experiment (both domains)."""
    try:
        experiment = _experiment(manifest)
    except (KeyError, TypeError, ValueError):
        return None
    domains = [d for d in (experiment.in_domain, experiment.out_of_domain) if d is not None]
    return max(d.grid.height.hi for d in domains), max(d.grid.width.hi for d in domains)


def parse_pad(value) -> tuple[int, int]:
    """The ``pad`` option: ``"HxW"`` (``30x30``) or a pair of positive integers, as ``(H, W)``."""
    parts = value.lower().split("x") if isinstance(value, str) else list(value)
    if len(parts) != 2 or not all(str(p).isdigit() and int(p) > 0 for p in parts):
        raise ValueError(f"{value!r} is not HxW (e.g. 30x30)")
    return int(parts[0]), int(parts[1])


def in_domain_sequences(sequence_set, limit: int = MAX_IN_DOMAIN_SEQUENCES) -> list[tuple[str, ...]] | None:
    """Every sequence of a :class:`~cogen.families.cogitao.schema.SequenceSet` (None when more than ``limit``)."""
    if sequence_set.count() > limit:
        return None
    if sequence_set.explicit:
        return [tuple(s) for s in sequence_set.sequences]
    excluded = set(map(tuple, sequence_set.exclude))
    return [seq for depth in range(sequence_set.depth.lo, sequence_set.depth.hi + 1)
            for seq in itertools.product(sequence_set.pool, repeat=depth) if seq not in excluded]


def scenes(table, inputs: GridStack) -> tuple[list[Scene | None], str]:
    """Each row's input scene rebuilt from ``object_ids`` / ``object_positions`` and the installed
    bank (None where an id is not in the bank), and the installed bank's SHA-256.
    :func:`~cogen.metrics.stubborn.stubbornness` then keeps only the scenes that draw their
    row's input grid, so a dataset built with another bank gives unverifiable scenes, not wrong ones."""
    from cogen.bank import load_bank
    from cogen.errors import BankError

    bank = load_bank()
    out: list[Scene | None] = []
    ids, positions = table.column("object_ids").to_pylist(), table.column("object_positions").to_pylist()
    for k, (object_ids, places) in enumerate(zip(ids, positions, strict=True)):
        try:
            objects = tuple((int(r), int(c), bank.object(int(i))) for i, (r, c) in zip(object_ids, places, strict=True))
        except (BankError, IndexError, TypeError, ValueError):
            objects = None
        out.append(None if objects is None else Scene(objects, int(inputs.heights[k]), int(inputs.widths[k])))
    return out, bank.sha256


def _summary(scores: GridScores, mask: np.ndarray, no_transformation: np.ndarray,
             stubborn: np.ndarray | None) -> dict:
    n = int(mask.sum())
    means = scores.means(mask)
    out = {"n": n, "grid_accuracy": means["exact"], "per_pixel_accuracy": means["pixel"],
           "object_pixel_accuracy": means["object_pixel"], "format_errors": int((~scores.valid[mask]).sum()),
           "no_transformation": float(no_transformation[mask].mean()) if n else float("nan")}
    if stubborn is not None:
        out["stubbornness"] = float(stubborn[mask].mean()) if n else float("nan")
    return out


def _breakdowns(sequences: list[tuple[str, ...]], scores, no_transformation, stubborn) -> dict:
    kinds = list(dict.fromkeys(sequences))
    index = {sequence: j for j, sequence in enumerate(kinds)}
    code = np.array([index[s] for s in sequences], np.int64)
    by_sequence = {" -> ".join(sequence) or "(identity)": _summary(scores, code == j, no_transformation, stubborn)
                   for j, sequence in enumerate(kinds)}
    by_transformation = {}
    for name in dict.fromkeys(itertools.chain.from_iterable(kinds)):
        holds = np.array([name in sequence for sequence in kinds], bool)
        by_transformation[name] = _summary(scores, holds[code], no_transformation, stubborn)
    return {"by_transformation": by_transformation, "by_sequence": by_sequence}


def _stubbornness(split: SplitData, predictions, inputs, targets) -> tuple[dict, np.ndarray | None]:
    """The stubbornness section and the per-sample flags (None when not computed)."""
    from cogen.families.cogitao.schema import OOD_SPLITS

    experiment = _experiment(split.manifest)
    if split.split not in OOD_SPLITS or experiment.shift != "composition" or experiment.out_of_domain is None:
        return {"computed": False, "reason": "defined for the out-of-domain splits of composition experiments"}, None
    sequences = in_domain_sequences(experiment.in_domain.sequences)
    if sequences is None:
        return {"computed": False, "reason": f"more than {MAX_IN_DOMAIN_SEQUENCES} in-domain sequences"}, None
    if not {"object_ids", "object_positions"} <= set(split.table.column_names):
        return {"computed": False, "reason": "the split has no object_ids / object_positions columns"}, None
    start = time.perf_counter()
    scene_list, bank_sha = scenes(split.table, inputs)
    result = stubbornness(predictions, scene_list, sequences, targets, inputs)
    wrong = ~equal_grids(predictions, targets)
    matched = Counter(int(j) for j in result.matched if j >= 0)
    return {
        "computed": True, "value": result.value, "stubborn": int(result.stubborn.sum()),
        "of_errors": float((result.stubborn & wrong).sum() / wrong.sum()) if wrong.any() else 0.0,
        "target_reachable": int(result.target_reachable.sum()), "unverifiable": int(result.unverifiable.sum()),
        "in_domain_sequences": len(sequences), "bank_matches": bank_sha == split.manifest.get("bank_sha256"),
        "by_in_domain_sequence": {" -> ".join(sequences[j]): matched[j] for j in sorted(matched)},
        "seconds": round(time.perf_counter() - start, 3),
    }, result.stubborn


def sample_errors(valid, exact, no_transformation, stubborn) -> list[str | None]:
    """Each sample's error category (:data:`ERROR_CATEGORIES`, the first that applies; None when right)."""
    stubborn = np.zeros_like(exact) if stubborn is None else stubborn
    return [None if right else "format" if not ok else "no_transformation" if same else
            "stubborn" if stuck else "other"
            for right, ok, same, stuck in zip(exact.tolist(), valid.tolist(), no_transformation.tolist(),
                                              stubborn.tolist(), strict=True)]


def _errors(valid, exact, no_transformation, stubborn) -> dict[str, int]:
    counts = Counter(sample_errors(valid, exact, no_transformation, stubborn))
    return {name: counts.get(name, 0) for name in ERROR_CATEGORIES if name != "stubborn" or stubborn is not None}


def expected_ids(split: SplitData) -> list[str]:
    """The prediction ids a COGITAO split expects: one per row, the row's ``id``."""
    return [str(name) for name in split.table.column("id").to_pylist()]


def reference_grids(split: SplitData, column: str) -> GridStack:
    """The ``input`` or ``output`` grid of every expected id."""
    return stack_column(split.table.column(column))[0]


def baseline(split: SplitData, kind: str) -> Iterator[tuple[str, object]]:
    """``(id, grid)`` of a trivial baseline of :data:`BASELINES` for every row."""
    return grid_baseline(expected_ids(split), reference_grids(split, "input"), reference_grids(split, "output"), kind)


def score(split: SplitData, raw: RawPredictions, pad: tuple[int, int] | None = None,
          stubbornness: bool = True) -> dict:
    """Align ``raw`` predictions with the split's rows and compute every metric (:func:`evaluate_cogitao`)."""
    aligned, _, report = align_predictions(raw, expected_ids(split))
    return evaluate_cogitao(split, aligned, report, pad, stubbornness)


def sample_scores(split: SplitData, raw: RawPredictions, pad: tuple[int, int] | None = None,
                  stubbornness: bool = True) -> list[dict]:
    """Each row's own scores, as :func:`score` counts them: ``correct`` (exact), ``valid``, ``error``
    (:data:`ERROR_CATEGORIES`) and ``problem`` (why no grid was read), ``pixel``, ``pixel_padded``,
    ``object_pixel``, ``no_transformation`` and, where computed, ``stubborn``: their means are the metrics."""
    ids = expected_ids(split)
    aligned, problems, _ = align_predictions(raw, ids)
    samples = score_samples(split, aligned, pad, stubbornness)
    s, errors = samples.scores, samples.errors()
    rows = []
    for k, name in enumerate(ids):
        row = {"id": name, "correct": bool(s.exact[k]), "valid": bool(s.valid[k]), "error": errors[k],
               "problem": problems[k], "pixel": float(s.pixel[k]), "pixel_padded": float(s.pixel_padded[k]),
               "object_pixel": float(s.object_pixel[k]), "no_transformation": bool(samples.no_transformation[k])}
        if samples.stubborn is not None:
            row["stubborn"] = bool(samples.stubborn[k])
        rows.append(row)
    return rows


def summary_rows(metrics: dict) -> list[tuple[str, str]]:
    """The COGITAO-only lines of ``cogen eval``'s summary: pad size, objects, stubbornness."""
    objects, stubborn = metrics["objects"], metrics["stubbornness"]
    stubborn_text = (f"{percent(stubborn['value'])} ({stubborn['stubborn']} of {metrics['n']}; "
                     f"{percent(stubborn['of_errors'])} of errors)" if stubborn["computed"]
                     else f"– ({stubborn['reason']})")
    return [("pad size", "x".join(map(str, metrics["pad_size"]))),
            ("objects found / missed / extra", f"{objects['found']} / {objects['missed']} / {objects['extra']}"),
            ("stubbornness", stubborn_text)]


@dataclass(frozen=True)
class Samples:
    """Every sample's scores, before they are averaged: what :func:`evaluate_cogitao` reports, per row."""

    predictions: GridStack
    inputs: GridStack
    targets: GridStack
    scores: GridScores
    no_transformation: np.ndarray
    stubborn: np.ndarray | None
    stubborn_section: dict

    def errors(self) -> list[str | None]:
        """Each sample's error category (:func:`sample_errors`)."""
        return sample_errors(self.scores.valid, self.scores.exact, self.no_transformation, self.stubborn)


def score_samples(split: SplitData, predictions: GridStack, pad: tuple[int, int] | None = None,
                  with_stubbornness: bool = True) -> Samples:
    """Score every sample of ``split`` against ``predictions`` (aligned with its rows)."""
    inputs, _ = stack_column(split.table.column("input"))
    targets, _ = stack_column(split.table.column("output"))
    scores = score_grids(predictions, targets, pad or experiment_pad(split.manifest))
    stubborn_section, stubborn = (_stubbornness(split, predictions, inputs, targets) if with_stubbornness
                                  else ({"computed": False, "reason": "not requested"}, None))
    return Samples(predictions, inputs, targets, scores, equal_grids(predictions, inputs), stubborn, stubborn_section)


def evaluate_cogitao(split: SplitData, predictions: GridStack, report: FormatReport,
                     pad: tuple[int, int] | None = None, with_stubbornness: bool = True,
                     samples: Samples | None = None) -> dict:
    """The metrics of a COGITAO split as a JSON-ready dict (see ``docs/evaluation.md``); ``samples``:
    the :func:`score_samples` of the same arguments, when the caller already has them."""
    samples = samples or score_samples(split, predictions, pad, with_stubbornness)
    targets, scores = samples.targets, samples.scores
    no_transformation, stubborn, stubborn_section = samples.no_transformation, samples.stubborn, samples.stubborn_section
    n = len(scores)
    valid = scores.valid
    sequences = [tuple(s) for s in split.table.column("transformations").to_pylist()]
    metrics = {
        "n": n, "n_valid": int(valid.sum()), "format_errors": report.as_dict(),
        "grid_accuracy": float(scores.exact.mean()) if n else float("nan"),
        "grid_accuracy_valid": float(scores.exact[valid].mean()) if valid.any() else float("nan"),
        "per_pixel_accuracy": float(scores.pixel.mean()) if n else float("nan"),
        "per_pixel_accuracy_padded": float(scores.pixel_padded.mean()) if n else float("nan"),
        "pad_size": list(scores.pad),
        "object_pixel_accuracy": float(scores.object_pixel.mean()) if n else float("nan"),
        "object_pixel_error_paper": float(scores.object_error_paper.mean()) if n else float("nan"),
        "objects": _objects(scores),
        "no_transformation": float(no_transformation.mean()) if n else float("nan"),
        "size_mismatch": int((valid & ((predictions.heights != targets.heights)
                                       | (predictions.widths != targets.widths))).sum()),
        "oversized": int(scores.oversized.sum()),
        "stubbornness": stubborn_section,
        "errors": _errors(valid, scores.exact, no_transformation, stubborn),
    }
    metrics.update(_breakdowns(sequences, scores, no_transformation, stubborn))
    return metrics


def _objects(scores: GridScores) -> dict:
    found, missed = int(scores.found.sum()), int(scores.missed.sum())
    return {"found": found, "missed": missed, "extra": int(scores.extra.sum()),
            "reconstruction_accuracy": found / (found + missed) if found + missed else float("nan")}
