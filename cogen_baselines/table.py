"""Results tables of finished runs, in the grid paper's Table 1 layout, with the paper's numbers beside them.

Rows are settings (C1 ... G5), column groups are models, each with ID, OOD and Δ = ID - OOD test
grid accuracy (%) in the paper's metric (the whole padded grid must match, visual tokens
included), then the other metric beside it (``cogen eval``'s grid accuracy on the cut-out grids,
never lower). A cell is the mean ± SEM over seeds, where each seed's value is the mean over the
experiments of that setting that were run (the paper's Table 1 averages 5 experiments x 3
seeds). In parentheses: the paper's number, Table 1's when all five experiments of the setting
were run, otherwise the mean of Tables 5-8 over the experiments that were (marked ``*``). The
checkpoint rule is by default each run's own: the one its model's authors' code keeps.

A run that does not follow its paper's protocol (another size, fewer epochs or rows, another
batch, the text's form: the run's ``departures``) is marked ``†`` in every cell it enters, and
the notes say how it departs, so no smoke run sits unmarked beside the paper's numbers.

Runs scored on one test split only (no OOD split: MLC's episodes) get their own table: the
metrics their paper reports (MLC: exact match, colour and shape accuracy of the argmax under the
gold prefix, as the MLC paper's code scores them, beside its Table 1; the greedy decoding's
beside), else the run's headline metric. Which table a run goes to is a property of its results
(an OOD test split or not), never of a family's name.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import defaultdict
from pathlib import Path

from cogen_baselines.errors import RunFolderError
from cogen_baselines.folder import SUMMARY, read_summary
from cogen_baselines.paper import EXPERIMENTS, SINGLE_SPLIT, TABLE_1
from cogen_baselines.protocol import DEFAULT_RULE, PAPER_RULE, RULE_NAMES, RULES

__all__ = ["METRICS", "find_runs", "mean_sem", "results_table"]

#: Numbers a table can lead with: ``paper`` (the default: each paper's own metric), the padded grid
#: accuracy (the grid paper's), or ``cogen eval``'s grid accuracy on the cut-out grids.
METRICS = ("paper", "padded_grid_accuracy", "grid_accuracy")
_OTHER = {"padded_grid_accuracy": "grid_accuracy", "grid_accuracy": "padded_grid_accuracy"}
_METRIC_NAMES = {"padded_grid_accuracy": "grid accuracy (%) on the padded grids, the paper's metric",
                 "grid_accuracy": "`cogen eval` grid accuracy (%) on the cut-out grids"}
_SHORT = {"padded_grid_accuracy": "padded", "grid_accuracy": "cogen eval"}
MARK = "†"
_SETTING = re.compile(r"^([A-Za-z]+\d*)-\d+$")
_SETTING_ORDER = ("C1", "C2", "C3", "G1", "G2", "G3", "G4", "G5", "S")


def find_runs(paths) -> list[dict]:
    """Summaries of the finished runs in ``paths`` (run folders, or folders holding run folders at any depth)."""
    found = []
    for path in map(Path, paths):
        if not path.exists():
            raise RunFolderError(f"{path}: no such run folder")
        folders = [path] if (path / SUMMARY).is_file() else sorted(p.parent for p in path.rglob(SUMMARY))
        for folder in folders:
            summary = read_summary(folder)
            if summary and summary.get("complete"):
                found.append({**summary, "folder": str(folder)})
    if not found:
        raise RunFolderError(f"no finished runs (no {SUMMARY}) in {', '.join(map(str, paths))}")
    return found


def mean_sem(values: list[float]) -> tuple[float, float | None]:
    """Mean and standard error of the mean (sample standard deviation / sqrt(n); None for one value)."""
    mean = statistics.fmean(values)
    return mean, (statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else None)


def _cell(values: list[float], paper: float | None, estimated: bool, marked: bool = False) -> str:
    mean, sem = mean_sem(values)
    text = f"{mean:.1f}" if sem is None else f"{mean:.1f} ± {sem:.1f}"
    if marked:
        text += f" {MARK}"
    if paper is not None:
        text += f" ({paper:.1f}{'*' if estimated else ''})"
    return text


def _run_rule(run: dict, rule: str) -> str:
    """The rule to read a run under: ``paper`` is the run's own (older runs: its model's card's)."""
    if rule != PAPER_RULE:
        return rule
    if run.get("rule"):
        return run["rule"]
    from cogen_baselines.registry import MODELS

    card = MODELS.get(run.get("model"))
    return card.checkpoint if card is not None else "ood_loss"


