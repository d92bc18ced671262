"""A seeded fuzzer of spec files: mutants of the packaged specs give a spec or one clear error, never a
traceback or a hang, and an accepted spec never names a config that is not a name (issue 26, items 1, 4, 5).

The suite runs a few hundred mutants; run more on demand, or feed mutants to ``cogen build``::

    python tests/test_spec_fuzz.py --count 10000 --seed 7
    python tests/test_spec_fuzz.py --count 200 --build 40      # also build 40 accepted mutants (--scale 0.001)
"""

from __future__ import annotations

import argparse
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from cogen._resources import packaged_specs
from cogen.errors import CogenError
from cogen.folder.names import name_problem
from cogen.specs import parse_spec_text

#: Seconds one mutant may take to parse before it counts as a hang.
PARSE_LIMIT = 20
ODD_VALUES = [-1, 0, 1, 61, 10**12, 2**63, 2**64, float("nan"), float("inf"), "", "../x", "/tmp/abs", "a/b", "x" * 5000,
              [], {}, [5, -5], [1], None, True, "C1-1", {"a": 1}, 1.5, "é☃", [[[]]], "rot90", {7: True}]
TEXT_INSERTS = ["x: &a [1, 2]\n", "y: *a\n", "<<: *a\n", "x: &x [*x]\n", "k: !!python/name:os.system\n", "---\n",
                "%YAML 1.1\n", "\tkey: 1\n", "a: &b {c: 1}\nd: {<<: *b}\n", "?\n", "- [\n", "n: 1e400\n"]


class Hang(Exception):
    """A mutant took longer than :data:`PARSE_LIMIT` to parse."""


