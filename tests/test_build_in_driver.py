"""Tiny builds run in the driver's process, and an in-process build keeps its key pass's rows in memory:
the same bytes as a pooled build that writes them to its scratch folder (:mod:`cogen.pipeline.driver`,
:mod:`cogen.pipeline.memory_scratch`)."""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import pytest
from folder_digests import digests

from cogen.families.cogitao import build as cogitao_build
from cogen.pipeline import build, driver, memory_scratch

#: A domain so small that most shards repeat a key of their own: their rows are kept for the second pass.
SPEC = """\
setting: S
seed: 3
defaults:
  grid: {height: [4, 5], width: [4, 5]}
  objects: {count: [1, 1], where: {rows: [1, 1], cols: [1, 2]}}
  sizes: {train: 240, validation: 20, test: 20}
experiments:
  T-1:
    in_domain: {sequences: [[translate_up]]}
"""


@pytest.fixture
def watched(monkeypatch):
    """Records the workers of every executor the driver makes and the rows held in memory; leaves each
    build's scratch folder in place, to show which rows went there."""
    seen = {"workers": [], "held": 0}
    make = driver.make_executor

    @contextmanager
    def recording(kind, workers, *args, **kwargs):
        seen["workers"].append(workers)
        with make(kind, workers, *args, **kwargs) as pool:
            yield pool

    hold = memory_scratch.keep_in_memory

    def holding(path, value, nbytes):
        kept = hold(path, value, nbytes)
        seen["held"] += kept
        return kept

    monkeypatch.setattr(driver, "make_executor", recording)
    monkeypatch.setattr(driver, "available_cores", lambda: 2)
    monkeypatch.setattr(driver, "_remove_scratch", lambda scratch: None)
    monkeypatch.setattr(cogitao_build, "keep_in_memory", holding)
    return seen


def _saved(folder) -> int:
    """Shards whose key-pass rows went to the build's scratch folder."""
    return len(list((folder / ".cogen" / "scratch" / "cogitao-rows").glob("*")))


def test_a_tiny_build_runs_in_the_driver_with_the_bytes_of_a_pooled_build(tmp_path, monkeypatch, watched):
    spec = tmp_path / "tiny.yaml"
    spec.write_text(SPEC)
    build(spec, tmp_path / "driver", workers=2, rows_per_shard=60)
    held = watched["held"]
    assert watched["workers"] == [1] and held >= 1 and _saved(tmp_path / "driver") == 0
    monkeypatch.setattr(driver, "TINY_BUILD_ROWS", 0)
    build(spec, tmp_path / "pool", workers=2, rows_per_shard=60)
    assert watched["workers"] == [1, 2] and _saved(tmp_path / "pool") == held  # workers share the disk, not memory
    monkeypatch.setattr(driver, "HELD_BYTES", 1)
    build(spec, tmp_path / "bounded", workers=1, rows_per_shard=60)
    assert watched["workers"][-1] == 1 and _saved(tmp_path / "bounded") == held  # past the bound: written as before
    assert digests(tmp_path / "driver") == digests(tmp_path / "pool") == digests(tmp_path / "bounded")
    assert len(digests(tmp_path / "driver")) == 6


def test_builds_of_threshold_rows_get_their_pool():
    class Rows:
        def __init__(self, rows):
            self.count = rows

        def rows(self):
            return self.count

    job = driver._Build(None, "", {}, {}, 50_000, 4, "local", {}, None, None)
    assert driver._pool_workers(Rows(driver.TINY_BUILD_ROWS - 1), job) == 1
    assert driver._pool_workers(Rows(driver.TINY_BUILD_ROWS), job) == 4
    job.executor = "dask"  # a cluster is asked for on purpose
    assert driver._pool_workers(Rows(10), job) == 4


def test_rows_are_held_only_inside_holding_and_within_its_bound():
    rows = {"ok": np.ones(10, bool)}
    assert not memory_scratch.keep_in_memory("/s/a", rows, 10)  # outside holding(): the family writes its file
    with memory_scratch.holding(25):
        assert memory_scratch.keep_in_memory("/s/a", rows, 10) and memory_scratch.keep_in_memory("/s/b", rows, 15)
        assert not memory_scratch.keep_in_memory("/s/c", rows, 1)  # 25 bytes held: no room left
        assert memory_scratch.kept_in_memory("/s/a") is rows and memory_scratch.kept_in_memory("/s/c") is None
    assert memory_scratch.kept_in_memory("/s/a") is None  # forgotten when the build ends
    assert not memory_scratch.keep_in_memory("/s/a", rows, 1)


def test_the_workers_help_names_the_threshold():
    import inspect

    from cogen.cli import build as cli_build

    help_text = " ".join(inspect.getsource(cli_build.build).split())
    assert f"fewer than {driver.TINY_BUILD_ROWS:,} rows runs in one process" in help_text.replace('" "', "")
