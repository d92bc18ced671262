"""What a build pays before its first sample: only the libraries it uses, workers that start loaded.

``pa.array`` imports pandas and ``datasets`` costs a CPU-second to import, so a build imports
neither (the card's ``dataset_info`` is serialised as ``datasets`` would, checked against it); a
small build does not import polars either (its shards go to pyarrow). Local workers are forked
after the kernels load where that is safe.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
import yaml

from cogen.card.card import dataset_info
from cogen.folder import hf_features_dict, read_manifests
from cogen.pipeline import build, stages
from cogen.pipeline.arrow import numpy_array, string_array
from cogen.pipeline.executors import start_method

TINY = """\
setting: S
seed: 4
defaults:
  grid: {height: [6, 8], width: [6, 8]}
  objects: {count: [1, 2], where: {is_shape_fully_connected: true, rows: [1, 3], cols: [1, 3]}}
  sizes: {train: 60, validation: 5, test: 5, validation_ood: 4, test_ood: 4}
experiments:
  S-2:
    in_domain: {sequences: [[translate_up], [rot90]]}
    out_of_domain: {sequences: [[rot90, translate_up]]}
  S-1:
    in_domain: {sequences: [[change_shape_color]]}
    output: {frames: true}
"""


@pytest.mark.slow
def test_a_small_build_imports_neither_pandas_nor_datasets_nor_polars(tmp_path):
    spec = tmp_path / "tiny.yaml"
    spec.write_text(TINY)
    script = ("import sys\n"
              "from cogen.cli import main\n"
              "sys.argv = ['cogen', 'build', '--config', sys.argv[1], '--out', sys.argv[2], '--workers', '1', "
              "'--no-progress']\n"
              "try:\n    main()\nexcept SystemExit as stop:\n    assert not stop.code, stop.code\n"
              "print(sorted(name for name in ('pandas', 'datasets', 'polars') if name in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", script, str(spec), str(tmp_path / "out")], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert sorted(p.name for p in (tmp_path / "out" / "manifests").iterdir()) == ["S-1.json", "S-2.json"]


def _datasets_dataset_info(manifests: dict[str, dict]) -> list[dict]:
    """The oracle: ``datasets``' own serialisation, as the card made it before (one config as a list)."""
    from datasets import DatasetInfo, Features, SplitDict, SplitInfo
    from datasets.info import DatasetInfosDict
    from huggingface_hub import DatasetCardData

    infos = DatasetInfosDict()
    for name, manifest in manifests.items():
        splits = SplitDict()
        for split, v in manifest["splits"].items():
            splits.add(SplitInfo(name=split, num_bytes=v["num_bytes"], num_examples=v["rows"]))
        infos[name] = DatasetInfo(features=Features.from_dict(hf_features_dict(manifest["columns"])), splits=splits,
                                  download_size=sum(v["download_bytes"] for v in manifest["splits"].values()),
                                  dataset_size=sum(v["num_bytes"] for v in manifest["splits"].values()))
    data = DatasetCardData()
    infos.to_dataset_card_data(data)
    if isinstance(data["dataset_info"], dict):
        data["dataset_info"] = [{"config_name": next(iter(manifests)), **data["dataset_info"]}]
    return data.to_dict()["dataset_info"]


@pytest.mark.slow
def test_dataset_info_is_what_datasets_writes(tmp_path):
    """Every family's columns (grids, frames, carc episodes, programs), configs out of name order, one and many."""
    spec = tmp_path / "tiny.yaml"
    spec.write_text(TINY)
    build(spec, tmp_path / "cogitao")
    build("carc", tmp_path / "carc", scale=0.0005)
    build("programs", tmp_path / "programs", scale=0.01)
    for family in ("cogitao", "carc", "programs"):
        manifests = read_manifests(tmp_path / family)
        for chosen in (manifests, dict(list(manifests.items())[-1:])):
            ours = yaml.safe_dump(dataset_info(chosen), sort_keys=False)
            assert ours == yaml.safe_dump(_datasets_dataset_info(chosen), sort_keys=False), family


def test_nested_stages_count_their_time_once():
    stages.reset()
    with stages.stage("parquet encoding"):
        start = time.process_time()
        while time.process_time() - start < 0.02:
            pass
        with stages.stage("sampling"):
            start = time.process_time()
            while time.process_time() - start < 0.05:
                pass
    spent = stages.totals()
    assert spent["sampling"] >= 0.05 and 0.02 <= spent["parquet encoding"] < 0.05
    stages.reset()


def _busy(seconds: float) -> None:
    start = time.thread_time()
    while time.thread_time() - start < seconds:
        pass


