"""Sequential COGITAO against the plain build of the same spec: samples/s and bytes per sample.

    python benchmarks/bench_variants.py [N]     # C1-1 (train), N samples (default 20,000), one process

Two measures, each the best of 3 runs: the sampler alone (``generate_rows`` with and without
frames, CPU seconds of the process) and ``cogen build`` end to end (wall seconds, Parquet bytes per
sample). The issue's bar: the sequential build keeps at least 70 % of the plain build's samples/s.
"""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

C1 = "split_specs/c1.yaml"


def _spec(folder: Path, n: int, frames: bool) -> Path:
    text = Path(C1).read_text().replace("sizes: {train: 100000, validation: 1000, test: 1000, validation_ood: 1000, "
                                        "test_ood: 1000}",
                                        f"sizes: {{train: {n}, validation: 1, test: 1, validation_ood: 1, test_ood: 1}}")
    if frames:
        text = text.replace("variant: paper-text\n", "variant: paper-text\noutput: {frames: true}\n")
    path = folder / f"c1_{'frames' if frames else 'plain'}.yaml"
    path.write_text(text)
    return path


def sampler(n: int) -> dict[str, float]:
    from cogen.generate.sampler import SplitJob, generate_rows
    from cogen.specs import load_spec

    experiment = load_spec("c1").experiment("C1-1")
    job = SplitJob.of(experiment.domain("train"), 1, "C1-1", "train")
    out = {}
    for frames in (False, True, False, True):  # the first pair compiles
        run = replace(job, frames=frames)
        best = float("inf")
        for _ in range(3):
            start = time.process_time()
            generate_rows(run, np.arange(0, n))
            best = min(best, time.process_time() - start)
        out["frames" if frames else "plain"] = n / best
    return out


def build_rate(n: int) -> dict[str, tuple[float, float]]:
    from cogen.pipeline import build

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for frames in (False, True):
            spec = _spec(root, n, frames)
            best = float("inf")
            for run in range(3):
                folder = root / f"out{frames}{run}"
                start = time.perf_counter()
                build(spec, folder, workers=1, only=["C1-1"])
                best = min(best, time.perf_counter() - start)
            size = sum(p.stat().st_size for p in (folder / "data").glob("**/train-*.parquet"))
            out["frames" if frames else "plain"] = (n / best, size / n)
    return out


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    rates = sampler(n)
    print(f"sampler, C1-1 train, {n} samples (CPU s): plain {rates['plain']:,.0f}/s, frames {rates['frames']:,.0f}/s "
          f"({rates['frames'] / rates['plain']:.0%} of plain)")
    builds = build_rate(n)
    (plain, plain_bytes), (seq, seq_bytes) = builds["plain"], builds["frames"]
    print(f"build, C1-1, {n} train samples (wall s): plain {plain:,.0f}/s, {plain_bytes:.0f} B/sample; "
          f"sequential {seq:,.0f}/s, {seq_bytes:.0f} B/sample ({seq / plain:.0%} of plain; bar: 70 %)")


if __name__ == "__main__":
    main()