@contextmanager
def time_limit(seconds: int):
    def stop(signum, frame):
        raise Hang()

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _nodes(value, path=()):
    """Every (path, value) of a parsed document."""
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _nodes(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _nodes(item, (*path, i))


def _parent(doc, path):
    for key in path[:-1]:
        doc = doc[key]
    return doc


def _tree_mutation(rng: random.Random, doc) -> None:
    path, value = rng.choice([p for p in _nodes(doc) if p[0]])
    parent, key = _parent(doc, path), path[-1]
    kind = rng.choice(["replace", "replace", "delete", "rename", "add", "wrap", "unwrap", "scale", "duplicate",
                       "empty"])
    if kind == "replace":
        parent[key] = rng.choice(ODD_VALUES)
    elif kind == "delete":
        del parent[key]
    elif kind == "rename" and isinstance(parent, dict):
        parent[rng.choice([7, "../key", str(key).upper(), "", None, "C1-1"])] = parent.pop(key)
    elif kind == "add" and isinstance(parent, dict):
        parent[rng.choice(["extra", "seed", "family", "T-1", "where"])] = rng.choice(ODD_VALUES)
    elif kind == "wrap":
        parent[key] = [value]
    elif kind == "unwrap" and isinstance(value, list) and value:
        parent[key] = value[0]
    elif kind == "scale" and isinstance(value, (int, float)) and not isinstance(value, bool):
        parent[key] = value * rng.choice([0, -1, 1000, 10**6])
    elif kind == "duplicate" and isinstance(parent, list):
        parent.append(value)
    elif kind == "empty":
        parent[key] = type(value)() if isinstance(value, (list, dict, str)) else None


def _text_mutation(rng: random.Random, text: str) -> str:
    lines = text.splitlines(keepends=True) or ["\n"]
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    kind = rng.choice(["delete", "duplicate", "swap", "flip", "insert", "insert", "indent", "truncate", "number"])
    if kind == "delete":
        del lines[i]
    elif kind == "duplicate":
        lines.insert(j, lines[i])
    elif kind == "swap":
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "flip" and lines[i]:
        k = rng.randrange(len(lines[i]))
        lines[i] = lines[i][:k] + chr(rng.choice([0, 9, 32, 35, 38, 42, 45, 58, 91, 93, 123, 0x441])) + lines[i][k + 1:]
    elif kind == "insert":
        lines.insert(i, " " * rng.choice([0, 2, 4]) + rng.choice(TEXT_INSERTS))
    elif kind == "indent":
        lines[i] = "  " + lines[i]
    elif kind == "truncate":
        return "".join(lines)[: rng.randrange(len(text) + 1)]
    elif kind == "number":
        import re

        lines[i] = re.sub(r"\d+", str(rng.choice([0, -1, 10**12, 10**20, 61])), lines[i], count=1)
    return "".join(lines)


#: The fast (libyaml) loader and dumper where PyYAML has them, for making mutants (cogen reads them its own way).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def mutant(rng: random.Random, sources: list[str]) -> str:
    """One mutant of a packaged spec: 1-3 tree mutations (60 %) or one text mutation."""
    text = rng.choice(sources)
    if rng.random() < 0.6:
        doc = yaml.load(text, Loader=_LOADER)
        for _ in range(rng.randint(1, 3)):
            try:
                _tree_mutation(rng, doc)
            except (IndexError, KeyError, TypeError, ValueError):
                continue
        return yaml.dump(doc, Dumper=_DUMPER, sort_keys=False, allow_unicode=True)
    return _text_mutation(rng, text)


def outcome(text: str) -> tuple[str, str]:
    """``("accepted" | "error" | "traceback" | "hang", detail)`` of parsing ``text``."""
    try:
        with time_limit(PARSE_LIMIT):
            setting = parse_spec_text(text, "mutant.yaml")
    except CogenError as error:
        return "error", str(error).splitlines()[0]
    except Hang:
        return "hang", ""
    except Exception as error:  # noqa: BLE001 - what the fuzzer hunts: anything the CLI would print as a traceback
        return "traceback", f"{type(error).__name__}: {error}"[:300]
    bad = [c.name for c in setting.configs if name_problem(c.name) is not None]
    return ("traceback", f"accepted bad config names {bad}") if bad else ("accepted", "")


def sources() -> list[str]:
    return [path.read_text(encoding="utf-8") for _, path in sorted(packaged_specs().items())]


def fuzz(seed: int, count: int) -> tuple[Counter, list[tuple[str, str]], list[str]]:
    """Parse ``count`` mutants; returns the outcome counts, the failures, and the accepted mutants."""
    rng, texts = random.Random(seed), sources()
    counts, failures, accepted = Counter(), [], []
    for _ in range(count):
        text = mutant(rng, texts)
        kind, detail = outcome(text)
        counts[kind] += 1
        if kind in ("traceback", "hang"):
            failures.append((detail, text))
        elif kind == "accepted":
            accepted.append(text)
    return counts, failures, accepted


def test_three_hundred_mutants_give_a_spec_or_one_clear_error():
    counts, failures, _ = fuzz(seed=2026, count=300)
    assert not failures, failures[:3]
    assert counts["accepted"] > 20 and counts["error"] > 100  # the mutations reach both sides


LAUGHS = "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
    f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi", strict=True))
HOSTILE = {  # the review's reproducers: each one line, at once (no traceback, no gigabytes, no hang)
    "alias bomb": (LAUGHS, "more than 100,000 values once its aliases"),
    "alias inside itself": ("x: &x [*x]\n", "an alias refers to the value that contains it"),
    "deep list": ("[" * 100_000 + "]" * 100_000, "nested more than 50 levels deep"),
    "deep mapping": ("".join("  " * i + "a:\n" for i in range(5_000)), "nested more than 50 levels deep"),
    "family as a list": ("family: [cogitao]\n", "expected a family name, got a list"),
    "a number as a where key": (None, "unknown"),
    "impossible date": ("seed: 2024-99-99\n", "cannot read the value '2024-99-99'"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_each_hostile_spec_gives_one_line_at_once(case):
    text, message = HOSTILE[case]
    if text is None:  # a packaged spec whose object filter gets a key that is a number
        text = packaged_specs()["c1"].read_text().replace("is_shape_fully_connected: true", "7: true", 1)
    started = time.process_time()
    kind, detail = outcome(text)
    assert (kind, message in detail) == ("error", True), (kind, detail)
    assert time.process_time() - started < 10


def build_mutants(texts: list[str], limit: float = 120) -> Counter:
    """Run ``cogen build --scale 0.001`` on each mutant; count exit codes, tracebacks and timeouts."""
    counts: Counter = Counter()
    with tempfile.TemporaryDirectory(prefix="cogen-fuzz-") as root:
        for i, text in enumerate(texts):
            spec = Path(root) / f"m{i}.yaml"
            spec.write_text(text, encoding="utf-8")
            command = [sys.executable, "-m", "cogen", "build", "--config", str(spec), "--scale", "0.001",
                       "--workers", "1", "--out", str(Path(root) / f"out{i}"), "--no-progress"]
            try:
                done = subprocess.run(command, capture_output=True, text=True, timeout=limit)
            except subprocess.TimeoutExpired:
                counts["hang"] += 1
                continue
            counts[f"exit {done.returncode}"] += 1
            if "Traceback" in done.stderr:
                counts["traceback"] += 1
                print(done.stderr[-2000:], file=sys.stderr)
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--build", type=int, default=0, help="also build this many accepted mutants")
    args = parser.parse_args()
    started = time.perf_counter()
    counts, failures, accepted = fuzz(args.seed, args.count)
    print(f"{args.count} mutants (seed {args.seed}) in {time.perf_counter() - started:.1f} s: {dict(counts)}")
    for detail, _ in failures[:10]:
        print("FAILURE:", detail)
    if args.build:
        print("builds:", dict(build_mutants(accepted[: args.build])))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
