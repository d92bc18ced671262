"""Score program replies against a string-to-grid programs split (seed 003): L(P⁺), E, L(P), C(P).

A replies file is JSONL, one record per (model, function): ``id`` (the function's row id, as in
the exported prompts), the reply text under ``reply`` (or ``response``, ``text``, ``content``;
``program`` or ``code`` hold code already extracted), and optionally ``model`` (default: the
file's name without suffix) and ``prompt_version`` (as exported; stored with every result).
Several models may share a file: each is expected to answer every function of the split.

Every expected (model, function) without exactly one reply holding readable code is scored as a
program that writes nothing and gets every sample wrong (L(P⁺) = 0, E = 16, C = 0) and counted
under ``format_errors`` (``missing``, ``duplicate id``, ``no code``, ``syntax error``, ``too long``,
``too complex``); ``n_valid`` counts the others.

The programs run in :class:`cogen.sandbox.sandbox.Sandbox`, confined by the kernel; on a machine
without isolation the evaluation refuses to start unless ``unsafe`` (``--unsafe-run-untrusted-code``)
is given. Model names and ids from the replies file are cleaned before they are shown.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cogen.errors import EvalError
from cogen.families.programs.code import extract_code
from cogen.families.programs.score import Program, markdown_table, score_programs, summarize, table
from cogen.folder import SplitData, read_split
from cogen.safe_text import clean
from cogen.sandbox import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT, Sandbox

__all__ = ["BASELINES", "HEADLINES", "OPTIONS", "RawReplies", "Reply", "baseline", "evaluate_table", "expected_ids",
           "read", "read_replies", "sample_scores", "score", "summary_rows", "write", "write_replies"]

#: Options of ``cogen eval`` for programs configs, with their defaults (see :func:`score`).
OPTIONS = {"timeout": DEFAULT_TIMEOUT, "memory_mb": DEFAULT_MEMORY_MB, "workers": None, "low_length": None,
           "low_errors": None, "explain": False, "unsafe": None}
#: Every number is printed by :func:`summary_rows` (none is a percentage).
HEADLINES: tuple[str, ...] = ()
#: The trivial replies :func:`baseline` writes: ``target`` is a correct program per function
#: (one dict per character: L(P⁺) = 40, E = 0, C = 100).
BASELINES = ("target",)
#: Keys a replies record may hold its text under (first present wins); code keys are used as is.
REPLY_KEYS = ("reply", "response", "text", "content")
CODE_KEYS = ("program", "code")
#: Statuses of replies whose code the scorer could not read (counted as format errors).
_UNREAD = ("syntax error", "too long", "too complex")
_ROW_ID = re.compile(r"^(?P<config>.+)-(?P<split>[a-z_]+)-(?P<index>\d+)$")


@dataclass(frozen=True)
class Reply:
    """One record of a replies file: its function id, model, extracted code (or why none) and prompt version."""

    id: str
    model: str
    code: str | None
    reason: str | None
    prompt_version: str | None


@dataclass(frozen=True)
class RawReplies:
    """A replies file as read."""

    replies: list[Reply]
    unreadable_lines: int = 0


def read_replies(path: str | Path, model: str | None = None) -> RawReplies:
    """Read a replies file (see the module docstring); code is extracted from each reply here."""
    from cogen.kit.evaluate import read_records

    path = Path(path)
    if not path.is_file():
        raise EvalError(f"{path}: no such replies file")
    if path.suffix != ".jsonl":
        raise EvalError(f"{path}: program replies must be a .jsonl file of {{\"id\": ..., \"reply\": ...}} records")
    records, unreadable = read_records(path)
    default = model or path.stem
    replies = []
    for record in records:
        code_key = next((k for k in CODE_KEYS if isinstance(record.get(k), str)), None)
        if code_key is not None:
            code, reason = (record[code_key], None) if record[code_key].strip() else (None, "no code")
        else:
            code, reason = extract_code(next((record[k] for k in REPLY_KEYS if k in record), None))
        version = record.get("prompt_version")
        replies.append(Reply(_id(record["id"]), clean(record.get("model") or default, 100), code, reason,
                             None if version is None else clean(version, 60)))
    return RawReplies(replies, unreadable)


read = read_replies


def _id(value) -> str:
    """A record's id as text; one too long to name a function is kept short (it then matches none)."""
    text = str(value)
    return text if len(text) <= 200 else f"(an id of {len(text):,} characters)"


def expected_ids(split: SplitData, **options) -> list[str]:
    """One program is expected per function (row) of the split, per model."""
    return [str(name) for name in split.table.column("id").to_pylist()]


