"""Throughput of `cogen build` end to end (sampling, dedup plan, Parquet), beside the reference.

    python benchmarks/bench_build.py cases [N]      # cases A, C, D, E of cogitao_reference §8.3, one process
    python benchmarks/bench_build.py writer [N]     # Parquet writers on case A's rows: CPU time, bytes
    python benchmarks/bench_build.py startup        # fixed cost of a build: 520-sample G1 with 1 and 2 workers
    python benchmarks/bench_build.py carc [SCALE]   # carc, every config, against sampling its pool once; peak RSS
    python benchmarks/bench_build.py memory         # peak RSS of a 10k and a 1M-sample build (one process)
    python benchmarks/bench_build.py suite [W]      # the paper suite c1-c3, g1-g5 at full size, W workers
    python benchmarks/bench_build.py --smoke        # every mode on tiny sizes (seconds; the tests run it)

Reference figures (public COGITAO code, single process, same kind of machine): A 114 samples/s,
C 210/s, D 22/s, E 52/s; the reference needs hours for the suite. `cases` prints samples per
wall second and per CPU second of the process (the second is steadier on a shared machine), the
bare sampler's rate (``generate_rows`` on the same indices) beside it, and the CPU seconds of each
build stage (:mod:`cogen.pipeline.stages`: the encoders' stage counts polars' encoding threads, the
others the thread that runs them; ``other`` is the rest of the process's CPU time).

``floor`` is the least the build can cost, in units of the bare sampler, while grids are stored as
``list<list<int8>>``: sampling plus re-encoding the grid columns alone with the shard writer
(:func:`cogen.pipeline.parquet.write_parquet`; Parquet has no 8-bit type, so each cell is a
4-byte INT32 with repetition levels). No build of this format can beat it. ``format 2`` is the
same floor with the previous writer (pyarrow with content-defined chunking).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REFERENCE = {"A": 114, "C": 210, "D": 22, "E": 52}
FC5 = "is_shape_fully_connected: true, rows: [1, 5], cols: [1, 5]"
CASES = {
    "A": ("20x20, 2 objects <=5x5, translate_up then rot90", 20, "[2, 2]", "[[translate_up, rot90]]"),
    "C": ("G1-1 train: 15x15, 1-2 objects, translate_up", 15, "[1, 2]", "[[translate_up]]"),
    "D": ("G1-5 test: 15x15, 3-4 objects, extend_contours_same_color", 15, "[3, 4]", "[[extend_contours_same_color]]"),
    "E": ("20x20, 4 objects <=5x5, translate_up then rot90", 20, "[4, 4]", "[[translate_up, rot90]]"),
}


def case_spec(case: str, n: int) -> str:
    _, side, count, sequences = CASES[case]
    return f"""setting: bench
seed: 1
defaults:
  grid: {{height: [{side}, {side}], width: [{side}, {side}]}}
  objects: {{count: {count}, where: {{{FC5}}}}}
  sizes: {{train: {n}, validation: 1, test: 1}}
experiments:
  {case}:
    in_domain: {{sequences: {sequences}}}
"""


def raw_rate(spec: Path, n: int) -> float:
    """Samples per CPU-second of the bare sampler (``generate_rows``, row group by row group) on ``spec``'s train split."""
    import numpy as np

    from cogen.families.cogitao.generate.sampler import generate_rows
    from cogen.pipeline.driver import builder_for
    from cogen.pipeline.parquet import ROW_GROUP_ROWS
    from cogen.specs import load_spec

    builder = builder_for(load_spec(spec))
    job = builder.job(builder.setting.experiments[0], "train")
    cpu = time.process_time()
    for start in range(0, n, ROW_GROUP_ROWS):
        generate_rows(job, np.arange(start, min(start + ROW_GROUP_ROWS, n)))
    return n / (time.process_time() - cpu)


def _is_grid(kind) -> bool:
    """True for ``list<list<int8>>`` nested at any depth (grids, lists of grids, frames)."""
    import pyarrow as pa

    depth = 0
    while pa.types.is_list(kind) or pa.types.is_large_list(kind):
        kind, depth = kind.value_type, depth + 1
    return depth >= 2 and kind == pa.int8()


