"""Speed of the transformation engine.

Prints
1. per transformation, kernel applications per second on bank objects (random objects of the
   bank's size range until the bank is built);
2. the scene step: a depth-2 sequence on a 2-object 20x20 scene, validated, in µs per call,
   from Python and from inside Numba (how the generator calls it);
3. the cold compile time of the whole engine (fresh NUMBA_CACHE_DIR) and the warm start time
   of a second process that loads the cache.

In-process figures are CPU time (``time.process_time``), so a busy shared machine slows them
less than wall-clock time would; the compile figures give both.

Run: ``python benchmarks/bench_engine.py`` (``--quick``: fewer objects and scenes; ``--smoke``: a few,
and the warm start only, in seconds: the test suite runs it).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

import numba
import numpy as np

from cogen.engine import TRANSFORMS, pack, run_scene, sequence_tokens
from cogen.engine._kernels import apply_batch

WARM_UP = """
import time
start = time.process_time()
import numpy as np
from cogen.engine import PlacedObject, apply, apply_sequence, render
obj = PlacedObject(2, 2, np.array([[1, 2], [0, 3]], np.int8))
apply("rot90", obj)
apply_sequence(["translate_up", "rot90"], [obj], 10, 10)
render([obj], 10, 10)
print(time.process_time() - start)
"""


def bank_objects(count: int, max_side: int = 15, seed: int = 0) -> tuple[list[np.ndarray], str]:
    """Objects from the bank if it is built, else random tight objects of the same size range."""
    rng = np.random.default_rng(seed)
    try:
        from cogen.bank import load_bank

        bank = load_bank()
        ids = rng.permutation(len(bank))
        grids = [np.asarray(bank.object(int(i)), np.int8) for i in ids]
        grids = [g for g in grids if max(g.shape) <= max_side][:count]
        return grids, f"{len(grids)} bank objects (max side {max_side})"
    except Exception as error:  # the bank is being built by another issue
        grids = []
        while len(grids) < count:
            h, w = rng.integers(1, max_side + 1, size=2)
            grid = np.where(rng.random((h, w)) < rng.uniform(0.3, 1), rng.integers(1, 10, (h, w)), 0)
            rows, cols = np.flatnonzero(grid.any(1)), np.flatnonzero(grid.any(0))
            if rows.size:
                grids.append(grid[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1].astype(np.int8))
        return grids, f"{count} random objects (bank unavailable: {type(error).__name__})"


def per_transform(grids: list[np.ndarray], repeats: int) -> None:
    side = 2 * max(max(g.shape) for g in grids) + 2
    boxes0, pixels0 = pack([(0, 0, g) for g in grids], side * side)
    scratch = np.zeros((side, side), np.int8)
    status = np.zeros(len(grids), np.int64)
    apply_batch(1, boxes0.copy(), pixels0.copy(), scratch, status)  # compile / load
    print(f"{'transformation':34s} {'applications/s':>15s}  {'ns each':>8s}")
    for name, t in TRANSFORMS.items():
        best = float("inf")
        for _ in range(repeats):
            boxes, pixels = boxes0.copy(), pixels0.copy()
            start = time.process_time()
            apply_batch(t.token, boxes, pixels, scratch, status)
            best = min(best, time.process_time() - start)
        print(f"{name:34s} {len(grids) / best:15,.0f}  {best / len(grids) * 1e9:8.0f}")


@numba.njit(cache=False)
def _scene_loop(sequences, boxes0, pixels0, boxes, pixels, grid):
    """Run scene k with sequence k (cycling) for every prepared scene; count accepted ones."""
    accepted = 0
    for k in range(boxes0.shape[0]):
        boxes[:] = boxes0[k]
        pixels[:] = pixels0[k]
        accepted += run_scene(sequences[k % sequences.shape[0]], 20, 20, boxes, pixels, grid) == 0
    return accepted


def scenes(grids: list[np.ndarray], count: int, rng: np.random.Generator):
    """``count`` 20x20 scenes of two small objects placed with a one-cell gap."""
    small = [g for g in grids if max(g.shape) <= 5]
    boxes = np.zeros((count, 2, 4), np.int32)
    pixels = np.zeros((count, 2, 400), np.int8)
    k = 0
    while k < count:
        pair = [small[i] for i in rng.integers(0, len(small), 2)]
        spots = [(int(rng.integers(0, 21 - g.shape[0])), int(rng.integers(0, 21 - g.shape[1]))) for g in pair]
        (r0, c0), (r1, c1) = spots
        (h0, w0), (h1, w1) = pair[0].shape, pair[1].shape
        if r1 > r0 + h0 or r0 > r1 + h1 or c1 > c0 + w0 or c0 > c1 + w1:  # boxes 1 cell apart
            for i, (grid, (r, c)) in enumerate(zip(pair, spots, strict=True)):
                boxes[k, i] = (r, c, *grid.shape)
                pixels[k, i, : grid.size] = grid.ravel()
            k += 1
    return boxes, pixels


def scene_step(grids: list[np.ndarray], count: int) -> None:
    rng = np.random.default_rng(1)
    boxes0, pixels0 = scenes(grids, count, rng)
    boxes, pixels, grid = boxes0[0].copy(), pixels0[0].copy(), np.zeros((20, 20), np.int8)
    paper = sequence_tokens(["translate_up", "rot90"])
    run_scene(paper, 20, 20, boxes, pixels, grid)  # compile or load before timing
    calls = 20000
    start = time.process_time()
    for k in range(calls):
        boxes[:] = boxes0[k % count]
        pixels[:] = pixels0[k % count]
        run_scene(paper, 20, 20, boxes, pixels, grid)
    with_copies = time.process_time() - start
    start = time.process_time()
    for k in range(calls):
        boxes[:] = boxes0[k % count]
        pixels[:] = pixels0[k % count]
    copies = time.process_time() - start
    print(f"scene, Python call of run_scene [translate_up, rot90]: {(with_copies - copies) / calls * 1e6:.2f} µs per call "
          "(Numba dispatch included)")
    names = list(TRANSFORMS)
    mixes = {"[translate_up, rot90]": paper[None, :],
             "random depth-2 from all 28": np.array([[TRANSFORMS[n].token for n in rng.choice(names, 2)]
                                                     for _ in range(997)], np.int64)}
    for label, sequences in mixes.items():
        _scene_loop(sequences, boxes0[:2], pixels0[:2], boxes, pixels, grid)
        best, accepted = float("inf"), 0
        for _ in range(3):
            start = time.process_time()
            accepted = _scene_loop(sequences, boxes0, pixels0, boxes, pixels, grid)
            best = min(best, time.process_time() - start)
        print(f"scene, inside Numba, {label}: {best / count * 1e6:.3f} µs per scene "
              f"({accepted / count:.0%} valid)")


def compile_times(cold: bool = True) -> None:
    """The cold compile (a fresh NUMBA_CACHE_DIR) and the warm start of a second process (without ``cold``:
    the warm start on the project's usual cache)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache) if cold else dict(os.environ)
        labels = ("cold compile (fresh NUMBA_CACHE_DIR)", "warm start (second process)") if cold else \
            ("warm start (the usual cache)",)
        for label in labels:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", WARM_UP], env=env, check=True,
                                 capture_output=True, text=True).stdout
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
            print(f"{label}: import + one call of every entry point {float(out):.2f} s CPU; "
                  f"whole process {cpu:.2f} s CPU, {wall:.2f} s wall")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer objects and scenes")
    parser.add_argument("--smoke", action="store_true", help="a few objects and scenes, no cold compile (seconds)")
    args = parser.parse_args()
    objects, scenes = (200, 200) if args.smoke else (2000, 2000) if args.quick else (25000, 100000)
    grids, source = bank_objects(objects)
    print(f"numba {numba.__version__}, numpy {np.__version__}; {source}\n")
    per_transform(grids, repeats=1 if args.quick or args.smoke else 5)
    print()
    scene_step(grids, scenes)
    print()
    compile_times(cold=not args.smoke)


if __name__ == "__main__":
    main()
