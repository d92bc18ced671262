"""What a command costs before it does anything: CPU seconds of short `cogen` commands, paired.

    python benchmarks/bench_startup.py [--pairs N] [--against TREE]   # the commands below
    python benchmarks/bench_startup.py exit [--pairs N]               # ways to end the process, on the G1 build
    python benchmarks/bench_startup.py light [--pairs N]              # Numba's cache loaded light or as Numba does
    python benchmarks/bench_startup.py pool [--pairs N]               # tiny builds: in the driver or with a pool
    python benchmarks/bench_startup.py fixed [--pairs N]              # a build's fixed costs, in the process
    python benchmarks/bench_startup.py --smoke                        # every mode, one pair (the tests run it)

The commands: ``cogen --version``, ``cogen --help``, ``cogen sample`` (one pair, drawn in the terminal),
``cogen stream -n 1``, ``cogen view`` until it serves (its CPU time read from ``/proc`` when it prints its
address, then it is stopped), and the 520-sample G1 build (``--scale 0.001``, 25 shards) with 1 and 2
workers, each into a new folder. Each runs as ``python -m cogen`` (the console script's entry) in a
fresh process; a figure is the user + system CPU seconds of the process and its workers.

On a shared machine absolute figures drift with the load, so every comparison is paired: with
``--against TREE`` (another checkout of cogen, e.g. ``git worktree add /tmp/main main``) each command
runs under this tree and under TREE in turn (``PYTHONPATH``), alternating which goes first, N times;
the medians of both and the median of the per-pair ratios are printed, with the load average before
and after. ``exit``, ``light`` and ``pool`` pair variants of this tree the same way:

* ``exit``: :func:`cogen.cli.main` ending as Python ends, the console entry (:func:`cogen.cli.entry`:
  ``gc.freeze()`` first), and ``os._exit`` after the ``atexit`` handlers (the alternative not taken);
* ``light``: ``COGEN_NUMBA_LIGHT_LOAD=1`` (the default, :mod:`cogen.jit`) against ``0``;
* ``pool``: G1 builds of 520 to 41,600 rows with 2 workers, run in the driver (below
  :data:`cogen.pipeline.driver.TINY_BUILD_ROWS`) or in a pool (the threshold set to 0), wall seconds too.

``fixed`` times, inside one process, what every build pays whatever its size: reading the spec's YAML,
the dedup plan, the journal's appends (one per shard, each flushed to the disk), the plans, manifests
and inputs record (JSON written atomically), the card's YAML header; CPU seconds per 520-sample G1
build (median of N builds) and the YAML work with libyaml's C code against PyYAML's Python code.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
BUILD = ["build", "--config", "g1", "--scale", "0.001", "--no-progress"]
#: How each variant of ``exit`` ends the process after the command (the code runs ``sys.argv[1:]``).
EXITS = {
    "normal exit": "import sys; from cogen.cli import main; sys.argv[0] = 'cogen'; main()",
    "console entry (gc.freeze)": "import sys; from cogen.cli import entry; sys.argv[0] = 'cogen'; entry()",
    "os._exit after atexit": ("import atexit, os, sys; from cogen.cli import main; sys.argv[0] = 'cogen'\n"
                              "try:\n    main()\n    code = 0\nexcept SystemExit as stop:\n    code = stop.code or 0\n"
                              "atexit._run_exitfuncs(); sys.stdout.flush(); sys.stderr.flush(); os._exit(code)"),
}


def _load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def _env(tree: Path, extra: dict | None = None) -> dict:
    return {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1", **(extra or {})}


def _cpu_of(command: list[str], env: dict, cwd: str) -> float:
    """User + system CPU seconds of ``command`` and the children it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def _view_start_cpu(folder: str, env: dict, cwd: str) -> float:
    """CPU seconds of ``cogen view`` from its start to the line with its address (read from ``/proc``)."""
    command = [sys.executable, "-m", "cogen", "view", folder, "--config", "G1-1", "--no-browser"]
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = process.stdout.readline()
        if not re.search(r"http://127\.0\.0\.1:\d+/", line):
            raise RuntimeError(f"cogen view did not start: {line!r}")
        fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)


def commands(scratch: str, view_folder: str) -> dict:
    """Label -> run(env) -> CPU seconds, for every command this benchmark times."""
    cogen = [sys.executable, "-m", "cogen"]
    count = [0]

    def build(workers: int):
        def run(env: dict) -> float:
            count[0] += 1
            out = f"{scratch}/build-{count[0]}"
            return _cpu_of(cogen + BUILD + ["--workers", str(workers), "--out", out], env, scratch)
        return run

    return {
        "cogen --version": lambda env: _cpu_of(cogen + ["--version"], env, scratch),
        "cogen --help": lambda env: _cpu_of(cogen + ["--help"], env, scratch),
        "cogen sample": lambda env: _cpu_of(cogen + ["sample", "-t", "rot90,translate_up", "--seed", "0"], env, scratch),
        "cogen stream -n 1": lambda env: _cpu_of(cogen + ["stream", "-c", "C1-1", "-n", "1"], env, scratch),
        "cogen view (start)": lambda env: _view_start_cpu(view_folder, env, scratch),
        "g1 520 samples, 1 worker": build(1),
        "g1 520 samples, 2 workers": build(2),
    }


