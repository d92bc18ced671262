"""Compiled kernels and the same kernels run as plain Python (NUMBA_DISABLE_JIT=1) agree."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import oracle
import pytest
from test_engine_oracle import kernel_results
from test_engine_scene import random_scene

from cogen.engine import TRANSFORMS, pack, run_scene, sequence_tokens


def digest(objects: int = 400, scenes: int = 400) -> str:
    """SHA-256 over every transformation on random objects and over random scenes."""
    sha = hashlib.sha256()
    rng = np.random.default_rng(5)
    grids = oracle.EDGE_CASES + [oracle.random_object(rng, max_side=8) for _ in range(objects)]
    anchors = rng.integers(-9, 10, size=(len(grids), 2))
    for t in TRANSFORMS.values():
        for result in kernel_results(t.token, grids, anchors):
            sha.update(b"-" if result is None else repr((result[0], result[1], result[2].tolist())).encode())
    for _ in range(scenes):
        names, objects, height, width = random_scene(rng)
        boxes, pixels = pack(objects, height * width)
        grid = np.zeros((height, width), dtype=np.int8)
        status = run_scene(sequence_tokens(names), height, width, boxes, pixels, grid)
        sha.update(bytes([status]) + boxes.tobytes() + pixels.tobytes() + grid.tobytes())
    return sha.hexdigest()


@pytest.mark.slow
def test_jit_and_pure_python_agree():
    tests = Path(__file__).resolve().parent
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    code = (f"import sys; sys.path.insert(0, {str(tests)!r}); import numba, test_engine_jit as t; "
            "print(numba.config.DISABLE_JIT, t.digest())")
    python = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                            check=True)
    assert python.stdout.split() == ["1", digest()]
