"""Speed of the string-to-grid programs family: building functions, and scoring program replies.

    python benchmarks/bench_programs.py build [N]        # 6 settings x N functions (default 1,000), one process
    python benchmarks/bench_programs.py score [N] [W]    # about N program replies (6 x ceil(N / 6); default
                                                         # 1,002), W sandbox workers (default: one per core),
                                                         # confined by bubblewrap, then unconfined
    python benchmarks/bench_programs.py                  # both

Targets (issue 12): building 6 x 1,000 functions in under a second; scoring 1,000 programs in under
30 s on 2 cores, the sandboxed runs included. Issue 25: kernel isolation (bubblewrap namespaces and
the seccomp filter) may make scoring at most 1.5x slower than the unconfined sandbox of before.
Seed 003 publishes no code to compare with. Prints one JSON line per figure (wall seconds, and the
CPU seconds of this process and its children: the scorer, bubblewrap and the fork servers); on a
shared machine, run it a few times and read the spread.
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


def score_run(folder: Path, count: int, workers: int, unsafe: bool) -> None:
    """Score ``count`` replies against the built configs (static analysis + sandboxed runs), confined by
    bubblewrap or (``unsafe``) not."""
    from cogen.families.programs.evaluate import evaluate_table

    replies = _replies(folder, count, folder / "replies.jsonl")
    cpu, start = _cpu_seconds(), time.perf_counter()
    report = evaluate_table(folder, replies, workers=workers, unsafe=unsafe)
    seconds, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    scored = sum(m["n"] for m in report["configs"].values())
    isolation = next(iter(report["configs"].values()))["sandbox"]["isolation"]
    print(json.dumps({"score": f"{scored} program replies", "isolation": isolation, "sandbox_workers": workers,
                      "seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2),
                      "programs_per_s": round(scored / seconds, 1), "ms_per_program": round(1000 * seconds / scored, 2),
                      "peak_rss_mb": _peak_rss_mb()}), flush=True)


def main(argv: list[str]) -> None:
    what = argv[0] if argv else "both"
    count = int(argv[1]) if len(argv) > 1 else 1000
    workers = int(argv[2]) if len(argv) > 2 else (os.cpu_count() or 1)
    with tempfile.TemporaryDirectory() as tmp:
        if what in ("build", "both"):
            build_run(count, Path(tmp) / "build")
        if what in ("score", "both"):  # every function of the scored folder gets one reply
            from cogen.pipeline import build

            folder = Path(tmp) / "score"
            build("programs", folder, scale=-(-count // 6) / FUNCTIONS_IN_SPEC, workers=1)
            for unsafe in (False, True):
                score_run(folder, 6 * -(-count // 6), workers, unsafe)


if __name__ == "__main__":
    main(sys.argv[1:])