def paired(runs: dict, variants: dict, pairs: int) -> None:
    """Run every command of ``runs`` under every variant (label -> env) in turn, ``pairs`` times, the
    order of the variants rotating; print medians, and the median per-pair ratio to the last variant."""
    names = list(variants)
    print(f"{pairs} rounds, variants in turn: {', '.join(names)}; {_load()}", flush=True)
    for label, run in runs.items():
        figures: dict[str, list[float]] = {name: [] for name in names}
        for round_ in range(pairs):
            order = names[round_ % len(names):] + names[:round_ % len(names)]
            for name in order:
                figures[name].append(run(variants[name]))
        base = figures[names[-1]]
        cells = [f"{name} {statistics.median(figures[name]):.3f}" for name in names]
        ratios = [f"{statistics.median(a / b for a, b in zip(figures[name], base, strict=True)):.2f}"
                  for name in names[:-1]]
        print(f"{label:28s} CPU s, median: {'; '.join(cells)}" + (f"; ratio to {names[-1]}: {', '.join(ratios)}"
                                                                 if ratios else ""), flush=True)
    print(_load(), flush=True)


def _view_folder(scratch: str) -> str:
    folder = f"{scratch}/view-data"
    subprocess.run([sys.executable, "-m", "cogen", *BUILD, "--workers", "1", "--out", folder], env=_env(HERE),
                   cwd=scratch, check=True, stdout=subprocess.DEVNULL)
    return folder


def main_commands(pairs: int, against: Path | None, only: list[str] | None = None) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        runs = commands(scratch, _view_folder(scratch))
        runs = {k: v for k, v in runs.items() if not only or k in only}
        variants = {"this tree": _env(HERE)}
        if against is not None:
            variants[f"{against}"] = _env(against.resolve())
        paired(runs, variants, pairs)


def exits(pairs: int, workers: tuple[int, ...] = (1,)) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        count = [0]

        def run_with(code: str, workers: int):
            def run(env: dict) -> float:
                count[0] += 1
                argv = BUILD + ["--workers", str(workers), "--out", f"{scratch}/exit-{count[0]}"]
                return _cpu_of([sys.executable, "-c", code, *argv], env, scratch)
            return run

        for n in workers:
            runs = {f"g1 520 samples, {n} worker{'s' if n > 1 else ''}, {name}": run_with(code, n)
                    for name, code in EXITS.items()}
            print(f"ways to end the process ({n} worker{'s' if n > 1 else ''}); each line its own variant, "
                  "run in turn with the others:")
            _interleaved(runs, pairs)


def _interleaved(runs: dict, pairs: int) -> None:
    """Medians of ``runs`` (label -> run(env)), run in turn ``pairs`` times on this tree."""
    figures: dict[str, list[float]] = {label: [] for label in runs}
    print(_load(), flush=True)
    labels = list(runs)
    for round_ in range(pairs):
        for label in labels[round_ % len(labels):] + labels[:round_ % len(labels)]:
            figures[label].append(runs[label](_env(HERE)))
    base = figures[labels[0]]
    for label in labels:
        ratio = statistics.median(a / b for a, b in zip(figures[label], base, strict=True))
        print(f"  {label:60s} CPU s, median {statistics.median(figures[label]):.3f} (ratio to the first {ratio:.2f})")
    print(_load(), flush=True)


def light(pairs: int, only: list[str] | None = None) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        runs = {k: v for k, v in commands(scratch, "").items() if k.startswith("g1") or k == "cogen sample"}
        runs = {k: v for k, v in runs.items() if not only or k in only}
        paired(runs, {"light load": _env(HERE, {"COGEN_NUMBA_LIGHT_LOAD": "1"}),
                      "Numba's load": _env(HERE, {"COGEN_NUMBA_LIGHT_LOAD": "0"})}, pairs)


POOLED = ("import sys; import cogen.pipeline.driver as driver; driver.TINY_BUILD_ROWS = 0\n"
          "from cogen.cli import entry; sys.argv[0] = 'cogen'; entry()")
IN_DRIVER = ("import sys; import cogen.pipeline.driver as driver; driver.TINY_BUILD_ROWS = 10 ** 12\n"
             "from cogen.cli import entry; sys.argv[0] = 'cogen'; entry()")