def grid_encoding_cpu(files: list[Path], writer: str = "polars", only: tuple[str, ...] = (), runs: int = 3) -> float:
    """CPU seconds to encode only the grid columns of ``files`` (or those named in ``only``) with the
    shard writer: ``writer`` is ``polars`` or ``pyarrow`` (the encoder forced), or ``pyarrow-cdc``
    (format 2's writer); the best of ``runs``; reading is not counted: the part of a build no
    change of code can remove."""
    import io

    import pyarrow.parquet as pq

    from cogen.pipeline import parquet

    inputs = []
    for path in files:
        source = pq.ParquetFile(path)
        columns = [f.name for f in source.schema_arrow if _is_grid(f.type) and (not only or f.name in only)]
        groups = [source.read_row_group(i, columns=columns) for i in range(source.num_row_groups)]
        inputs.append((source.schema_arrow.empty_table().select(columns).schema, groups))
    saved, best = parquet.POLARS_MIN_ROWS, float("inf")
    parquet.POLARS_MIN_ROWS = 1 if writer == "polars" else 10 ** 12
    try:
        for _ in range(runs):
            cpu = time.process_time()
            for schema, groups in inputs:
                parquet.write_parquet(io.BytesIO(), schema, iter(groups), {}, cdc=writer == "pyarrow-cdc")
            best = min(best, time.process_time() - cpu)
    finally:
        parquet.POLARS_MIN_ROWS = saved
    return best


def run_case(case: str, n: int) -> dict:
    from cogen.pipeline import build, stages
    from cogen.pipeline.parquet import POLARS_MIN_ROWS

    with tempfile.TemporaryDirectory() as folder:
        spec = Path(folder) / "spec.yaml"
        spec.write_text(case_spec(case, POLARS_MIN_ROWS + 200))
        build(spec, Path(folder) / "warm", workers=1)  # load the kernels and the shard writer once
        spec.write_text(case_spec(case, n))
        raw = raw_rate(spec, n)
        stages.reset()
        start, cpu = time.perf_counter(), time.process_time()
        report = build(spec, Path(folder) / "out", workers=1, rows_per_shard=n + 2)
        seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
        breakdown = stages.totals()  # before the floors below, which encode too
        size = sum(p.stat().st_size for p in (Path(folder) / "out").glob("data/**/*.parquet"))
        files = sorted((Path(folder) / "out").glob("data/*/train-*.parquet"))
        grids, grids_old = grid_encoding_cpu(files), grid_encoding_cpu(files, "pyarrow-cdc")
    stats = report.configs[0].stats["train"]
    attempts = sum(v for k, v in stats.items() if k != "regenerated")
    breakdown["other"] = cpu_seconds - sum(breakdown.values())
    return {"case": case, "samples": n, "seconds": round(seconds, 2), "samples_per_s": round(n / seconds),
            "samples_per_cpu_s": round(n / cpu_seconds), "raw_per_cpu_s": round(raw),
            "ratio": round(raw * cpu_seconds / n, 2), "stages": breakdown,
            "floor": round(1 + grids * raw / n, 2), "floor_format_2": round(1 + grids_old * raw / n, 2),
            "reference": REFERENCE[case], "speedup": round(n / seconds / REFERENCE[case]),
            "attempts_per_sample": round(attempts / n, 2), "bytes_per_sample": round(size / n)}


def cases(n: int) -> None:
    rows = []
    print(f"{'case':5} {'what':58} {'samples/s':>10} {'per CPU-s':>10} {'raw/CPU-s':>10} {'x sampler':>9} "
          f"{'floor':>6} {'reference':>9} {'speedup':>8} {'attempts':>8}")
    for case in CASES:
        row = run_case(case, n)
        rows.append(row)
        print(f"{case:5} {CASES[case][0]:58} {row['samples_per_s']:>10} {row['samples_per_cpu_s']:>10} "
              f"{row['raw_per_cpu_s']:>10} {row['ratio']:>8}x {row['floor']:>5}x {row['reference']:>9} {row['speedup']:>7}x "
              f"{row['attempts_per_sample']:>8}")
    print(f"\nCPU seconds per stage ({n} samples; x sampler = the build's CPU time over the bare sampler's for the same samples):")
    names = list(rows[0]["stages"])
    print(f"{'case':5} " + " ".join(f"{name:>16}" for name in names))
    for row in rows:
        print(f"{row['case']:5} " + " ".join(f"{row['stages'][name]:>16.3f}" for name in names))
    print("\nfloor = (sampler + encoding the grid columns alone with the shard writer) / sampler: the least any "
          "build of list<list<int8>> grids costs; with format 2's writer (pyarrow, content-defined chunking) it was "
          + ", ".join(f"{row['case']} {row['floor_format_2']}x" for row in rows) + ".")


