"""`cogen verify`: how long it takes, and whether a flipped byte ever gets through.

    python benchmarks/bench_verify.py time FOLDER [R]       # verify, then verify --full, R runs each
    python benchmarks/bench_verify.py flips FOLDER [N] [S]  # N flipped bytes (seed S) in a validation shard
    python benchmarks/bench_verify.py levels FOLDER [W] [R] # `cogen build` into FOLDER, then every verify level
    python benchmarks/bench_verify.py paired FOLDER BASE [P] [W]  # default level: BASE's cogen vs this one, P pairs
    python benchmarks/bench_verify.py --smoke               # every mode on a tiny build (checks the script runs)

``time`` runs each verification in a fresh process and prints the seconds of the ``verify`` call
(interpreter start excluded) and the process's peak RSS. For the issue-18 numbers, FOLDER is the
default build (``cogen build``, no flags: the five C1 configs, 520k rows).

``levels`` builds the default C1 suite (``cogen build``: five configs of 104,000 rows) into FOLDER
(which must not exist) with W workers, then runs each level of ``cogen verify`` R times in a fresh
process: *hashes* (card, files, footers, SHA-256 of every byte), *decode* (the default: every
row group decoded, the family's checks, outputs re-derived on a sample, two shards regenerated),
*replay* (``--full``: every row's outputs re-derived) and *regenerate* (``--regenerate``, W
workers: every shard and the object bank rebuilt and compared). It prints wall seconds, CPU
seconds (the process and its workers) and peak RSS, beside the build's, best of R.

``paired`` compares the default level of two cogen trees (issue 36): BASE is another checkout of
cogen (its ``cogen/`` is imported through ``PYTHONPATH``, e.g. ``git archive main | tar -x -C BASE``).
Each tree builds the default C1 suite into a folder of its own under FOLDER (which must not exist;
W workers, CPU seconds of the build and its workers), then P pairs of ``cogen verify`` (the default
level, each run in a fresh process) alternate which tree goes first. It prints each pair's CPU
seconds, then the medians and their ratio to each tree's build.

``flips`` repeats the experiment of issue 18: copy one config of FOLDER (``--config``-like first
config, the whole config: its shards, manifest and preview, with a card written by ``cogen
card``), then, one offset at a time, flip one byte of its validation shard, run ``cogen verify``
and ``cogen push --dry-run`` as a user would, and restore the byte. A flip is *caught* when both
commands exit 1, both name the shard, and neither prints a traceback. Offsets are drawn uniformly
over the file with NumPy's generator seeded with S. Prints one line per offset, then "N of N caught".
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TERMINAL_WIDTH": "400", "COLUMNS": "400"}


def _timed_child(folder: str, full: bool) -> None:
    from cogen.pipeline.verify import failed, verify

    start = time.perf_counter()
    checks = verify(folder, full=full)
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": round(seconds, 1), "peak_rss_mb": round(peak_mb), "checks": len(checks),
                      "failed": len(failed(checks))}))


def timing(folder: Path, repeat: int) -> None:
    rows = sum(info["rows"] for path in (folder / "manifests").glob("*.json")
               for info in json.loads(path.read_text())["splits"].values())
    print(f"{folder}: {rows:,} rows")
    for full in (False, True):
        for _ in range(repeat):
            out = subprocess.run([sys.executable, __file__, "_time", str(folder), str(int(full))], env=ENV,
                                 capture_output=True, text=True, check=True)
            row = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"verify{' --full' if full else '       '}: {row['seconds']:6.1f} s, peak RSS {row['peak_rss_mb']} MB, "
                  f"{row['checks']} checks, {row['failed']} failed ({rows / row['seconds']:,.0f} rows/s)")


LEVELS = ("hashes", "decode", "replay", "regenerate")


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its finished children (a pool's workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _hashes_only(folder: Path) -> list:
    """The checks every level starts with: card, files and footers, SHA-256 of every byte."""
    from cogen.folder import folder_manifests
    from cogen.pipeline import verify as verify_module

    manifests = folder_manifests(folder)
    checks = [verify_module._card_check(folder, manifests)]
    for manifest in manifests.values():
        checks += [verify_module._file_checks(folder, manifest)[0], verify_module._hash_check(folder, manifest)[0]]
    return checks


def _level_child(folder: str, level: str, workers: int) -> None:
    from cogen.pipeline.verify import failed, verify

    start, cpu = time.perf_counter(), _cpu_seconds()
    if level == "hashes":
        checks = _hashes_only(Path(folder))
    else:
        checks = verify(folder, full=level == "replay", regenerate=level == "regenerate", workers=workers)
    print(json.dumps({"seconds": round(time.perf_counter() - start, 1), "cpu": round(_cpu_seconds() - cpu, 1),
                      "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                      "worker_peak_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
                      "checks": len(checks), "failed": len(failed(checks))}))


def levels(folder: Path, workers: int, repeat: int) -> None:
    if folder.exists():
        sys.exit(f"{folder} exists: levels builds into a new folder")
    before, started = _cpu_seconds(), time.perf_counter()
    subprocess.run([sys.executable, "-m", "cogen", "build", "--out", str(folder), "--workers", str(workers),
                    "--no-progress"], env=ENV, check=True, capture_output=True)
    built = (time.perf_counter() - started, _cpu_seconds() - before)
    print(f"cogen build (c1, 520,000 rows, {workers} workers): {built[0]:6.1f} s wall, {built[1]:6.1f} CPU s")
    for level in LEVELS:
        runs = []
        for _ in range(repeat):
            out = subprocess.run([sys.executable, __file__, "_level", str(folder), level, str(workers)], env=ENV,
                                 capture_output=True, text=True, check=True)
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        row = min(runs, key=lambda r: r["cpu"])
        print(f"{level:>10}: {row['seconds']:6.1f} s wall, {row['cpu']:6.1f} CPU s ({row['cpu'] / built[1]:.2f} x the "
              f"build), peak RSS {row['peak_rss_mb']} MB (a worker {row['worker_peak_mb']} MB), {row['checks']} checks, "
              f"{row['failed']} failed")


def _build_with(tree: Path | None, folder: Path, workers: int, spec: list[str]) -> float:
    """CPU seconds of ``cogen build`` (default: the C1 suite) into ``folder`` with the cogen of ``tree``."""
    before = _cpu_seconds()
    subprocess.run([sys.executable, "-m", "cogen", "build", *spec, "--out", str(folder), "--workers", str(workers),
                    "--no-progress"], env=_env(tree), check=True, capture_output=True)
    return _cpu_seconds() - before


def _env(tree: Path | None) -> dict[str, str]:
    return {**ENV, "PYTHONPATH": str(tree)} if tree is not None else ENV


def _default_level(tree: Path | None, folder: Path, workers: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "_level", str(folder), "decode", str(workers)], env=_env(tree),
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def paired(folder: Path, base: Path, pairs: int, workers: int, spec: list[str] | None = None) -> None:
    import statistics

    if folder.exists():
        sys.exit(f"{folder} exists: paired builds into a new folder")
    folder.mkdir(parents=True)
    trees = {"base": base.resolve(), "this": Path(__file__).resolve().parents[1]}
    built = {name: _build_with(tree, folder / name, workers, spec or []) for name, tree in trees.items()}
    print(f"load {os.getloadavg()[0]:.1f}; cogen build {' '.join(spec or ['(c1, 520,000 rows)'])}, {workers} workers: "
          + ", ".join(f"{name} {cpu:.1f} CPU s" for name, cpu in built.items()))
    runs: dict[str, list[float]] = {name: [] for name in trees}
    for number in range(pairs):
        order = list(trees) if number % 2 == 0 else list(trees)[::-1]
        row = {name: _default_level(trees[name], folder / name, workers) for name in order}
        for name in trees:
            runs[name].append(row[name]["cpu"])
        print(f"pair {number + 1}: " + ", ".join(f"{name} {row[name]['cpu']:.1f} CPU s ({row[name]['checks']} checks, "
                                                 f"{row[name]['failed']} failed)" for name in order), flush=True)
    for name in trees:
        median = statistics.median(runs[name])
        print(f"{name:>4}: median {median:.1f} CPU s over {pairs} runs ({min(runs[name]):.1f}-{max(runs[name]):.1f}), "
              f"{median / built[name]:.2f} x its build's {built[name]:.1f} CPU s")


def smoke() -> None:
    """Every mode on a tiny build, once: the numbers mean nothing, the script must run."""
    tiny = ["--config", "c1", "--scale", "0.002", "--only", "C1-1"]
    with tempfile.TemporaryDirectory(prefix="bench-verify-smoke-") as scratch:
        scratch = Path(scratch)
        _build_with(None, scratch / "built", 1, tiny)
        timing(scratch / "built", 1)
        flips(scratch / "built", 2, 18)
        paired(scratch / "paired", Path(__file__).resolve().parents[1], 1, 1, tiny)
        for level in LEVELS:
            row = json.loads(subprocess.run([sys.executable, __file__, "_level", str(scratch / "built"), level, "1"],
                                            env=ENV, capture_output=True, text=True, check=True).stdout.splitlines()[-1])
            print(f"{level}: {row['cpu']} CPU s, {row['checks']} checks, {row['failed']} failed")


def _one_config(folder: Path, scratch: Path) -> tuple[Path, str]:
    """A copy of the first config of ``folder`` with its own card; returns (copy, validation shard)."""
    manifest_file = sorted((folder / "manifests").glob("*.json"))[0]
    manifest = json.loads(manifest_file.read_text())
    config = manifest["config"]
    copy = scratch / "one"
    shutil.copytree(folder / "data" / config, copy / "data" / config)
    (copy / "manifests").mkdir()
    shutil.copy(manifest_file, copy / "manifests")
    if (folder / "previews" / f"{config}.png").is_file():
        (copy / "previews").mkdir()
        shutil.copy(folder / "previews" / f"{config}.png", copy / "previews")
    subprocess.run([sys.executable, "-m", "cogen", "card", str(copy), "--no-previews"], env=ENV, check=True,
                   capture_output=True)
    return copy, manifest["splits"]["validation"]["files"][0]


def _cogen(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cogen", *args], env=ENV, capture_output=True, text=True)


def flips(folder: Path, count: int, seed: int) -> None:
    import numpy as np

    with tempfile.TemporaryDirectory() as scratch:
        copy, shard = _one_config(folder, Path(scratch))
        path = copy / shard
        original = path.read_bytes()
        offsets = sorted(np.random.default_rng(seed).choice(len(original), count, replace=False).tolist())
        print(f"{shard}: {len(original):,} bytes; {count} offsets, seed {seed}")
        caught = 0
        for offset in offsets:
            path.write_bytes(original[:offset] + bytes([original[offset] ^ 0xFF]) + original[offset + 1:])
            started = time.perf_counter()
            verify = _cogen("verify", str(copy), "--no-progress")
            push = _cogen("push", str(copy), "--repo", "org/bench", "--dry-run")
            seconds = time.perf_counter() - started
            named = shard in " ".join(verify.stdout.split()) and shard in push.stderr
            clean = "Traceback" not in verify.stderr + push.stderr
            ok = verify.returncode == 1 and push.returncode == 1 and named and clean
            caught += ok
            failing = [line.split("│")[2].strip() for line in verify.stdout.splitlines()
                       if "FAILED" in line and line.count("│") > 3]
            print(f"offset {offset:>7}: {'caught' if ok else 'MISSED'} (verify {verify.returncode}, push "
                  f"{push.returncode}; failed: {', '.join(failing) or '-'}; {seconds:.1f} s)")
        path.write_bytes(original)
        print(f"{caught} of {count} caught")


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "time" and len(sys.argv) > 2:
        timing(Path(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 2)
    elif mode == "flips" and len(sys.argv) > 2:
        flips(Path(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 30, int(sys.argv[4]) if len(sys.argv) > 4 else 18)
    elif mode == "_time":
        _timed_child(sys.argv[2], sys.argv[3] == "1")
    elif mode == "levels" and len(sys.argv) > 2:
        levels(Path(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 2, int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    elif mode == "_level":
        _level_child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif mode == "paired" and len(sys.argv) > 3:
        paired(Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 5,
               int(sys.argv[5]) if len(sys.argv) > 5 else 2)
    elif mode == "--smoke":
        smoke()
    else:
        sys.exit(__doc__)