def baseline(split: SplitData, kind: str, **options) -> Iterator[tuple[str, str]]:
    """``(id, reply)`` of a trivial baseline of :data:`BASELINES` for every function of the split."""
    from cogen.families.programs.styles import program

    columns = split.table.select(["id", "cell_groups", "patterns"]).to_pydict()
    for name, groups, patterns in zip(columns["id"], columns["cell_groups"], columns["patterns"], strict=True):
        bits = [[cell == "*" for cell in pattern] for pattern in patterns]
        yield name, f"```python\n{program('letter_dicts', np.array(groups), bits)}```\n"


def write_replies(path: str | Path, records: Iterable[tuple[str, str]], model: str = "baseline") -> int:
    """Write ``(id, reply)`` records as a replies file (JSONL); returns how many."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for name, reply in records:
            handle.write(json.dumps({"id": name, "model": model, "reply": reply}) + "\n")
            count += 1
    return count


write = write_replies


def _targets(split: SplitData) -> dict[str, tuple[str, list[str]]]:
    columns = split.table.select(["id", "setting", "outputs"]).to_pydict()
    return {name: (setting, [text.replace("\n", "") for text in outputs])
            for name, setting, outputs in zip(columns["id"], columns["setting"], columns["outputs"], strict=True)}


def _programs(expected: list[str], replies: list[Reply]) -> tuple[list[Program], dict, list[str]]:
    """One :class:`Program` per (model, expected id), the format report, and the extra ids."""
    models = list(dict.fromkeys(r.model for r in replies)) or ["(no replies)"]
    found: dict[tuple[str, str], list[Reply]] = {}
    for reply in replies:
        found.setdefault((reply.model, reply.id), []).append(reply)
    wanted = set(expected)
    programs, reasons = [], Counter()
    for model in models:
        for name in expected:
            matches = found.get((model, name), [])
            reply = matches[0] if len(matches) == 1 else None
            detail = reply.reason if reply else None
            status = "missing" if not matches else "duplicate id" if len(matches) > 1 else (detail or "ok").split(":")[0]
            if status != "ok":
                reasons[status] += 1
            programs.append(Program(name, model, reply.code if status == "ok" else None, status,
                                    reply.prompt_version if reply else None, detail))
    extra = list(dict.fromkeys(clean(r.id, 100) for r in replies if r.id not in wanted))
    return programs, reasons, extra


def _format_report(reasons: Counter, unread: Counter, extra: list[str], unreadable: int) -> dict:
    reasons = Counter(reasons) + unread
    total = sum(reasons.values())
    return {"total": total, "missing": reasons.get("missing", 0), "duplicate": reasons.get("duplicate id", 0),
            "malformed": total - reasons.get("missing", 0) - reasons.get("duplicate id", 0),
            "reasons": dict(sorted(reasons.items())), "extra_ids": len(extra), "extra_examples": extra[:5],
            "unreadable_lines": unreadable}


def _score(split: SplitData, raw: RawReplies, sandbox: Sandbox, low_length=None, low_errors=None,
           explain: bool = False) -> dict:
    programs, reasons, extra = _programs(expected_ids(split), raw.replies)
    scores, explanations = score_programs(programs, _targets(split), sandbox, explain)
    summaries = summarize(scores, low_length, low_errors)
    errors = Counter()
    for s in scores:
        errors.update({("wrong output" if kind == "wrong output" else kind.split(":")[0]): count
                       for kind, count in s.failures.items()})
    report = table(summaries, low_length, low_errors, sandbox.isolation.name)
    metrics = {
        "n": len(scores), "n_valid": sum(s.status == "ok" for s in scores),
        "format_errors": _format_report(reasons, Counter(s.status for s in scores if s.status in _UNREAD), extra,
                                        raw.unreadable_lines),
        "setting": split.manifest.get("kind"),
        "prompt_versions": sorted({s.prompt_version for s in scores if s.prompt_version}),
        "models": {m.model: m.as_dict() for m in summaries},
        "report": report, "markdown": markdown_table(report),
        "errors": dict(sorted(errors.items())),
        "functions": [s.as_dict(low_length, low_errors) for s in scores],
        "sandbox": {"timeout": sandbox.timeout, "wall_limit": sandbox.wall, "memory_mb": sandbox.memory >> 20,
                    "workers": sandbox.workers, "isolation": sandbox.isolation.name},
    }
    if explain:
        metrics["explanations"] = explanations
    return metrics


def score(split: SplitData, raw: RawReplies, timeout: float = DEFAULT_TIMEOUT, memory_mb: int = DEFAULT_MEMORY_MB,
          workers: int | None = None, low_length: float | None = None, low_errors: float | None = None,
          explain: bool = False, unsafe: bool | None = None) -> dict:
    """Score the replies of every model against the split's functions (see the module docstring).

    ``timeout`` (CPU seconds for all 16 inputs) and ``memory_mb`` limit each program; ``workers``
    sandbox processes run them (default: one per core); ``unsafe`` runs them without isolation
    (default: the ``COGEN_UNSAFE_RUN_UNTRUSTED_CODE`` environment variable). ``low_length`` and
    ``low_errors`` are the T1/T2/T3 thresholds (defaults: 180 and 4). ``explain`` adds each
    program's counting, line by line, under ``explanations``.
    """
    with Sandbox(workers, timeout, memory_mb, unsafe=unsafe) as sandbox:
        return _score(split, raw, sandbox, low_length, low_errors, explain)


def sample_scores(split: SplitData, raw: RawReplies, **options) -> list[dict]:
    """Each (model, function)'s own scores, as :func:`score` counts them (``options`` as there):
    ``correct`` (the program reproduces all 16 pairs), ``valid`` (its code was read), ``error`` (the
    status, or ``wrong output``), ``l_plus``, ``errors``, ``length``, ``c`` and the ``type``: the
    means of L(P+), E and C are the paper's table cells."""
    metrics = score(split, raw, **options)
    return [{"id": f["id"], "model": f["model"], "correct": f["status"] == "ok" and f["errors"] == 0,
             "valid": f["status"] == "ok", "error": None if f["status"] == "ok" and not f["errors"] else
             (f["status"] if f["status"] != "ok" else "wrong output"), "l_plus": f["l_plus"], "errors": f["errors"],
             "length": f["length"], "c": f["c"], "type": f["type"]} for f in metrics["functions"]]


