"""Speed of the string-to-grid programs family: building functions, and scoring program replies.

    python benchmarks/bench_programs.py build [N]             # 6 settings x N functions (default 1,000), one process
    python benchmarks/bench_programs.py score [N] [W] [--pairs K]
                                  # about N program replies (6 x ceil(N / 6); default 1,002), W sandbox workers
                                  # (default: one per core); K pairs (default 1) of runs, each pair confined
                                  # (bubblewrap) then unconfined (--unsafe-run-untrusted-code), then the medians
    python benchmarks/bench_programs.py                       # both
    python benchmarks/bench_programs.py --smoke               # a few seconds: 6 x 8 functions, 48 replies, 1 pair

Targets (issue 12): building 6 x 1,000 functions in under a second; scoring 1,000 programs in under
30 s on 2 cores, the sandboxed runs included. Issues 25 and 34: kernel isolation (bubblewrap
namespaces, the seccomp filters, a read-only root and the zygote each program is forked from) may
make scoring at most 1.5x slower than unconfined. Seed 003 publishes no code to compare with. Prints
one JSON line per run (wall seconds, and the CPU seconds of this process and its children: the
scorer, bubblewrap, the fork servers and their programs) and one line of medians and ratios over the
pairs; on a shared machine, use several pairs (the two modes interleave, so load hits both alike).
"""

from __future__ import annotations

import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

FUNCTIONS_IN_SPEC = 30


def _peak_rss_mb() -> int:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def build_run(functions: int, folder: Path) -> Path:
    """`cogen build` of the packaged spec with ``functions`` per setting (after a warm-up build)."""
    from cogen.pipeline import build

    build("programs", folder / "warm", workers=1)
    out = folder / "out"
    start = time.perf_counter()
    report = build("programs", out, scale=functions / FUNCTIONS_IN_SPEC, workers=1)
    seconds = time.perf_counter() - start
    total = sum(sum(c.rows.values()) for c in report.configs)
    print(json.dumps({"build": f"6 settings x {functions} functions", "functions": total, "workers": 1,
                      "seconds": round(seconds, 3), "functions_per_s": round(total / seconds),
                      "peak_rss_mb": _peak_rss_mb()}), flush=True)
    return out


def _replies(folder: Path, count: int, path: Path) -> Path:
    """``count`` replies over the built configs: every program style, fenced and bare, a few with errors."""
    import numpy as np

    from cogen.families.programs.styles import STYLES, corrupt, program
    from cogen.folder import read_manifests, read_split

    styles = sorted(STYLES)
    records = []
    configs = list(read_manifests(folder))
    per_config = -(-count // len(configs))
    for config in configs:
        for k, row in enumerate(read_split(folder, config, "test").table.slice(0, per_config).to_pylist()):
            groups, patterns = np.array(row["cell_groups"]), [[c == "*" for c in p] for p in row["patterns"]]
            source = corrupt(groups, patterns, range(k % 5)) if k % 10 == 9 else program(styles[k % 6], groups, patterns)
            reply = f"Here is the program:\n```python\n{source}```\n" if k % 2 else source
            records.append({"id": row["id"], "model": "bench", "prompt_version": "programs-v1", "reply": reply})
    path.write_text("".join(json.dumps(r) + "\n" for r in records[:count]))
    return path


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def score_run(folder: Path, replies: Path, workers: int, unsafe: bool) -> dict:
    """Score the replies against the built configs (static analysis + sandboxed runs), confined by
    bubblewrap or (``unsafe``) not; prints and returns the figures."""
    import warnings

    from cogen.families.programs.evaluate import evaluate_table
    from cogen.sandbox.isolation import UnconfinedWarning

    cpu, start = _cpu_seconds(), time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnconfinedWarning)  # unconfined on purpose: the baseline
        report = evaluate_table(folder, replies, workers=workers, unsafe=unsafe)
    seconds, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    scored = sum(m["n"] for m in report["configs"].values())
    isolation = next(iter(report["configs"].values()))["sandbox"]["isolation"]
    figures = {"score": f"{scored} program replies", "isolation": isolation, "sandbox_workers": workers,
               "seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2),
               "programs_per_s": round(scored / seconds, 1), "ms_per_program": round(1000 * seconds / scored, 2),
               "peak_rss_mb": _peak_rss_mb()}
    print(json.dumps(figures), flush=True)
    return {**figures, "functions": [f for m in report["configs"].values() for f in m["functions"]]}


def score_pairs(folder: Path, count: int, workers: int, pairs: int) -> None:
    """``pairs`` pairs of runs (confined, then unconfined) on the same replies; the medians and ratios."""
    from statistics import median

    replies = _replies(folder, count, folder / "replies.jsonl")
    runs: dict[bool, list[dict]] = {False: [], True: []}
    for _ in range(pairs):
        for unsafe in (False, True):
            runs[unsafe].append(score_run(folder, replies, workers, unsafe))
    confined, unconfined = runs[False], runs[True]
    same = all(run["functions"] == confined[0]["functions"] for run in confined + unconfined)
    wall = [median(r["seconds"] for r in rs) for rs in (confined, unconfined)]
    cpu = [median(r["cpu_seconds"] for r in rs) for rs in (confined, unconfined)]
    print(json.dumps({"pairs": pairs, "confined_median_s": wall[0], "unconfined_median_s": wall[1],
                      "wall_ratio": round(wall[0] / wall[1], 3), "confined_median_cpu_s": cpu[0],
                      "unconfined_median_cpu_s": cpu[1], "cpu_ratio": round(cpu[0] / cpu[1], 3),
                      "wall_ratio_per_pair": [round(a["seconds"] / b["seconds"], 3)
                                              for a, b in zip(confined, unconfined, strict=True)],
                      "identical_scores": same}), flush=True)


def main(argv: list[str]) -> None:
    smoke = "--smoke" in argv
    pairs = 1
    if "--pairs" in argv:
        at = argv.index("--pairs")
        pairs = int(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    argv = [a for a in argv if a != "--smoke"]
    what = argv[0] if argv else "both"
    count = int(argv[1]) if len(argv) > 1 else (48 if smoke else 1000)
    workers = int(argv[2]) if len(argv) > 2 else (2 if smoke else os.cpu_count() or 1)
    with tempfile.TemporaryDirectory() as tmp:
        if what in ("build", "both"):
            build_run(8 if smoke else count, Path(tmp) / "build")
        if what in ("score", "both"):  # every function of the scored folder gets one reply
            from cogen.pipeline import build

            folder = Path(tmp) / "score"
            build("programs", folder, scale=-(-count // 6) / FUNCTIONS_IN_SPEC, workers=1)
            score_pairs(folder, 6 * -(-count // 6), workers, pairs)


if __name__ == "__main__":
    main(sys.argv[1:])
