"""Throughput of `cogen.stream` beside the raw sampler, per case; a torch DataLoader; flat memory.

    python benchmarks/bench_stream.py cases [N]     # stream vs raw generate_rows, one core, N samples per case
    python benchmarks/bench_stream.py loader [N]    # torch DataLoader over a stream, 0 and 2 workers
    python benchmarks/bench_stream.py memory [N]    # peak RSS while streaming N samples (default 10 million)
    python benchmarks/bench_stream.py --smoke       # every mode on a few batches (seconds: the test suite runs it)

Cases A, C, D, E are those of `benchmarks/bench_build.py` (cogitao_reference §8.3). The stream
must make at least 150,000 samples/s on one core for A and C, within 25 % of the raw sampler.
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_build import CASES, case_spec  # noqa: E402  (the same cases as the build benchmark)

BATCH = 4096


def _stream(folder: Path, case: str):
    from cogen.stream import SampleStream

    spec = folder / f"{case}.yaml"
    spec.write_text(case_spec(case, 1000))
    return SampleStream(spec, case, batch_size=BATCH)


def _rate(make_batch, n: int) -> float:
    make_batch(0)  # compile / load the Numba cache
    start = time.process_time()
    done, number = 0, 0
    while done < n:
        done += make_batch(number)
        number += 1
    return done / (time.process_time() - start)


def cases(n: int) -> None:
    from cogen.families.cogitao.generate.sampler import generate_rows

    print(f"{'case':5} {'what':58} {'raw/s':>9} {'stream/s':>9} {'stream/raw':>10}")
    with tempfile.TemporaryDirectory() as folder:
        for case in CASES:
            stream = _stream(Path(folder), case)
            job = stream.source.job  # the raw sampler's job for the same split
            raw = _rate(lambda b, job=job: len(generate_rows(job, np.arange(b * BATCH, (b + 1) * BATCH))["ok"]), n)
            streamed = _rate(lambda b, stream=stream: len(stream.batch(b)["index"]), n)
            print(f"{case:5} {CASES[case][0]:58} {raw:>9,.0f} {streamed:>9,.0f} {streamed / raw:>9.0%}")
    print("(samples per CPU-second of this process; the stream includes padding, task tokens and indices)")


def loader(n: int) -> None:
    from torch.utils.data import DataLoader

    with tempfile.TemporaryDirectory() as folder:
        stream = _stream(Path(folder), "A")
        for workers in (0, 2):
            data = DataLoader(stream.torch_dataset(limit=n), batch_size=None, num_workers=workers)
            start = time.perf_counter()
            count = sum(len(batch["index"]) for batch in data)
            seconds = time.perf_counter() - start
            print(f"DataLoader, {workers} workers: {count / seconds:,.0f} samples/s (wall clock, {count:,} samples "
                  "of case A, worker start included)")


def memory(n: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        stream = _stream(Path(folder), "A")
        start, marks = time.perf_counter(), []
        for number, batch in enumerate(stream.batches(0, -(-n // BATCH))):
            if number % max(1, (n // BATCH) // 5) == 0:
                marks.append((int(batch["index"][-1]) + 1, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))
        seconds = time.perf_counter() - start
    print(f"streamed {n:,} samples of case A in {seconds:.0f} s ({n / seconds:,.0f} samples/s)")
    print("peak RSS (MB) after: " + ", ".join(f"{done:,} samples {mb:.0f}" for done, mb in marks))


DEFAULTS = {"cases": 200_000, "loader": 200_000, "memory": 10_000_000}

def smoke() -> None:
    """Every mode, a batch or two each (``loader`` only where torch is installed)."""
    import importlib.util

    cases(BATCH)
    memory(2 * BATCH)
    if importlib.util.find_spec("torch") is not None:
        loader(BATCH)


if __name__ == "__main__":
    if sys.argv[1:] == ["--smoke"]:
        sys.exit(smoke())
    mode = sys.argv[1] if len(sys.argv) > 1 else "cases"
    if mode not in DEFAULTS or len(sys.argv) > 3 or (len(sys.argv) == 3 and not sys.argv[2].isdigit()):
        sys.exit(__doc__.split("\n\n")[1])
    count = int(sys.argv[2]) if len(sys.argv) > 2 else DEFAULTS[mode]
    {"cases": cases, "loader": loader, "memory": memory}[mode](count)