def summary_rows(metrics: dict) -> list[tuple[str, str]]:
    """Per model: L(P⁺) / E / C(P) and the type, the function types and the obfuscated programs; the
    prompt versions; the isolation the programs ran under."""
    rows = []
    for model, m in metrics["models"].items():
        model = clean(model, 60)
        rows.append((f"{model}: L(P+) / E / C", f"{m['l_plus']:.2f} / {m['errors']:.2f} / {m['c']:.2f} ({m['type']})"))
        rows.append((f"{model}: Σn / Σm / L(P)", f"{m['sum_n']:.2f} / {m['sum_m']:.2f} / {m['length']:.2f}"))
        rows.append((f"{model}: function types", ", ".join(f"{t} {k}" for t, k in m["types"].items())))
        if m.get("obfuscated"):
            rows.append((f"{model}: obfuscated", f"{m['obfuscated']} of {m['functions']} (C(P) withheld, "
                                                 "counted as 0 in the means)"))
    rows.append(("prompt versions", ", ".join(metrics["prompt_versions"]) or "not recorded"))
    rows.append(("isolation", metrics["sandbox"]["isolation"]))
    return rows


def evaluate_table(data, predictions: str | Path, split: str = "test", configs: list[str] | None = None,
                   timeout: float = DEFAULT_TIMEOUT, memory_mb: int = DEFAULT_MEMORY_MB, workers: int | None = None,
                   low_length: float | None = None, low_errors: float | None = None,
                   unsafe: bool | None = None) -> dict:
    """Score a replies file against every config its ids name (or ``configs``): the paper's Tables 1
    and 2 (rows: models; columns: settings) as JSON-ready data with their Markdown, and each config's
    metrics. Options as :func:`score`."""
    import time

    start = time.perf_counter()
    raw = read_replies(predictions)
    if configs is None:
        configs = list(dict.fromkeys(m["config"] for r in raw.replies if (m := _ROW_ID.match(r.id))))
    if not configs:
        raise EvalError(f"{predictions}: no reply id names a config (ids look like programs-horizontal-test-0)")
    results, summaries = {}, []
    splits = [_programs_split(data, config, split) for config in configs]  # every config readable before any runs
    with Sandbox(workers, timeout, memory_mb, unsafe=unsafe) as sandbox:
        for config, split_data in zip(configs, splits, strict=True):
            mine = RawReplies([r for r in raw.replies if (m := _ROW_ID.match(r.id)) and m["config"] == config],
                              raw.unreadable_lines)
            results[config] = _score(split_data, mine, sandbox, low_length, low_errors)
            summaries += summarize(_scores_of(results[config]), low_length, low_errors)
        isolation = sandbox.isolation.name
    report = table(summaries, low_length, low_errors, isolation)
    return {"data": str(data), "predictions": str(predictions), "split": split, "report": report,
            "markdown": markdown_table(report), "configs": results, "seconds": round(time.perf_counter() - start, 3)}


def _programs_split(data, config: str, split: str) -> SplitData:
    split_data = read_split(data, config, split)
    if split_data.family != "programs":
        raise EvalError(f"{config} is a {split_data.family} config: the table scores string-to-grid programs")
    split_data.table.select(["id", "setting", "outputs"])  # the columns the scorer reads are there
    return split_data


def _scores_of(metrics: dict):
    from cogen.families.programs.score import FunctionScore

    keys = ("id", "model", "setting", "status", "sum_n", "sum_m", "errors", "prompt_version", "function", "failures",
            "detail")
    return [FunctionScore(**{k: f[k] for k in keys if k in f}) for f in metrics["functions"]]