def _case_tables(case: str, n: int) -> list:
    """Case ``case``'s first ``n`` train rows as the build makes them, one table per row group."""
    import numpy as np

    from cogen.families.cogitao.build import _table
    from cogen.families.cogitao.generate.sampler import generate_rows
    from cogen.folder import arrow_schema
    from cogen.pipeline.driver import builder_for
    from cogen.pipeline.parquet import ROW_GROUP_ROWS
    from cogen.specs import load_spec

    with tempfile.TemporaryDirectory() as folder:
        spec = Path(folder) / "spec.yaml"
        spec.write_text(case_spec(case, n))
        builder = builder_for(load_spec(spec))
    experiment = builder.setting.experiments[0]
    task = builder._tasks(experiment, "bench", None)[0]
    job = builder.job(experiment, "train")
    schema = arrow_schema(dict(task.columns)).remove_metadata()
    return [_table(task, s, generate_rows(job, np.arange(s, min(s + ROW_GROUP_ROWS, n)))).cast(schema)
            for s in range(0, n, ROW_GROUP_ROWS)]


def _library_writers() -> dict:
    """Parquet writers to compare: name -> write(tables) -> bytes. duckdb and arro3 only when installed."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from cogen.pipeline import parquet

    def shard_writer(encoder: str, cdc: bool = False):
        def write(tables) -> bytes:
            saved = parquet.POLARS_MIN_ROWS
            parquet.POLARS_MIN_ROWS = 1 if encoder == "polars" else 10 ** 12
            try:
                sink = io.BytesIO()
                parquet.write_parquet(sink, tables[0].schema, iter(tables), {}, cdc=cdc)
                return sink.getvalue()
            finally:
                parquet.POLARS_MIN_ROWS = saved
        return write

    def pyarrow_options(**changes):
        def write(tables) -> bytes:
            sink = io.BytesIO()
            with pq.ParquetWriter(sink, tables[0].schema, **{**parquet.writer_options(), "write_page_index": True,
                                                              **changes}) as out:
                for table in tables:
                    out.write_table(table, row_group_size=parquet.ROW_GROUP_ROWS)
            return sink.getvalue()
        return write

    writers = {"pyarrow, content-defined chunking (format 2)": shard_writer("pyarrow", cdc=True),
               "pyarrow (small shards, --parquet-cdc off)": shard_writer("pyarrow"),
               "pyarrow, zstd 3 + dictionaries": pyarrow_options(compression_level=3, use_dictionary=True),
               "polars (the shard writer, format 3)": shard_writer("polars")}
    try:
        import duckdb

        def duck(tables) -> bytes:
            with tempfile.TemporaryDirectory() as folder:
                target, frame = Path(folder) / "x.parquet", pa.concat_tables(tables)  # noqa: F841 (read by duckdb)
                duckdb.connect().execute(f"COPY (SELECT * FROM frame) TO '{target}' (FORMAT parquet, COMPRESSION "
                                         "zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 10000)")
                return target.read_bytes()
        writers["duckdb COPY (zstd 1, its own dictionaries)"] = duck
    except ImportError:
        pass
    try:
        from arro3.io import write_parquet as arro3_write

        def arro3(tables) -> bytes:
            sink = io.BytesIO()
            arro3_write(pa.concat_tables(tables), sink, compression="zstd(1)", max_row_group_size=10_000,
                        dictionary_enabled=False)
            return sink.getvalue()
        writers["arro3-io (arrow-rs), no dictionaries"] = arro3
    except ImportError:
        pass
    return writers


def writer(n: int) -> None:
    """Parquet writers on case A's rows (all columns): CPU seconds (all threads) and bytes, best of 3.

    How the shard writer was chosen (:mod:`cogen.pipeline.parquet`): install ``duckdb`` and
    ``arro3-io`` to see them too."""
    tables = _case_tables("A", n)
    print(f"{'writer, case A, ' + str(n) + ' rows':50} {'CPU ms':>8} {'bytes/row':>10}")
    for name, write in _library_writers().items():
        best, size = float("inf"), 0
        for _ in range(3):
            cpu = time.process_time()
            size = len(write(tables))
            best = min(best, time.process_time() - cpu)
        print(f"{name:50} {best * 1000:>8.0f} {size / n:>10.1f}")


def _child_cpu(command: list[str]) -> float:
    """User + system CPU seconds of ``command`` and its children (what ``/usr/bin/time`` reports)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def startup(runs: int = 3, big: float = 0.1) -> None:
    """The fixed cost of a build: ``cogen build --config g1 --scale 0.001`` (520 samples, 25 shards)
    with 1 and 2 workers, CPU seconds of the whole process tree, best of 3; then the rate of a
    52,000-sample G1 build (``big``) with 2 workers, start-up included, against the reference's 210
    samples/s. (``benchmarks/bench_startup.py`` pairs these with another checkout.)"""
    cogen = [sys.executable, "-m", "cogen", "build", "--config", "g1", "--force", "--no-progress"]
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run(cogen + ["--scale", "0.001", "--out", f"{folder}/warm"], check=True, capture_output=True)
        for workers in (1, 2):
            best = min(_child_cpu(cogen + ["--scale", "0.001", "--workers", str(workers), "--out",
                                           f"{folder}/w{workers}-{i}"]) for i in range(runs))  # a new folder each time
            print(f"g1, 520 samples, {workers} worker{'s' if workers > 1 else ''}: {best:.2f} CPU s (user + sys)")
        wall, cpu = float("inf"), float("inf")
        for i in range(runs):
            start = time.perf_counter()
            cpu = min(cpu, _child_cpu(cogen + ["--scale", str(big), "--workers", "2", "--out", f"{folder}/big{i}"]))
            wall = min(wall, time.perf_counter() - start)
    samples = round(520_000 * big)
    rate = samples / wall
    print(f"g1, {samples:,} samples, 2 workers: {wall:.2f} s wall, {rate:,.0f} samples/s = {rate / 210:.0f}x the "
          f"reference's 210/s (best of {runs}, start-up included); {cpu:.2f} CPU s, so {samples / cpu * 2:,.0f} "
          f"samples/s = {samples / cpu * 2 / 210:.0f}x on two idle cores")


