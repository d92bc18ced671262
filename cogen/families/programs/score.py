"""L(P), C(P) and the T1/T2/T3 types of programs, their averages, and the paper's Table 1 layout.

For a task with N atomic inputs, M atomic outputs, U values per input and d samples (here N = 4,
M = 16, U = 2, d = 16), seed 003 defines (Eqs. 2-4):

* ``L(P) = L(P⁺) + (N + M) * E`` — each error adds a full sample to the mapping table;
* ``L_s = U (N + M) = 40`` (sufficient compositionality) and ``L_z = d (N + M) = 320`` (zero);
* ``C(P) = 100 * (L_z - clip(L(P), L_s, L_z)) / (L_z - L_s)``, in [0, 100].

C is computed per function, then averaged (decision 2; where clipping bites, the mean of C is not
the C of the means). Types (decision 3): T1 low L(P⁺) and low E, T2 high L(P⁺) and low E, T3 low
L(P⁺) and high E; the fourth cell, high and high, is its own type, ``T0``. "Low" means
``L(P⁺) <= low_length`` (default ``(L_s + L_z) / 2`` = 180) and ``E <= low_errors`` (default
``d / 4`` = 4).

>>> round(compositionality(46.73 + 20 * 8 / 30), 2)   # o3-mini, Horizontal, in Table 1
95.69
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

from cogen.families.programs.functions import CELLS, CHARACTERS, INPUTS, LETTERS_PER_CHARACTER, SAMPLES, SETTINGS
from cogen.families.programs.tables import markdown_tables
from cogen.safe_text import clean

__all__ = ["L_S", "L_Z", "LOW_ERRORS", "LOW_LENGTH", "ROW", "FunctionScore", "ModelSummary", "Program",
           "compositionality", "explain_lines", "markdown_table", "program_length", "program_type", "score_programs",
           "summarize", "table"]

#: N + M: the size of one sample of the mapping table.
ROW = CHARACTERS + CELLS
#: Sufficient compositionality, U (N + M).
L_S = LETTERS_PER_CHARACTER * ROW
#: Zero compositionality, d (N + M).
L_Z = SAMPLES * ROW
#: Default thresholds of "low" L(P⁺) and "low" E (decision 3).
LOW_LENGTH = (L_S + L_Z) / 2
LOW_ERRORS = SAMPLES / 4
#: The types, in report order.
TYPES = ("T1", "T2", "T3", "T0")


def program_length(l_plus: float, errors: float) -> float:
    """L(P) = L(P⁺) + (N + M) E."""
    return l_plus + ROW * errors


def compositionality(length: float, low: float = L_S, high: float = L_Z) -> float:
    """C(P) of a program of length L(P): 100 at or below L_s, 0 at or above L_z."""
    return 100.0 * (high - min(max(length, low), high)) / (high - low)


def program_type(l_plus: float, errors: float, low_length: float | None = None, low_errors: float | None = None) -> str:
    """``T1`` (low L(P⁺), low E), ``T2`` (high, low), ``T3`` (low, high) or ``T0`` (high, high)."""
    short = l_plus <= (LOW_LENGTH if low_length is None else low_length)
    right = errors <= (LOW_ERRORS if low_errors is None else low_errors)
    return {(True, True): "T1", (False, True): "T2", (True, False): "T3", (False, False): "T0"}[(short, right)]


@dataclass(frozen=True)
class FunctionScore:
    """The score of one program for one function.

    ``status`` is ``ok`` (the program was read), ``obfuscated`` (it was read and run, but it builds
    code or decodes data at run time, so its mapping table is not in its text: E is counted, C(P)
    withheld), ``no code``, ``missing``, ``duplicate id``, ``syntax error``, ``too long`` or ``too
    complex``; programs not read have L(P⁺) = 0 and E = 16 (every sample wrong), so C = 0. For the
    means, an obfuscated program is credited no compression (L(P⁺) = L_z, so C = 0): obfuscation can
    never raise a model's score. ``detail`` says where it is obfuscated. ``function`` is the function the sandbox called
    (:func:`cogen.sandbox.entry.entry_point`; None for a script). ``failures`` counts the reasons of
    the wrong samples (``wrong output``, ``time limit``, exceptions by type, ...).
    """

    id: str
    model: str
    setting: str
    status: str
    sum_n: int
    sum_m: int
    errors: int
    prompt_version: str | None = None
    function: str | None = None
    failures: Mapping[str, int] = field(default_factory=dict)
    detail: str | None = None

    @property
    def withheld(self) -> bool:
        """True when C(P) is withheld: an ``obfuscated`` program, whose mapping table cannot be read."""
        return self.status == "obfuscated"

    @property
    def l_plus(self) -> int:
        """L(P⁺) = Σn_z + Σm_z; L_z for an obfuscated program (what the means count: no compression)."""
        return L_Z if self.withheld else self.sum_n + self.sum_m

    @property
    def length(self) -> int:
        """L(P)."""
        return int(program_length(self.l_plus, self.errors))

    @property
    def c(self) -> float:
        """C(P)."""
        return compositionality(self.length)

    def as_dict(self, low_length: float | None = None, low_errors: float | None = None) -> dict:
        """JSON-ready form, with L(P⁺), L(P), C(P) (None when withheld) and the type."""
        known = not self.withheld
        return {**asdict(self), "failures": dict(self.failures), "l_plus": self.l_plus if known else None,
                "length": self.length if known else None, "c": round(self.c, 4) if known else None,
                "type": program_type(self.l_plus, self.errors, low_length, low_errors)}


@dataclass(frozen=True)
class ModelSummary:
    """The averages of one model over the functions of one setting (the paper's table cells);
    ``obfuscated`` counts the functions whose C(P) is withheld (in the means as L(P⁺) = L_z, C = 0)."""

    model: str
    setting: str
    functions: int
    l_plus: float
    errors: float
    length: float
    c: float
    type: str
    types: Mapping[str, int]
    sum_n: float
    sum_m: float
    valid: int
    obfuscated: int = 0

    def as_dict(self) -> dict:
        """JSON-ready form."""
        return {**asdict(self), "types": dict(self.types)}


def _mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if values else math.nan


def summarize(scores: Iterable[FunctionScore], low_length: float | None = None,
              low_errors: float | None = None) -> list[ModelSummary]:
    """One :class:`ModelSummary` per (model, setting), in order of first appearance; C averaged per
    function, the type of the model decided on the mean L(P⁺) and mean E."""
    groups: dict[tuple[str, str], list[FunctionScore]] = {}
    for score in scores:
        groups.setdefault((score.model, score.setting), []).append(score)
    summaries = []
    for (model, setting), group in groups.items():
        l_plus, errors = _mean([s.l_plus for s in group]), _mean([s.errors for s in group])
        kinds = [program_type(s.l_plus, s.errors, low_length, low_errors) for s in group]
        summaries.append(ModelSummary(
            model, setting, len(group), l_plus, errors, _mean([s.length for s in group]), _mean([s.c for s in group]),
            program_type(l_plus, errors, low_length, low_errors), {t: kinds.count(t) for t in TYPES if t in kinds},
            _mean([s.sum_n for s in group]), _mean([s.sum_m for s in group]),
            sum(s.status in ("ok", "obfuscated") for s in group), sum(s.withheld for s in group)))
    return summaries


def table(summaries: Iterable[ModelSummary], low_length: float | None = None, low_errors: float | None = None,
          isolation: str | None = None) -> dict:
    """The Table-1 report as JSON-ready data: settings (columns), models (rows) and a cell per pair;
    ``isolation`` (``bubblewrap`` or ``none``) is how the programs ran, when known."""
    summaries = list(summaries)
    settings = [s for s in SETTINGS if any(m.setting == s for m in summaries)]
    settings += [s for s in dict.fromkeys(m.setting for m in summaries) if s not in settings]
    models = list(dict.fromkeys(m.model for m in summaries))
    cells = {model: {m.setting: m.as_dict() for m in summaries if m.model == model} for model in models}
    return {"settings": settings, "models": models, "cells": cells,
            "bounds": {"L_s": L_S, "L_z": L_Z},
            "thresholds": {"low_length": LOW_LENGTH if low_length is None else low_length,
                           "low_errors": LOW_ERRORS if low_errors is None else low_errors},
            "isolation": isolation}


#: The report as the paper's Table 1 and Table 2 in Markdown (:func:`cogen.families.programs.tables.markdown_tables`).
markdown_table = markdown_tables


# ---------------------------------------------------------------- scoring programs
@dataclass(frozen=True)
class Program:
    """A model's program for one function: ``code`` (None when the reply held none) and ``status``
    (``ok``, or why there is no program: ``no code``, ``missing``, ``duplicate id``, ``too long``),
    with ``detail`` saying more (``too long: a reply of 1,000,000 characters ...``)."""

    id: str
    model: str
    code: str | None
    status: str = "ok"
    prompt_version: str | None = None
    detail: str | None = None


def _failure(reason: str | None) -> str:
    """A wrong sample's reason, shortened to its kind (``wrong output``, ``time limit``, ``KeyError``, ...):
    an exception's name is an identifier, the sandbox's own reasons hold spaces, so neither can pass for
    the other."""
    if reason is None:
        return "wrong output"
    if reason.startswith("program failed: "):
        return "program failed: " + reason.removeprefix("program failed: ").split(":")[0]
    return reason.split(":")[0] if ":" in reason else reason


def _status(analysis) -> str:
    """The status of an analysed program: ``ok``, ``obfuscated``, ``too long``, ``too complex`` or
    ``syntax error``."""
    if analysis.error is None:
        return "obfuscated" if analysis.obfuscated else "ok"
    kind = analysis.error.split(":")[0]
    return kind if kind in ("too long", "too complex") else "syntax error"


def _start(program: Program, sandbox, function: str):
    """The analysis of a program and, when it can be run, its run started in the background."""
    from cogen.families.programs.analysis import analyze

    if program.code is None:
        return None, None
    analysis = analyze(program.code, function)
    if analysis.error is not None:
        return analysis, None
    return analysis, sandbox.submit(program.code, INPUTS, entry=analysis.entry, mode=analysis.mode)


def score_programs(programs: Sequence[Program], targets: Mapping[str, tuple[str, Sequence[str]]], sandbox,
                   explain: bool = False) -> tuple[list[FunctionScore], dict[str, list[str]]]:
    """Score each program against its function: ``targets[id] = (setting, 16 target cells)``.

    L(P⁺) by :func:`cogen.families.programs.analysis.analyze`, E by running the programs it could read in
    ``sandbox`` (a :class:`cogen.sandbox.sandbox.Sandbox`; each starts as soon as it is analysed).
    Returns the scores and, when ``explain``, the explanation lines of each program keyed
    ``<model> / <id>``.
    """
    from cogen.sandbox import RunResult

    started = [_start(p, sandbox, sandbox.function) for p in programs]
    scores, explanations = [], {}
    for program, (analysis, running) in zip(programs, started, strict=True):
        setting, wanted = targets[program.id]
        status = program.status if analysis is None else _status(analysis)
        counted = status in ("ok", "obfuscated")
        run = running.result() if running is not None else RunResult.failed(status, len(wanted))
        wrong = [k for k in range(len(wanted)) if run.outputs[k] != wanted[k]]
        failures: dict[str, int] = {}
        for k in wrong:
            failures[_failure(run.reasons[k])] = failures.get(_failure(run.reasons[k]), 0) + 1
        score = FunctionScore(program.id, program.model, setting, status,
                              analysis.sum_n if counted else 0, analysis.sum_m if counted else 0,
                              len(wrong), program.prompt_version, run.function, failures,
                              analysis.obfuscated if counted else None)
        scores.append(score)
        if explain:
            explanations[f"{score.model} / {program.id}"] = explain_lines(score, analysis, run, wanted, program)
    return scores, explanations


def _rows(cells: str) -> str:
    return "/".join(cells[r * 4:(r + 1) * 4] for r in range(4))


def _counting_lines(analysis) -> list[str]:
    from cogen.families.programs.analysis import value_text

    first: dict = {}
    records = []
    for c in analysis.combinations:
        values = "{" + ", ".join(sorted(map(value_text, c.values))) + "}"
        repeat = "" if c.counted else f"  (repeats line {first[c.values]}: not counted)"
        first.setdefault(c.values, c.line)
        records.append((c.line, 0, f"  line {c.line:>4}  combination {values:<28} n +{c.size}{repeat}"))
    for o in analysis.outputs:
        records.append((o.line, 1, f"  line {o.line:>4}  output {clean(o.text, 60):<33} m +{o.count}"))
    return [text for _, _, text in sorted(records, key=lambda r: (r[0], r[1]))]


def _entry_line(analysis) -> list[str]:
    if analysis is None or analysis.error is not None:
        return []
    if analysis.mode == "script":
        return ["  runs as a script: once per input, the input on stdin, its printed grid read"]
    return [f"  calls {analysis.entry}(s)"]


def explain_lines(score: FunctionScore, analysis, run, wanted: Sequence[str], program: Program | None = None) -> list[str]:
    """How a program's score was counted, line by line: each combination (repeats marked), each
    output value, the function called, then each wrong sample, L(P), C(P) and the type. Every text
    that comes from the reply is cleaned (:func:`cogen.safe_text.clean`)."""
    lines = [clean(f"{score.model} / {score.id} ({score.setting}; prompt {score.prompt_version or 'not recorded'}): "
                   f"{score.status}", 200)]
    if program is not None and program.detail:
        lines.append(f"  {clean(program.detail)}")
    if analysis is not None and analysis.error is None:
        lines += _counting_lines(analysis)
    elif analysis is not None:
        lines.append(f"  {clean(analysis.error)}")
    lines += _entry_line(analysis)
    if score.withheld:
        lines.append(f"  Σn = {score.sum_n}, Σm = {score.sum_m} in its text; obfuscated ({clean(score.detail or '')}): "
                     f"its mapping table is not in its text, so L(P+) and C(P) are withheld")
    else:
        lines.append(f"  Σn = {score.sum_n}, Σm = {score.sum_m}, L(P+) = {score.l_plus}")
    failed: dict[str, list[str]] = {}
    for k, target in enumerate(wanted):
        if run.outputs[k] is not None and run.outputs[k] != target:
            lines.append(f"  sample {INPUTS[k]}: wrong (got {_rows(run.outputs[k])}; want {_rows(target)})")
        elif run.outputs[k] is None:
            failed.setdefault(clean(run.reasons[k] or "no output"), []).append(INPUTS[k])
    for reason, inputs in failed.items():
        which = "all 16 samples" if len(inputs) == len(wanted) else f"samples {', '.join(inputs)}"
        lines.append(f"  {which}: {reason}")
    if score.withheld:
        lines.append(f"  E = {score.errors}, C(P) withheld (the means count it as L(P+) = {L_Z}, C = 0)")
    else:
        lines.append(f"  E = {score.errors}, L(P) = {score.l_plus} + {ROW} x {score.errors} = {score.length}, "
                     f"C(P) = {score.c:.2f}")
    return lines