def _departures(runs: list[dict]) -> list[str]:
    """How any of ``runs`` departs from the paper's protocol (each phrase once, made safe for Markdown: run
    folders may come from anywhere)."""
    from cogen.safe_text import markdown_cell

    found: list[str] = []
    for run in runs:
        recorded = run.get("departures", ["its protocol was not recorded (a run made before issue 39)"])
        for phrase in recorded if isinstance(recorded, list) else [recorded]:
            phrase = markdown_cell(phrase, 160)
            if phrase not in found:
                found.append(phrase)
    return found


def _setting(summary: dict) -> str:
    match = _SETTING.match(summary["config"])
    return (summary.get("setting") or (match.group(1) if match else summary["config"])).upper()


def _paper(model: str, setting: str, experiments: set[str]) -> tuple[float, float, bool] | None:
    """The paper's (ID, OOD) for the experiments run, and whether it had to be estimated from Tables 5-8."""
    if {f"{setting}-{k}" for k in range(1, 6)} <= experiments and model in TABLE_1.get(setting, {}):
        return (*TABLE_1[setting][model], False)
    rows = [EXPERIMENTS[name][model] for name in sorted(experiments) if model in EXPERIMENTS.get(name, {})]
    if not rows or len(rows) != len(experiments):
        return None
    return statistics.fmean(r[0] for r in rows), statistics.fmean(r[2] for r in rows), True


def _per_seed(runs: list[dict], rule: str, metric: str) -> dict[int, tuple[float, float]]:
    """seed -> (ID, OOD) in %, each the mean over the seed's experiments."""
    by_seed = defaultdict(list)
    for run in runs:
        result = run["results"].get(_run_rule(run, rule))
        if not result or metric not in result.get("test", {}) or metric not in result.get("test_ood", {}):
            continue
        by_seed[run["seed"]].append((100 * result["test"][metric], 100 * result["test_ood"][metric]))
    return {seed: (statistics.fmean(v[0] for v in values), statistics.fmean(v[1] for v in values))
            for seed, values in by_seed.items()}


def _order(names, order) -> list[str]:
    return sorted(names, key=lambda name: (order.index(name) if name in order else len(order), name))


def _id_ood_table(runs: list[dict], rule: str, metric: str) -> list[str]:
    from cogen_baselines.registry import MODELS

    groups = defaultdict(list)
    for run in runs:
        groups[(_setting(run), run["model"])].append(run)
    models = _order({model for _, model in groups}, tuple(MODELS))
    settings = _order({setting for setting, _ in groups}, _SETTING_ORDER)
    other = _OTHER[metric]
    header = ["setting"] + [f"{model} {column}" for model in models
                            for column in ("ID", "OOD", "Δ", f"ID / OOD ({_SHORT[other]})")]
    lines = ["| " + " | ".join(header) + " |", "|---" + "|---:" * (len(header) - 1) + "|"]
    notes = []
    for setting in settings:
        cells = [setting]
        for model in models:
            group = groups.get((setting, model), [])
            seeds = _per_seed(group, rule, metric)
            if not seeds:
                cells += ["–"] * 4
                continue
            experiments = {run["config"] for run in group}
            paper = _paper(model, setting, experiments)
            ids, oods = [v[0] for v in seeds.values()], [v[1] for v in seeds.values()]
            deltas = [i - o for i, o in zip(ids, oods, strict=True)]
            estimated, departures = bool(paper and paper[2]), _departures(group)
            beside = _per_seed(group, rule, other)
            cells += [_cell(ids, paper and paper[0], estimated, bool(departures)),
                      _cell(oods, paper and paper[1], estimated, bool(departures)),
                      _cell(deltas, paper and paper[0] - paper[1], estimated, bool(departures)),
                      (f"{statistics.fmean(v[0] for v in beside.values()):.1f} / "
                       f"{statistics.fmean(v[1] for v in beside.values()):.1f}") if beside else "–"]
            rules = sorted({_run_rule(run, rule) for run in group})
            notes.append(f"{model} {setting}: {len(experiments)} experiment(s) ({', '.join(sorted(experiments))}) "
                         f"x {len(seeds)} seed(s); rule {', '.join(rules)}"
                         + (f"; {MARK} not the paper's protocol: {'; '.join(departures)}" if departures else ""))
        lines.append("| " + " | ".join(cells) + " |")
    return lines + [""] + [f"- {note}" for note in notes]


def _has_ood(run: dict) -> bool:
    return any(isinstance(result, dict) and "test_ood" in result for result in run["results"].values())


def _single_split_columns(run: dict) -> tuple[str, ...]:
    return SINGLE_SPLIT[run["model"]][0] if run["model"] in SINGLE_SPLIT else (run.get("headline") or "grid_accuracy",)


