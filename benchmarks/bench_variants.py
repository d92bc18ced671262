"""Sequential COGITAO and COGITAO-RGB against the plain build of the same spec: samples/s, bytes per sample.

    python benchmarks/bench_variants.py [N]     # C1-1 (train), N samples (default 20,000), one process
    python benchmarks/bench_variants.py --smoke # N = 300 (seconds; the tests run it)

Measures, each the best of 3 runs: the sampler alone (``generate_rows`` with and without frames,
CPU seconds of the process); ``cogen build`` end to end, plain, sequential and RGB (128x128 PNG),
in CPU seconds of the process and its workers, with Parquet bytes per sample; and rendering alone (both grids of a sample drawn
and encoded, PNG and JPEG, CPU seconds). The bars: the sequential build keeps at least 55 % of
the plain build's samples/s (it writes 2.5x the grid cells), and both builds encode about as many
grid cells per CPU-second (within 20 %); rendering at 128x128 reaches 2,000 samples/s per core.
The floor line re-encodes the sequential build's ``frames`` column alone with the shard writer
(``bench_build.grid_encoding_cpu``): the least a sequential build costs on top of the plain one.
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from bench_build import _is_grid, grid_encoding_cpu

C1 = Path(__file__).resolve().parents[1] / "split_specs" / "c1.yaml"


def _spec(folder: Path, n: int, variant: str) -> Path:
    text = Path(C1).read_text().replace("sizes: {train: 100000, validation: 1000, test: 1000, validation_ood: 1000, "
                                        "test_ood: 1000}",
                                        f"sizes: {{train: {n}, validation: 1, test: 1, validation_ood: 1, test_ood: 1}}")
    extra = {"plain": "", "frames": "output: {frames: true}\n", "rgb": "render: {size: 128}\n"}[variant]
    text = text.replace("variant: paper-text\n", "variant: paper-text\n" + extra)
    path = folder / f"c1_{variant}.yaml"
    path.write_text(text)
    return path


def sampler(n: int) -> dict[str, float]:
    from cogen.families.cogitao.generate.sampler import SplitJob, generate_rows
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


def _cpu() -> float:
    """CPU seconds of this process and its finished children (steadier than wall time on a shared machine)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def build_rate(n: int) -> dict[str, tuple[float, float]]:
    from cogen.pipeline import build

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for variant in ("plain", "frames", "rgb"):
            spec = _spec(root, n, variant)
            best = float("inf")
            for run in range(3):
                folder = root / f"out{variant}{run}"
                start = _cpu()
                build(spec, folder, workers=1, only=["C1-1"])
                best = min(best, _cpu() - start)
            files = sorted((folder / "data").glob("**/train-*.parquet"))
            out[variant] = (n / best, sum(p.stat().st_size for p in files) / n)
            out[f"{variant} cells"] = (grid_cells(files) / best, 0.0)
            if variant == "frames":
                out["frames column"] = (grid_encoding_cpu(files, only=("frames",)), 0.0)
    return out


def grid_cells(files: list[Path]) -> int:
    """Grid cells stored in ``files``: every leaf value of their ``list<list<int8>>`` columns, frames included."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    total = 0
    for path in files:
        table = pq.read_table(path)
        for field in table.schema:
            if _is_grid(field.type):
                column = table.column(field.name)
                while hasattr(column.type, "value_type"):
                    column = pc.list_flatten(column)
                total += len(column)
    return total


def render_rate(n: int) -> dict[str, tuple[float, float]]:
    from cogen.families.cogitao.generate.sampler import SplitJob, generate_rows
    from cogen.render import RenderSettings, encode_grids
    from cogen.specs import load_spec

    experiment = load_spec("c1").experiment("C1-1")
    rows = generate_rows(SplitJob.of(experiment.domain("train"), 1, "C1-1", "train"), np.arange(n))
    sizes = rows["sizes"].astype(np.int64)
    out = {}
    for fmt in ("png", "jpeg"):
        settings = RenderSettings(size=128, format=fmt)
        best, size = float("inf"), 0
        for _ in range(3):
            start = time.process_time()
            images = encode_grids(rows["inputs"], sizes, settings) + encode_grids(rows["outputs"], sizes, settings)
            best = min(best, time.process_time() - start)
            size = sum(map(len, images))
        out[fmt] = (n / best, size / n)
    return out


def main() -> None:
    n = 300 if sys.argv[1:] == ["--smoke"] else int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    if sys.argv[2:] == ["build"]:  # the build measure alone
        print(build_rate(n))
        return
    rates = sampler(n)
    print(f"sampler, C1-1 train, {n} samples (CPU s): plain {rates['plain']:,.0f}/s, frames {rates['frames']:,.0f}/s "
          f"({rates['frames'] / rates['plain']:.0%} of plain)")
    for fmt, (rate, size) in render_rate(min(n, 5_000)).items():
        print(f"render, 128x128 {fmt}, input + output (CPU s): {rate:,.0f} samples/s per core, {size:,.0f} B/sample "
              "(bar: 2,000/s)")
    builds = build_rate(n)
    (plain, plain_bytes), (seq, seq_bytes), (rgb, rgb_bytes) = builds["plain"], builds["frames"], builds["rgb"]
    print(f"build, C1-1, {n} train samples, 1 worker (CPU s): plain {plain:,.0f}/s, {plain_bytes:.0f} B/sample; "
          f"sequential {seq:,.0f}/s, {seq_bytes:.0f} B/sample ({seq / plain:.0%} of plain; bar: 55 %); "
          f"RGB 128x128 PNG {rgb:,.0f}/s, {rgb_bytes:.0f} B/sample")
    plain_cells, seq_cells = builds["plain cells"][0], builds["frames cells"][0]
    print(f"grid cells encoded per CPU-second: plain {plain_cells / 1e6:.1f} M, sequential {seq_cells / 1e6:.1f} M "
          f"({seq_cells / plain_cells:.0%} of plain; bar: within 20 %)")
    frames_cpu = builds["frames column"][0]
    print(f"floor: encoding the frames column alone takes {frames_cpu:.2f} CPU s for {n} samples, "
          f"{frames_cpu * plain / n:.0%} of the whole plain build; a sequential build, which writes every plain "
          f"column too, can keep about {1 / (1 + frames_cpu * plain / n):.0%} of the plain build's samples/s at "
          "most while frames are list<list<list<int8>>> (a re-encoding with the shard writer, as noisy as the build "
          "figures)")


if __name__ == "__main__":
    main()