def test_a_stage_counts_its_own_thread_and_the_encoders_stage_every_thread():
    """Another thread's work is not sampling's; the encoders' stage counts the threads their library
    encodes on (polars'), less the stages nested in it."""
    import threading

    stages.reset()
    stop = threading.Event()
    spinner = threading.Thread(target=lambda: [None for _ in iter(stop.is_set, True)], daemon=True)
    spinner.start()
    try:
        with stages.stage("sampling"):
            time.sleep(0.2)  # the other thread spins meanwhile
        with stages.stage("parquet encoding", threads=True):
            time.sleep(0.2)
            with stages.stage("arrow conversion"):
                _busy(0.02)
    finally:
        stop.set()
        spinner.join()
    spent = stages.totals()
    assert spent["sampling"] < 0.02 and spent["parquet encoding"] > 0.04 and 0.02 <= spent["arrow conversion"] < 0.04
    stages.reset()


def test_polars_encoding_is_encoding_and_the_row_groups_it_pulls_are_sampling():
    import io

    from cogen.pipeline import parquet
    from cogen.pipeline.arrow import grids_column

    cells = np.random.default_rng(0).integers(0, 10, (10_000, 20, 20), dtype=np.int8)
    table = pa.table({"grid": grids_column(cells, np.full((10_000, 2), 20, np.int16))})

    def tables():
        for _ in range(4):  # each takes polars longer to encode than to sample
            with stages.stage("sampling"):  # polars calls back for row groups, on threads of its own
                _busy(0.02)
            yield table

    stages.reset()
    schema = pa.schema([("grid", pa.list_(pa.list_(pa.int8())))])
    cpu = time.process_time()
    saved, parquet.POLARS_MIN_ROWS = parquet.POLARS_MIN_ROWS, 1
    try:
        parquet.write_parquet(io.BytesIO(), schema, tables(), {})
    finally:
        parquet.POLARS_MIN_ROWS = saved
    cpu = time.process_time() - cpu
    spent = stages.totals()
    assert 0.08 <= spent["sampling"] < 0.11  # its own busy time, not the encoding beside it
    assert spent["parquet encoding"] > 0 and sum(spent.values()) <= cpu + 0.01
    stages.reset()


def test_arrays_from_numpy_are_those_pa_array_makes():
    rng = np.random.default_rng(3)
    for type_ in (pa.int8(), pa.int16(), pa.int32(), pa.int64()):
        values = rng.integers(-100, 100, 257)
        assert numpy_array(values, type_).equals(pa.array(values.astype(type_.to_pandas_dtype()), type_))
        assert numpy_array(values.reshape(-1, 1)[::2], type_).to_pylist() == values[::2].tolist()  # any layout
    texts = ["C1-1-train-0", "", "grille-é-∂", "x" * 300]
    assert string_array(texts).equals(pa.array(texts, pa.string()))
    assert string_array([]).equals(pa.array([], pa.string()))
    assert string_array(np.array(texts, object)).equals(pa.array(texts, pa.string()))