def _single_split_paper(run: dict) -> tuple[float, ...] | None:
    """The paper's numbers for this run's model and config kind (the run's setting, else its config name)."""
    if run["model"] not in SINGLE_SPLIT:
        return None
    numbers = SINGLE_SPLIT[run["model"]][1]
    kind = next((key for key in numbers if key == run.get("setting")), None) or \
        next((key for key in numbers if key in run["config"]), None)
    return numbers.get(kind)


def _single_result(run: dict, rule: str) -> dict | None:
    """The run's test result under ``rule`` (an OOD rule, which such runs lack, reads as ``id_val``)."""
    chosen = _run_rule(run, rule)
    return (run["results"].get(chosen) or run["results"].get("id_val") or {}).get("test")


def _single_split_table(runs: list[dict], rule: str, columns: tuple[str, ...], metric: str) -> list[str]:
    """Per config and model; with the ``paper`` metric the teacher-forced scores (the MLC paper's code's)
    lead and the greedy ones sit beside them."""
    groups = defaultdict(list)
    for run in runs:
        result = _single_result(run, rule)
        if result:
            groups[(run["config"], run["model"])].append((run, result))
    names = [name.replace("_", " ").replace("color", "colour") for name in columns]
    forced = metric == "paper"
    lines = ["| config | model | seeds | " + " | ".join(names) + (" | greedy decoding |" if forced else " |"),
             "|---|---|---:" + "|---:" * (len(columns) + forced) + "|"]
    notes = []
    for (config, model), results in sorted(groups.items()):
        paper, departures = _single_split_paper(results[0][0]), _departures([run for run, _ in results])

        def lead(result):
            return result.get("teacher_forced") or result if forced else result

        cells = [_cell([100 * lead(r)[key] for _, r in results], paper and paper[k], False, bool(departures))
                 for k, key in enumerate(columns)]
        if forced:
            cells.append(" / ".join(f"{statistics.fmean(100 * r[key] for _, r in results):.1f}" for key in columns))
        lines.append(f"| {config} | {model} | {len(results)} | " + " | ".join(cells) + " |")
        if forced and any("teacher_forced" not in r for _, r in results):
            notes.append(f"{model} {config}: no teacher-forced scores recorded (an older run): greedy scores lead")
        if departures:
            notes.append(f"{model} {config}: {MARK} not the paper's protocol: {'; '.join(departures)}")
    return lines + ([""] + [f"- {note}" for note in notes] if notes else [])


def results_table(runs: list[dict], rule: str = DEFAULT_RULE, metric: str = "paper") -> str:
    """Markdown tables of ``runs`` (summaries, see :func:`find_runs`) under checkpoint ``rule`` (``paper``:
    each run's own) in ``metric`` (:data:`METRICS`; ``paper``: each paper's own, the other beside it)."""
    if rule not in (PAPER_RULE, *RULES):
        raise RunFolderError(f"unknown checkpoint rule {rule!r}; choose from {', '.join((PAPER_RULE, *RULES))}")
    if metric not in METRICS:
        raise RunFolderError(f"unknown metric {metric!r}; choose from {', '.join(METRICS)}")
    out = []
    paired = [run for run in runs if _has_ood(run)]
    grid_metric = "padded_grid_accuracy" if metric == "paper" else metric
    if paired:
        out += [(f"Test {_METRIC_NAMES[grid_metric]}, mean ± SEM over seeds (each seed: the mean over the "
                 f"experiments run), the {_SHORT[_OTHER[grid_metric]]} one beside; in parentheses the grid paper "
                 "(Table 1; * = mean of its Tables 5-8 rows for the experiments run); "
                 f"{MARK} = not the paper's protocol (see the notes). Checkpoint rule: {RULE_NAMES[rule]}."), ""]
        out += _id_ood_table(paired, rule, grid_metric)
    single = defaultdict(list)
    for run in runs:
        if not _has_ood(run):
            single[_single_split_columns(run)].append(run)
    for columns, group in single.items():
        shown = "the argmax under the gold prefix, as the MLC paper's code scores them" if metric == "paper" else \
            "the greedy decoding"
        out += ([""] if out else []) + [
            f"Test set (%) of configs without an out-of-domain split ({shown}), mean ± SEM over seeds; in "
            f"parentheses the model's paper (MLC: the MLC paper's Table 1); {MARK} = not the paper's protocol. "
            f"Checkpoint rule: {RULE_NAMES[rule if not rule.startswith('ood') else 'id_val']}"
            + (" (these configs have no OOD validation split)." if rule.startswith("ood") else "."), ""]
        out += _single_split_table(group, rule, columns, metric)
    return "\n".join(out) + "\n"
