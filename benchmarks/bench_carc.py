"""Speed of the Compositional-ARC generator and of a paper-size build, beside the reference.

    python benchmarks/bench_carc.py episodes [N]        # episodes per second, one process (carc in both query
                                                        # modes, carc_extended)
    python benchmarks/bench_carc.py build [W] [SCALE]   # the paper's 100,000 episodes plus the four
                                                        # systematicity splits, then every config, W workers
    python benchmarks/bench_carc.py --smoke             # both on a few episodes (seconds; the tests run it)

Reference (public mainlp/C-ARC ``gen_data.py``, carc_reference.md §9): 10.7 episodes per CPU-second,
about 2.6 CPU-hours of generation for the paper's 100,000 episodes. Prints one JSON line per figure.
The default ``queries: reference`` mode turns down about 35 grammars per episode, as the reference
restarts about 27 times; ``queries: distinct`` needs 1.7. CPU seconds are the figure to compare on
a shared machine.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

REFERENCE_PER_CPU_SECOND = 10.7
SPLIT_CONFIGS = ["carc-episodes"] + [f"carc-systematicity-{seed}" for seed in (1860, 1870, 1880, 1890)]


def episodes(n: int) -> None:
    """Generation alone (Numba kernels, no Parquet), one process, after a warm-up call."""
    from dataclasses import replace

    from cogen.carc.episodes import EpisodeSampler
    from cogen.specs import load_spec

    for spec, queries in (("carc", "reference"), ("carc", "distinct"), ("carc_extended", "reference")):
        sampler = EpisodeSampler.from_setting(replace(load_spec(spec), queries=queries))
        sampler.generate(range(100))  # compile, or load the Numba cache
        wall, cpu = time.perf_counter(), time.process_time()
        batch = sampler.generate(range(n)).require_ok()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(json.dumps({"spec": spec, "queries": queries, "episodes": n, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
                          "episodes_per_s": round(n / wall), "episodes_per_cpu_s": round(n / cpu),
                          "speedup_vs_reference": round(n / cpu / REFERENCE_PER_CPU_SECOND),
                          "grammars_per_episode": round(float(batch.causes.sum()) / n, 2)}), flush=True)


def build_run(workers: int, scale: float) -> None:
    """`cogen build` of the pool plus the four splits, then of everything else, into one folder."""
    from cogen.pipeline import build

    with tempfile.TemporaryDirectory() as folder:
        build("carc", Path(folder) / "warm", scale=0.001, workers=1)  # compile / load the Numba cache once
        out = Path(folder) / "out"
        for label, only in (("pool + 4 systematicity splits", SPLIT_CONFIGS), ("+ 4 3-shot splits + static", None)):
            start = time.perf_counter()
            report = build("carc", out, scale=scale, workers=workers, only=only)
            seconds = time.perf_counter() - start
            written = sum(c.written for c in report.configs)
            size = sum(p.stat().st_size for p in out.glob("data/**/*.parquet"))
            rows = {c.config: sum(c.rows.values()) for c in report.configs}
            print(json.dumps({"build": label, "workers": workers, "scale": scale, "seconds": round(seconds, 1),
                              "shards_written": written, "rows": rows, "folder_mb": round(size / 1e6),
                              "peak_rss_mb": _peak_rss_mb()}), flush=True)


def _peak_rss_mb() -> int:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(own, children) / 1024)


def main(argv: list[str]) -> None:
    if argv == ["--smoke"]:
        episodes(200)
        build_run(1, 0.0005)
        return
    if not argv or argv[0] not in ("episodes", "build"):
        sys.exit(__doc__)
    if argv[0] == "episodes":
        episodes(int(argv[1]) if len(argv) > 1 else 20_000)
    else:
        workers = int(argv[1]) if len(argv) > 1 else min(os.cpu_count() or 1, 8)
        build_run(workers, float(argv[2]) if len(argv) > 2 else 1.0)


if __name__ == "__main__":
    main(sys.argv[1:])
