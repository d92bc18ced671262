"""The object bank: build time (cold and warm Numba cache), load time in a fresh process, file
sizes, and the experiment pool sizes next to the reference bank's.

Run: ``python benchmarks/bench_bank.py`` (``--quick`` skips the cold build; ``--smoke`` also times each
fresh process once, in seconds: the test suite runs it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

_BUILD = """
import time
t = time.perf_counter()
from cogen.bank import build_bank, write_bank
write_bank(build_bank(), {out!r})
print(time.perf_counter() - t)
"""

_LOAD = """
import time
import numpy
t = time.perf_counter()
from cogen.bank import load_bank
bank = load_bank()
ids = bank.select({"is_shape_fully_connected": True, "rows": (1, 5), "cols": (1, 5)})
bank.pack(ids)
print(time.perf_counter() - t)
"""

_LOAD_WITH_NUMPY = _LOAD.replace("import time\nimport numpy\nt = time.perf_counter()", "import time\nt = time.perf_counter()\nimport numpy")

_ARROW = """
import time
t = time.perf_counter()
import pyarrow.feather
table = pyarrow.feather.read_table({path!r})
print(time.perf_counter() - t)
"""


def _seconds(code: str, env: dict | None = None) -> float:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            env={**os.environ, **(env or {})})
    return float(result.stdout.split()[-1])


#: Fresh processes per figure (``--smoke``: 1).
RUNS = [7]


def _median(code: str) -> float:
    return statistics.median(_seconds(code) for _ in range(RUNS[0]))


def _build_times(quick: bool) -> None:
    """Cold: a fresh NUMBA_CACHE_DIR, so every kernel compiles; warm: the same cache again
    (with --quick, the project's usual cache)."""
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
        env = {} if quick else {"NUMBA_CACHE_DIR": cache}
        if not quick:
            print(f"build, cold Numba cache (compiles): {_seconds(_BUILD.format(out=out), env):6.2f} s")
        print(f"build, warm Numba cache:            {_seconds(_BUILD.format(out=out), env):6.2f} s")


def _sizes_and_pools() -> None:
    from cogen._resources import objects_dir
    from cogen.bank import POOLS, load_bank, pool_sizes

    bank = load_bank()
    manifest = json.loads((objects_dir() / "manifest.json").read_text())
    print(f"\n{len(bank):,} objects, sha256 {bank.sha256}")
    for name, entry in manifest["files"].items():
        print(f"  {name:<18} {entry['bytes'] / 1e6:6.2f} MB")
    print(f"\n{'pool':<20} {'cogen':>7} {'reference':>10}")
    for name, size in pool_sizes(bank).items():
        print(f"{name:<20} {size:>7,} {POOLS[name].reference:>10,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the cold build")
    parser.add_argument("--smoke", action="store_true", help="--quick, and one fresh process per figure")
    args = parser.parse_args()
    if args.smoke:
        RUNS[0] = 1
    _build_times(args.quick or args.smoke)
    from cogen._resources import objects_dir

    print(f"load bank + table + one query, fresh process (numpy already imported): {_median(_LOAD) * 1000:6.1f} ms")
    print(f"the same, counting `import numpy`:                                     "
          f"{_median(_LOAD_WITH_NUMPY) * 1000:6.1f} ms")
    arrow = str(objects_dir() / "properties.arrow")
    print(f"pyarrow.feather.read_table(properties.arrow), fresh process:           "
          f"{_median(_ARROW.format(path=arrow)) * 1000:6.1f} ms")
    _sizes_and_pools()


if __name__ == "__main__":
    main()