def pool(pairs: int, scales: tuple[float, ...] = (0.001, 0.005, 0.01, 0.02, 0.04, 0.08)) -> None:
    """G1 builds with 2 workers, in the driver or with a pool of 2: CPU and wall seconds, medians."""
    with tempfile.TemporaryDirectory() as scratch:
        count = [0]
        print(f"G1, 2 workers: the build in the driver or with a pool ({pairs} rounds, in turn); {_load()}")
        for scale in scales:
            figures: dict[str, list[tuple[float, float]]] = {"in the driver": [], "pool of 2": []}
            for round_ in range(pairs):
                order = list(figures) if round_ % 2 == 0 else list(reversed(figures))
                for name in order:
                    count[0] += 1
                    code = IN_DRIVER if name == "in the driver" else POOLED
                    argv = ["build", "--config", "g1", "--scale", str(scale), "--workers", "2", "--no-progress",
                            "--out", f"{scratch}/pool-{count[0]}"]
                    start = time.perf_counter()
                    cpu = _cpu_of([sys.executable, "-c", code, *argv], _env(HERE), scratch)
                    figures[name].append((cpu, time.perf_counter() - start))
            cells = [f"{name}: {statistics.median(c for c, _ in v):.2f} CPU s, {statistics.median(w for _, w in v):.2f} s"
                     for name, v in figures.items()]
            print(f"  {round(520_000 * scale):>7,} rows  " + "; ".join(cells), flush=True)
        print(_load(), flush=True)


def fixed(pairs: int) -> None:
    """CPU seconds of a build's fixed costs (see the module docstring), measured by wrapping the functions."""
    from collections import Counter

    import cogen.card.card as card
    import cogen.families.cogitao.build as cogitao
    import cogen.pipeline.driver as driver
    import cogen.specs._yaml as spec_yaml
    from cogen._resources import packaged_specs
    from cogen.folder import read_manifests
    from cogen.pipeline import build

    spent: dict[str, list[float]] = {}
    calls: Counter = Counter()
    wrapped = {"spec YAML (compose)": (spec_yaml, "compose"), "dedup plan": (cogitao, "plan_retries"),
               "journal appends (fsync each)": (driver, "append_journal"),
               "plans + manifests (JSON, atomic)": (driver, "write_json_atomic"),
               "inputs record (JSON, atomic)": (driver, "write_record"), "card header (YAML)": (card, "header_yaml")}
    this_build: Counter = Counter()

    def timing(label: str, function):
        def timed(*args, **kwargs):
            start = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                this_build[label] += time.process_time() - start
                calls[label] += 1
        return timed

    originals = {label: getattr(module, name) for label, (module, name) in wrapped.items()}
    for label, (module, name) in wrapped.items():
        setattr(module, name, timing(label, originals[label]))
    try:
        with tempfile.TemporaryDirectory() as scratch:
            build("g1", f"{scratch}/warm", scale=0.001, workers=1)
            calls.clear()
            totals = []
            for round_ in range(pairs):
                this_build.clear()
                start = time.process_time()
                build("g1", f"{scratch}/g1-{round_}", scale=0.001, workers=1)
                totals.append(time.process_time() - start)
                for label in wrapped:
                    spent.setdefault(label, []).append(this_build[label])
            header = card.card_header(read_manifests(Path(f"{scratch}/g1-0")))
    finally:
        for label, (module, name) in wrapped.items():
            setattr(module, name, originals[label])
    print(f"a 520-sample G1 build in this process (25 shards; median of {pairs}): "
          f"{statistics.median(totals):.3f} CPU s in all; {_load()}")
    for label in wrapped:
        print(f"  {label:34s} {statistics.median(spent[label]) * 1000:7.2f} CPU ms ({calls[label] // pairs} calls)")
    _yaml_pairs(packaged_specs()["g1"].read_text(encoding="utf-8"), header, pairs)


def _yaml_pairs(text: str, header: dict, pairs: int) -> None:
    import yaml

    def best(work, repeat: int = 50) -> float:
        runs = []
        for _ in range(max(3, pairs)):
            start = time.process_time()
            for _ in range(repeat):
                work()
            runs.append((time.process_time() - start) / repeat)
        return statistics.median(runs)

    options = {"sort_keys": False, "allow_unicode": True, "width": 120}
    for label, python, c in (
            ("g1.yaml composed", lambda: yaml.compose(text, Loader=yaml.SafeLoader),
             lambda: yaml.compose(text, Loader=yaml.CSafeLoader)),
            ("a card header written", lambda: yaml.dump(header, Dumper=yaml.SafeDumper, **options),
             lambda: yaml.dump(header, Dumper=yaml.CSafeDumper, **options))):
        print(f"  {label:34s} PyYAML's Python code {best(python) * 1000:6.2f} CPU ms, libyaml's C code "
              f"{best(c) * 1000:6.2f} CPU ms")


def main() -> None:
    if sys.argv[1:] == ["--smoke"]:
        main_commands(1, None)
        exits(1)
        light(1, only=["cogen sample"])
        pool(1, scales=(0.001,))
        fixed(1)
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", nargs="?", default="commands", choices=("commands", "exit", "light", "pool", "fixed"))
    parser.add_argument("--pairs", type=int, default=9)
    parser.add_argument("--against", type=Path, help="another checkout of cogen to pair with (commands)")
    args = parser.parse_args()
    if args.mode == "commands":
        main_commands(args.pairs, args.against)
    elif args.mode == "exit":
        exits(args.pairs, (1, 2))
    elif args.mode == "light":
        light(args.pairs)
    elif args.mode == "fixed":
        fixed(args.pairs)
    else:
        pool(args.pairs)


if __name__ == "__main__":
    main()