def _peak_rss_child(n: int) -> None:
    from cogen.pipeline import build

    with tempfile.TemporaryDirectory() as folder:
        spec = Path(folder) / "spec.yaml"
        spec.write_text(case_spec("A", n))
        start = time.perf_counter()
        build(spec, Path(folder) / "out", workers=1)
        seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"samples": n, "seconds": round(seconds, 1), "peak_rss_mb": round(peak_mb)}))


def memory(sizes: tuple[int, ...] = (10_000, 1_000_000)) -> None:
    for n in sizes:
        out = subprocess.run([sys.executable, __file__, "_rss", str(n)], capture_output=True, text=True, check=True)
        row = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"case A, {row['samples']:>9} samples: peak RSS {row['peak_rss_mb']} MB ({row['seconds']} s)")


def _carc_child(scale: float) -> None:
    import numpy as np

    from cogen.pipeline import build, stages
    from cogen.pipeline.driver import builder_for
    from cogen.pipeline.parquet import ROW_GROUP_ROWS
    from cogen.specs import load_spec

    setting = load_spec("carc").scaled(scale)
    sampler, episodes = builder_for(setting).sampler, setting.episodes
    sampler.generate(np.arange(8)).require_ok()  # compile / load the Numba cache
    cpu = time.process_time()
    for start in range(0, episodes, ROW_GROUP_ROWS):
        sampler.generate(np.arange(start, min(start + ROW_GROUP_ROWS, episodes))).require_ok()
    sampling = time.process_time() - cpu
    with tempfile.TemporaryDirectory() as folder:
        stages.reset()
        start, cpu = time.perf_counter(), time.process_time()
        report = build("carc", Path(folder) / "out", scale=scale, workers=1)
        seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        spent = stages.totals()  # before the floor below, which encodes too
        grids = grid_encoding_cpu(sorted((Path(folder) / "out").glob("data/*/*.parquet")), runs=1)
    rows = sum(sum(c.rows.values()) for c in report.configs)
    print(json.dumps({"episodes": episodes, "rows": rows, "sampling_cpu_s": round(sampling, 2),
                      "build_cpu_s": round(cpu_seconds, 2), "build_s": round(seconds, 1),
                      "stages": {k: round(v, 2) for k, v in spent.items()}, "peak_rss_mb": round(peak_mb),
                      "grid_encoding_cpu_s": round(grids, 2)}))


