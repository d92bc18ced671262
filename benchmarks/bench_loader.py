"""Loader throughput of every torch path over one built split: samples/s per epoch, batch 64.

    python benchmarks/bench_loader.py [FOLDER CONFIG]   # default: builds C1-1 at scale 0.02 in a temp folder
    python benchmarks/bench_loader.py memory FOLDER CONFIG
    python benchmarks/bench_loader.py --smoke           # both on C1-1 at scale 0.002 (seconds; the tests run it)

``memory``: peak RSS of ``load_configs(FOLDER, [CONFIG])`` and of the same call with
``columns="cogitao-release"`` (int64 grids, converted a batch at a time), each in a fresh process
with an empty ``datasets`` cache; the view must stay within 2x of the plain load.

Paths: the documented one (`cogen.io.GridDataset` + its `loader`), `split_arrays` into a
`TensorDataset` (the issue's reference: about 135,000 samples/s), and the old
`DataLoader(dataset, collate_fn=Collate(...))` over a `datasets` split (about 3,400 samples/s).
The documented path must be within 2x of the TensorDataset one. Decoding is timed apart.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

BATCH, SIZE = 64, 30


def _rate(loader, rows: int, epochs: int = 3) -> tuple[float, int]:
    """Best samples/s over ``epochs`` and how many warnings the loading raised."""
    best = float("inf")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(epochs):
            start = time.perf_counter()
            for _batch in loader:
                pass
            best = min(best, time.perf_counter() - start)
    return rows / best, len(caught)


def main(folder: Path, config: str) -> None:
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    from cogen.io import Collate, GridDataset, load_split, split_arrays

    start = time.perf_counter()
    data = GridDataset(folder, config, split="train", size=SIZE)
    decode = time.perf_counter() - start
    rows = len(data)
    arrays = split_arrays(folder, config, split="train", size=SIZE)
    tensors = TensorDataset(*(torch.from_numpy(arrays[k].copy()) for k in ("input", "output", "tokens")))
    split = load_split(str(folder), config, "train")
    results = {
        "GridDataset.loader (documented)": _rate(data.loader(batch_size=BATCH, shuffle=True, seed=0), rows),
        "split_arrays -> TensorDataset": _rate(DataLoader(tensors, batch_size=BATCH, shuffle=True), rows),
        "DataLoader(Dataset, collate_fn=Collate) (old)": _rate(
            DataLoader(split, batch_size=BATCH, shuffle=True, collate_fn=Collate(size=SIZE)), rows, epochs=1),
    }
    documented = next(iter(data.loader(batch_size=BATCH)))
    print(f"{config}: {rows:,} training rows, {SIZE}x{SIZE} padding, batch {BATCH}; GridDataset decode {decode:.2f} s")
    for name, (rate, warned) in results.items():
        print(f"  {name:48s} {rate:>12,.0f} samples/s   {warned} warnings")
    ratio = results["split_arrays -> TensorDataset"][0] / results["GridDataset.loader (documented)"][0]
    print(f"  TensorDataset / documented: {ratio:.2f}x (target: at most 2x)")
    print(f"  documented batch dtypes: {', '.join(f'{k} {v.dtype}' for k, v in documented.items())}")


_LOAD = """
import resource, sys, time
from cogen.io import load_configs
start = time.perf_counter()
loaded = load_configs(sys.argv[1], [sys.argv[2]], columns=sys.argv[3])[sys.argv[2]]
rows = sum(split.num_rows for split in loaded.values())
print(rows, time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def _load_memory(folder: Path, config: str, columns: str) -> tuple[int, float, float]:
    """Rows, seconds and peak RSS (MB) of one ``load_configs`` call in a fresh process and ``datasets`` cache."""
    with tempfile.TemporaryDirectory() as cache:
        environment = {**os.environ, "HF_DATASETS_CACHE": cache, "HF_HUB_OFFLINE": "1"}
        result = subprocess.run([sys.executable, "-c", _LOAD, str(folder), config, columns], env=environment,
                                capture_output=True, text=True, check=True)
    rows, seconds, peak = result.stdout.split()[-3:]
    return int(rows), float(seconds), float(peak)


def memory(folder: Path, config: str) -> None:
    """Peak RSS of load_configs as built and under the cogitao-release view (see the module docstring)."""
    peaks = {}
    for columns in ("cogen", "cogitao-release"):
        rows, seconds, peaks[columns] = _load_memory(folder, config, columns)
        print(f"load_configs({config}, columns={columns!r}): {rows:,} rows, {seconds:.1f} s, "
              f"peak RSS {peaks[columns]:,.0f} MB")
    print(f"  cogitao-release / plain: {peaks['cogitao-release'] / peaks['cogen']:.2f}x (target: at most 2x)")


if __name__ == "__main__":
    if sys.argv[1:] == ["--smoke"]:
        from cogen.pipeline import build

        with tempfile.TemporaryDirectory() as scratch:
            build("c1", Path(scratch), scale=0.002, workers=1, only=["C1-1"])
            main(Path(scratch), "C1-1")
            memory(Path(scratch), "C1-1")
    elif len(sys.argv) == 4 and sys.argv[1] == "memory":
        memory(Path(sys.argv[2]), sys.argv[3])
    elif len(sys.argv) == 3:
        main(Path(sys.argv[1]), sys.argv[2])
    else:
        from cogen.pipeline import build

        with tempfile.TemporaryDirectory() as scratch:
            build("c1", Path(scratch), scale=0.02, workers=1, only=["C1-1"])
            main(Path(scratch), "C1-1")
