"""`cogen verify`: how long it takes, and whether a flipped byte ever gets through.

    python benchmarks/bench_verify.py time FOLDER [R]       # verify, then verify --full, R runs each
    python benchmarks/bench_verify.py flips FOLDER [N] [S]  # N flipped bytes (seed S) in a validation shard
    python benchmarks/bench_verify.py levels FOLDER [W] [R] # `cogen build` into FOLDER, then every verify level
    python benchmarks/bench_verify.py --smoke               # all three on C1 at scale 0.001 (seconds; the tests run it)

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


def levels(folder: Path, workers: int, repeat: int, scale: float = 1.0) -> None:
    if folder.exists():
        sys.exit(f"{folder} exists: levels builds into a new folder")
    before, started = _cpu_seconds(), time.perf_counter()
    subprocess.run([sys.executable, "-m", "cogen", "build", "--out", str(folder), "--workers", str(workers),
                    "--scale", str(scale), "--no-progress"], env=ENV, check=True, capture_output=True)
    built = (time.perf_counter() - started, _cpu_seconds() - before)
    print(f"cogen build (c1, {round(520_000 * scale):,} rows, {workers} workers): {built[0]:6.1f} s wall, "
          f"{built[1]:6.1f} CPU s")
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


def smoke() -> None:
    """Every mode on the C1 suite at scale 0.001 (520 rows), one run each."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "c1"
        levels(folder, 1, 1, scale=0.001)
        timing(folder, 1)
        flips(folder, 2, 18)


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if sys.argv[1:] == ["--smoke"]:
        smoke()
    elif mode == "time" and len(sys.argv) > 2:
        timing(Path(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 2)
    elif mode == "flips" and len(sys.argv) > 2:
        flips(Path(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 30, int(sys.argv[4]) if len(sys.argv) > 4 else 18)
    elif mode == "_time":
        _timed_child(sys.argv[2], sys.argv[3] == "1")
    elif mode == "levels" and len(sys.argv) > 2:
        levels(Path(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 2, int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    elif mode == "_level":
        _level_child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit(__doc__)
