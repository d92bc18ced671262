"""Results tables of finished runs, in the grid paper's Table 1 layout, with the paper's numbers beside them.

Rows are settings (C1 ... G5), column groups are models, each with ID, OOD and Δ = ID - OOD test
grid accuracy (%, scored by ``cogen eval``). A cell is the mean ± SEM over seeds, where each
seed's value is the mean over the experiments of that setting that were run (the paper's Table 1
averages 5 experiments x 3 seeds). In parentheses: the paper's number, Table 1's when all five
experiments of the setting were run, otherwise the mean of Tables 5-8 over the experiments that
were (marked ``*``). Runs scored on one test split only (no OOD split: MLC's episodes)
get their own table: the metrics their paper reports (MLC: exact match, colour and shape accuracy
beside the MLC paper's Table 1), else the run's headline metric. Which table a run goes to is
a property of its results (an OOD test split or not), never of a family's name.
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
from cogen_baselines.protocol import DEFAULT_RULE, RULE_NAMES, RULES

__all__ = ["METRICS", "find_runs", "mean_sem", "results_table"]

#: Numbers a grid table can show: ``cogen eval``'s grid accuracy, or the in-loop padded one (the paper's).
METRICS = ("grid_accuracy", "padded_grid_accuracy")
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


def _cell(values: list[float], paper: float | None, estimated: bool) -> str:
    mean, sem = mean_sem(values)
    text = f"{mean:.1f}" if sem is None else f"{mean:.1f} ± {sem:.1f}"
    if paper is not None:
        text += f" ({paper:.1f}{'*' if estimated else ''})"
    return text


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
        result = run["results"].get(rule)
        if not result or "test" not in result or "test_ood" not in result:
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
    header = ["setting"] + [f"{model} {column}" for model in models for column in ("ID", "OOD", "Δ")]
    lines = ["| " + " | ".join(header) + " |", "|---" + "|---:" * (len(header) - 1) + "|"]
    notes = []
    for setting in settings:
        cells = [setting]
        for model in models:
            group = groups.get((setting, model), [])
            seeds = _per_seed(group, rule, metric)
            if not seeds:
                cells += ["–"] * 3
                continue
            experiments = {run["config"] for run in group}
            paper = _paper(model, setting, experiments)
            ids, oods = [v[0] for v in seeds.values()], [v[1] for v in seeds.values()]
            deltas = [i - o for i, o in zip(ids, oods, strict=True)]
            estimated = bool(paper and paper[2])
            cells += [_cell(ids, paper and paper[0], estimated), _cell(oods, paper and paper[1], estimated),
                      _cell(deltas, paper and paper[0] - paper[1], estimated)]
            notes.append(f"{model} {setting}: {len(experiments)} experiment(s) ({', '.join(sorted(experiments))}) "
                         f"x {len(seeds)} seed(s)")
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


def _single_split_table(runs: list[dict], rule: str, columns: tuple[str, ...]) -> list[str]:
    groups = defaultdict(list)
    for run in runs:
        result = run["results"].get(rule if rule in run["results"] else "id_val", {}).get("test")
        if result:
            groups[(run["config"], run["model"])].append((result, _single_split_paper(run)))
    names = [name.replace("_", " ").replace("color", "colour") for name in columns]
    lines = ["| config | model | seeds | " + " | ".join(names) + " |", "|---|---|---:" + "|---:" * len(columns) + "|"]
    for (config, model), results in sorted(groups.items()):
        paper = results[0][1]
        cells = [_cell([100 * r[key] for r, _ in results], paper and paper[k], False) for k, key in enumerate(columns)]
        lines.append(f"| {config} | {model} | {len(results)} | " + " | ".join(cells) + " |")
    return lines


def results_table(runs: list[dict], rule: str = DEFAULT_RULE, metric: str = "grid_accuracy") -> str:
    """Markdown tables of ``runs`` (summaries, see :func:`find_runs`) under checkpoint ``rule``."""
    if rule not in RULES:
        raise RunFolderError(f"unknown checkpoint rule {rule!r}; choose from {', '.join(RULES)}")
    if metric not in METRICS:
        raise RunFolderError(f"unknown metric {metric!r}; choose from {', '.join(METRICS)}")
    out = []
    paired = [run for run in runs if _has_ood(run)]
    what = "`cogen eval` grid accuracy" if metric == "grid_accuracy" else "grid accuracy on the padded grids"
    if paired:
        out += [(f"Test {what} (%), mean ± SEM over seeds (each seed: the mean over the experiments run); "
                 "in parentheses the grid paper (Table 1; * = mean of its Tables 5-8 rows for the experiments "
                 f"run). Checkpoint rule: {RULE_NAMES[rule]}."), ""]
        out += _id_ood_table(paired, rule, metric)
    single = defaultdict(list)
    for run in runs:
        if not _has_ood(run):
            single[_single_split_columns(run)].append(run)
    for columns, group in single.items():
        out += ([""] if out else []) + [
            "Test set (%) of configs without an out-of-domain split, mean ± SEM over seeds; in parentheses the "
            "model's paper (MLC: the MLC paper's Table 1). "
            f"Checkpoint rule: {RULE_NAMES[rule if rule != 'ood_loss' else 'id_val']}"
            + (" (these configs have no OOD validation split)." if rule == "ood_loss" else "."), ""]
        out += _single_split_table(group, rule, columns)
    return "\n".join(out) + "\n"
