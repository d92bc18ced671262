"""The papers' way of counting in-context LLM results: ``k / n_valid`` beside cogen's ``k / n``.

The papers behind the grid families drop unparsable replies and report the perfect matches
over the valid ones ("8 / 50", "7 / 48"; or accuracy over valid responses, with the
valid-response rate beside it). cogen's own numbers count every expected
sample, an unparsable reply being wrong. :func:`valid_counts` gives both from one ``cogen eval``
result, for every headline accuracy over valid predictions (``*_valid``) of the family.
"""

from __future__ import annotations

import math

from cogen.family import family

__all__ = ["valid_counts"]


def valid_counts(metrics: dict, prompted: int | None = None) -> dict[str, dict]:
    """``{metric: {"k", "n_valid", "n", "paper", "cogen"}}`` for each ``*_valid`` headline of the family.

    ``k`` is the number of right predictions; ``paper`` = k / n_valid (the papers' accuracy) and
    ``cogen`` = k / n, where n is the number of expected samples, or ``prompted`` when only a sample
    of the split was prompted (``cogen prompts export --per-experiment``).
    """
    headlines = family(metrics["family"]).evaluation().HEADLINES
    n_valid = int(metrics.get("n_valid", 0))
    n = int(metrics["n"] if prompted is None else prompted)
    counts = {}
    for name in headlines:
        value = metrics.get(name)
        if not name.endswith("_valid") or value is None:
            continue
        k = 0 if not n_valid or (isinstance(value, float) and math.isnan(value)) else round(value * n_valid)
        counts[name] = {"k": k, "n_valid": n_valid, "n": n, "paper": k / n_valid if n_valid else math.nan,
                        "cogen": k / n if n else math.nan}
    return counts
