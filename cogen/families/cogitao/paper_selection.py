"""The COGITAO paper's in-context example selection and sampling (App. C; spec programs.md §D, decision 5).

The paper ran seven conditions, 10 prompts per experiment and 5 experiments each (50 prompts per
condition), drawn with seed 42. Its public code (``LLM_Experiments/llm_experiment_splits.py``,
read for understanding only) shuffles the experiment's in-domain **test** split once and scans it
with one counter shared by the experiment's prompts:

============  ==================================================  =====================================
condition     in-context examples (5, from the in-domain test)    test sample
============  ==================================================  =====================================
ID1           the next rows until 3 distinct depth-1 and 2        the next later row whose sequence is
              distinct depth-2 sequences are collected            one of the two depth-2 ones
ID2           the next 5 rows (no distinctness check)             the next later row whose sequence is
                                                                  among the five
OOD1, OOD3    as ID1 (3 depth-1 + 2 depth-2)                      a random out-of-domain row
OOD2          the next rows until 5 distinct sequences            a random out-of-domain row
EnvGen        the next 5 rows                                     a random out-of-domain row
============  ==================================================  =====================================

Which rule applies is read from the experiment, not from its name: a composition experiment whose
in-domain set holds depth-1 sequences follows ID1 (in-domain split) or OOD1/OOD3 (out-of-domain
split: OOD3 when the held-out sequences are deeper than 2); one without follows ID2 or OOD2; an
environment experiment's out-of-domain split follows EnvGen (EnvGen-Grid when the grid changes,
else EnvGen-Object). The paper has no condition for the in-domain split of an environment
experiment, so none is invented.

Deliberate differences, each needed for reproducible, scoreable prompts: cogen's generator is
NumPy's, seeded by ``(seed, config, split)``, not Python's global ``random``; when the scan runs
off the end it wraps to the start (the reference restarted at an unseeded random row 1-9); a test
row is never one of its own prompt's examples and never repeats within an experiment (the
reference drew the out-of-domain test with replacement), so every prompt has its own id.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from cogen.errors import EvalError

__all__ = ["CONDITIONS", "PaperDraw", "condition", "paper_draws"]

#: The paper's conditions and their context rule.
CONDITIONS = {
    "CompGen-ID1": "atomic+composed", "CompGen-ID2": "consecutive", "CompGen-OOD1": "atomic+composed",
    "CompGen-OOD2": "distinct", "CompGen-OOD3": "atomic+composed", "EnvGen-Object": "consecutive",
    "EnvGen-Grid": "consecutive",
}
#: How many examples of each depth the atomic+composed rule collects.
_ATOMIC, _COMPOSED = 3, 2


@dataclass(frozen=True)
class PaperDraw:
    """One prompt's rows: ``examples`` (indices into the in-domain context split) and ``test``
    (an index into the exported split)."""

    examples: tuple[int, ...]
    test: int


def condition(experiment, out_of_domain: bool) -> str:
    """The paper's condition for an experiment's in-domain or out-of-domain split."""
    if experiment.shift != "composition":
        if not out_of_domain:
            raise EvalError(f"{experiment.name}: the paper tests environment experiments on their out-of-domain "
                            "split only; export test_ood, or use --selection cogen")
        same_grid = experiment.in_domain.grid == experiment.out_of_domain.grid
        return "EnvGen-Object" if same_grid else "EnvGen-Grid"
    atomic = any(len(s) == 1 for s in _sequences(experiment.in_domain))
    if not out_of_domain:
        return "CompGen-ID1" if atomic else "CompGen-ID2"
    if not atomic:
        return "CompGen-OOD2"
    deeper = max(len(s) for s in _sequences(experiment.out_of_domain)) > 2
    return "CompGen-OOD3" if deeper else "CompGen-OOD1"


def _sequences(domain) -> list[tuple[str, ...]]:
    from cogen.families.cogitao.evaluate import in_domain_sequences

    return in_domain_sequences(domain.sequences, limit=10**9) or []


class _Scan:
    """The shuffled context split, read row after row by a counter shared by an experiment's prompts."""

    def __init__(self, sequences: Sequence[tuple[str, ...]], rng: np.random.Generator, where: str):
        self.sequences, self.where = list(sequences), where
        self.order = rng.permutation(len(self.sequences)) if self.sequences else np.zeros(0, np.int64)
        self.counter = 0

    def next(self, budget: list[int]) -> int:
        if budget[0] <= 0:
            raise EvalError(f"{self.where}: ran through the split twice without completing a prompt; it is too "
                            "small for the paper's selection (build larger splits or use --selection cogen)")
        budget[0] -= 1
        row = int(self.order[self.counter % len(self.order)])
        self.counter += 1
        return row

    def budget(self) -> list[int]:
        return [2 * len(self.order)]