def test_workers_fork_on_linux_unless_polars_is_loaded(monkeypatch):
    monkeypatch.delenv("COGEN_WORKER_START", raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delitem(sys.modules, "polars", raising=False)
    assert start_method() == "fork"
    monkeypatch.setitem(sys.modules, "polars", object())
    assert start_method() == "spawn"  # its thread pool would not survive a fork
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.delitem(sys.modules, "polars")
    assert start_method() == "spawn"
    monkeypatch.setenv("COGEN_WORKER_START", " Forkserver ")
    assert start_method() == "forkserver"


# -- the console entry: the process ends without the final garbage collections, and nothing a user relies on is skipped

#: Runs ``cogen`` as the console script does (``python -m cogen``: :func:`cogen.cli.entry`), with every fsync
#: logged (from the workers too) and, from an ``atexit`` handler registered before cogen's, a report of the
#: interpreter's state at its end.
ENTRY = """
import atexit, gc, json, os, sys, threading
log = sys.argv[1]
real_fsync = os.fsync
def fsync(fd):
    with open(log, "a") as out:
        out.write(os.readlink(f"/proc/self/fd/{fd}") + "\\n")
    return real_fsync(fd)
os.fsync = fsync
def report():  # registered first, so it runs after every other atexit handler
    with open(log + ".json", "w") as out:
        json.dump({"frozen": gc.get_freeze_count(), "threads": threading.active_count()}, out)
atexit.register(report)
import cogen.pipeline.driver as driver
driver.TINY_BUILD_ROWS = int(sys.argv[2])
sys.argv = ["cogen", *sys.argv[3:]]
import runpy
runpy.run_module("cogen", run_name="__main__", alter_sys=True)
"""


def _entry(tmp_path, *args: str, tiny: int = 0) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # stdout is a buffered pipe, as usual
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env.update(TMPDIR=str(tmp_path / "tmp"), HF_HUB_OFFLINE="1")
    return subprocess.run([sys.executable, "-c", ENTRY, str(tmp_path / "fsync.log"), str(tiny), *args],
                          capture_output=True, text=True, timeout=600, env=env)


@pytest.mark.slow
def test_the_console_entry_keeps_everything_a_user_relies_on(tmp_path):
    """A build with a pool of workers, through the console entry: its JSON report reaches a pipe whole;
    every file of the folder reached the disk (fsync) before its rename; the lock is released; the
    scratch folder, the workers' notes and every temporary are gone; the atexit handlers ran, after
    every object was frozen (so no final collection walked them)."""
    import json

    from cogen.folder import FolderLock

    spec = tmp_path / "tiny.yaml"
    spec.write_text(TINY)
    out = tmp_path / "out"
    done = _entry(tmp_path, "build", "--config", str(spec), "--out", str(out), "--workers", "2", "--no-progress",
                  "--json")
    assert done.returncode == 0, done.stderr
    assert {c["config"] for c in json.loads(done.stdout)["configs"]} == {"S-1", "S-2"}
    synced = set((tmp_path / "fsync.log").read_text().split())
    written = [p for p in out.rglob("*") if p.is_file() and ".cogen" not in p.relative_to(out).parts]
    assert len(written) > 6
    for path in written:
        assert any(s == str(path) or (Path(s).parent == path.parent and Path(s).name.startswith(f".{path.name}.")
                                      and s.endswith(".tmp")) for s in synced), path
    assert [p.name for p in (out / ".cogen").iterdir()] == ["lock"] and (out / ".cogen" / "lock").read_text() == ""
    with FolderLock(out) as lock:
        assert lock.stale_pid is None
    assert list((tmp_path / "tmp").iterdir()) == [] and not list(out.rglob("*.tmp"))
    state = json.loads((tmp_path / "fsync.log.json").read_text())
    assert state["frozen"] > 10_000 and state["threads"] == 1


@pytest.mark.slow
def test_the_console_entry_keeps_exit_codes_and_messages(tmp_path):
    from cogen.engine import TRANSFORMS

    usage = _entry(tmp_path, "build", "--nosuch")
    assert usage.returncode == 2 and "Usage" in usage.stderr
    failed = _entry(tmp_path, "build", "--config", "nosuch-spec", "--out", str(tmp_path / "o"))
    assert failed.returncode == 1 and "nosuch-spec" in failed.stderr and "Traceback" not in failed.stderr
    listed = _entry(tmp_path, "transforms")  # a long table through a buffered pipe arrives whole
    assert listed.returncode == 0, listed.stderr
    assert all(name in listed.stdout for name in TRANSFORMS) and listed.stdout.rstrip().endswith("┘")


def test_only_the_console_entry_freezes(monkeypatch, capsys):
    """Tests call :func:`cogen.cli.main` in-process: it must end as Python ends; only :func:`cogen.cli.entry`
    freezes the objects before the process ends."""
    import gc

    from cogen import cli

    frozen = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True))
    monkeypatch.setattr(sys, "argv", ["cogen", "--version"])
    with pytest.raises(SystemExit):
        cli.main()
    assert frozen == []
    with pytest.raises(SystemExit):
        cli.entry()
    assert frozen == [True]
    assert capsys.readouterr().out.count("cogen ") == 2


@pytest.mark.slow
@pytest.mark.parametrize("args", [["--version"], ["--help"], ["build", "--help"], ["view", "--help"]])
def test_the_command_line_starts_without_the_heavy_libraries(args):
    """``cogen --help`` and ``--version`` load none of the libraries a command's work needs. Every call
    builds every command's options, so their help must not import them either (``cogen export``'s
    list of formats reads the families' export modules: only ``cogen export --help`` reads it)."""
    code = ("import sys\nfrom cogen.cli import entry\nsys.argv = ['cogen', *sys.argv[1:]]\ntry:\n    entry()\n"
            "except SystemExit:\n    pass\n"
            "print(sorted(m for m in ('numpy', 'numba', 'pyarrow', 'polars', 'datasets', 'torch', 'pandas', 'yaml') "
            "if m in sys.modules), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
    assert done.stderr.strip().splitlines()[-1] == "[]", done.stderr