def carc(scale: float) -> None:
    """`cogen build --config carc` (every config) against one sampling pass of its episode pool, one process."""
    out = subprocess.run([sys.executable, __file__, "_carc", str(scale)], capture_output=True, text=True, check=True)
    row = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"carc at scale {scale}: {row['episodes']} episodes sampled in {row['sampling_cpu_s']} CPU s; the build "
          f"writes {row['rows']} rows in {row['build_cpu_s']} CPU s ({row['build_s']} s wall), "
          f"{row['build_cpu_s'] / max(row['sampling_cpu_s'], 1e-9):.1f}x sampling; peak RSS {row['peak_rss_mb']} MB")
    print("CPU seconds per stage: " + ", ".join(f"{k} {v}" for k, v in row["stages"].items() if v))
    floor = (row["sampling_cpu_s"] + row["grid_encoding_cpu_s"]) / max(row["sampling_cpu_s"], 1e-9)
    print(f"floor: encoding the grid columns alone takes {row['grid_encoding_cpu_s']} CPU s, so no build of "
          f"list<list<int8>> grids can go below {floor:.1f}x sampling")


def suite(workers: int, scale: float = 1.0) -> None:
    from cogen.pipeline import build

    total_rows, start = 0, time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        for name in ("c1", "c2", "c3", "g1", "g2", "g3", "g4", "g5"):
            t = time.perf_counter()
            report = build(name, Path(folder) / name, scale=scale, workers=workers)  # a folder holds one build
            rows = sum(sum(c.rows.values()) for c in report.configs)
            total_rows += rows
            print(f"{name}: {rows} samples in {time.perf_counter() - t:.1f} s")
    seconds = time.perf_counter() - start
    print(f"paper suite: {total_rows} samples in {seconds:.1f} s with {workers} workers "
          f"({total_rows / seconds:.0f} samples/s)")


def smoke() -> None:
    """Every mode on tiny sizes, one run each (the cases are floors and stages too)."""
    from cogen.pipeline.parquet import POLARS_MIN_ROWS

    cases(POLARS_MIN_ROWS + 500)
    writer(2_000)
    startup(runs=1, big=0.002)
    carc(0.0005)
    memory((2_000,))
    suite(1, scale=0.0005)


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "cases"
    if mode == "--smoke":
        smoke()
    elif mode == "cases":
        cases(int(sys.argv[2]) if len(sys.argv) > 2 else 100_000)
    elif mode == "writer":
        writer(int(sys.argv[2]) if len(sys.argv) > 2 else 50_000)
    elif mode == "startup":
        startup()
    elif mode == "carc":
        carc(float(sys.argv[2]) if len(sys.argv) > 2 else 1.0)
    elif mode == "_carc":
        _carc_child(float(sys.argv[2]))
    elif mode == "memory":
        memory()
    elif mode == "_rss":
        _peak_rss_child(int(sys.argv[2]))
    elif mode == "suite":
        suite(int(sys.argv[2]) if len(sys.argv) > 2 else 2)
    else:
        sys.exit(__doc__)