def _atomic_and_composed(scan: _Scan) -> list[int]:
    distinct = {depth: {s for s in scan.sequences if len(s) == depth} for depth in (1, 2)}
    if len(distinct[1]) < _ATOMIC or len(distinct[2]) < _COMPOSED:
        raise EvalError(f"{scan.where}: {len(distinct[1])} distinct depth-1 and {len(distinct[2])} distinct "
                        f"depth-2 sequences; the paper's rule shows {_ATOMIC} and {_COMPOSED}")
    chosen, seen, budget = [], {1: [], 2: []}, scan.budget()
    while len(chosen) < _ATOMIC + _COMPOSED:
        row = scan.next(budget)
        sequence = scan.sequences[row]
        want = {1: _ATOMIC, 2: _COMPOSED}.get(len(sequence), 0)
        if len(seen.get(len(sequence), [])) < want and sequence not in seen[len(sequence)]:
            seen[len(sequence)].append(sequence)
            chosen.append(row)
    return chosen


def _distinct(scan: _Scan) -> list[int]:
    if len(set(scan.sequences)) < 5:
        raise EvalError(f"{scan.where}: {len(set(scan.sequences))} distinct sequences; the paper's rule shows 5")
    chosen, seen, budget = [], set(), scan.budget()
    while len(chosen) < 5:
        row = scan.next(budget)
        if scan.sequences[row] not in seen:
            seen.add(scan.sequences[row])
            chosen.append(row)
    return chosen


def _consecutive(scan: _Scan) -> list[int]:
    if len(scan.sequences) < 5:
        raise EvalError(f"{scan.where}: {len(scan.sequences)} rows; the paper's rule shows 5 examples")
    budget = scan.budget()
    return [scan.next(budget) for _ in range(5)]


_CONTEXT = {"atomic+composed": _atomic_and_composed, "distinct": _distinct, "consecutive": _consecutive}


def _in_domain_test(scan: _Scan, chosen: list[int], name: str, used: set[int]) -> int:
    """The next later row of the same split whose sequence the prompt showed (depth 2 for ID1)."""
    shown = {scan.sequences[r] for r in chosen}
    if name == "CompGen-ID1":
        shown = {s for s in shown if len(s) == 2}
    budget = scan.budget()
    while True:
        row = scan.next(budget)
        if scan.sequences[row] in shown and row not in chosen and row not in used:
            return row


def paper_draws(name: str, context: Sequence[tuple[str, ...]], tests: int, count: int, rng: np.random.Generator,
                where: str) -> Iterator[PaperDraw]:
    """``count`` prompts of condition ``name``: examples from the ``context`` sequences (the in-domain
    test split), the test from the same split (ID) or from ``tests`` out-of-domain rows."""
    scan = _Scan(context, rng, where)
    out_of_domain = not name.startswith("CompGen-ID")
    if out_of_domain and count > tests:
        raise EvalError(f"{where}: {count} prompts asked, the out-of-domain split holds {tests} rows")
    pool = list(range(tests))
    used: set[int] = set()
    for _ in range(count):
        chosen = _CONTEXT[CONDITIONS[name]](scan)
        if out_of_domain:
            test = pool.pop(int(rng.integers(len(pool))))
        else:
            test = _in_domain_test(scan, chosen, name, used)
        used.add(test)
        yield PaperDraw(tuple(chosen), test)
