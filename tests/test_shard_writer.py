"""The shard writer's contracts (issue 29): grids stay ``list<list<int8>>`` whichever library encodes them.

Shards of :data:`~cogen.pipeline.parquet.POLARS_MIN_ROWS` rows or more are encoded by polars, smaller
ones and every shard of a ``--parquet-cdc`` build by pyarrow. The oracle is pyarrow's file, the
format before polars: the same Arrow schema, key-value metadata (stamp, statistics, features),
row groups and page index, the same values; ``datasets`` loads the declared features; the bytes
do not depend on worker count, polars threads, how workers start, or a resume.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from folder_digests import digests

from cogen.errors import BuildError
from cogen.folder import arrow_schema
from cogen.pipeline import build
from cogen.pipeline import parquet as parquet_module
from cogen.pipeline.parquet import POLARS_MIN_ROWS, encoder, write_parquet

#: Big enough that the train shard goes to polars (its first row group holds 2,400 rows).
WIDE = """\
setting: W
seed: 5
defaults:
  grid: {height: [6, 9], width: [6, 9]}
  objects: {count: [1, 2], where: {is_shape_fully_connected: true, rows: [1, 3], cols: [1, 3]}}
  sizes: {train: 2400, validation: 30, test: 30}
experiments:
  W-1:
    in_domain: {sequences: [[translate_up], [rot90], [mirror_horizontal, rot90]]}
"""


@pytest.fixture(scope="module")
def wide(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("wide")
    spec = root / "wide.yaml"
    spec.write_text(WIDE)
    build(spec, root / "out", workers=1)
    return spec, root / "out"


def shard_tables(path: Path) -> list[pa.Table]:
    """The row groups of a shard as tables of the shard's own schema, without its metadata."""
    source = pq.ParquetFile(path)
    return [source.read_row_group(i).replace_schema_metadata(None) for i in range(source.num_row_groups)]


def encode(tables: list[pa.Table], schema, stamp: dict, stats: dict, *, polars: bool, cdc: bool = False) -> bytes:
    """The bytes :func:`write_parquet` gives with polars or with pyarrow as the encoder."""
    saved = parquet_module.POLARS_MIN_ROWS
    parquet_module.POLARS_MIN_ROWS = 1 if polars else 10 ** 12
    try:
        sink = io.BytesIO()
        write_parquet(sink, schema, iter(tables), stamp, stats, cdc=cdc)
        return sink.getvalue()
    finally:
        parquet_module.POLARS_MIN_ROWS = saved


def layout(data: bytes) -> dict:
    """Everything a reader of a shard sees apart from the encoded pages."""
    source = pq.ParquetFile(pa.BufferReader(data))
    metadata = source.metadata
    groups = [metadata.row_group(i) for i in range(metadata.num_row_groups)]
    chunks = [group.column(j) for group in groups for j in range(group.num_columns)]
    parquet_schema = str(source.schema).split("\n", 1)[1].replace("group field_id=-1 schema {", "group field_id=-1 root {")
    return {"schema": source.schema_arrow, "parquet schema": parquet_schema,  # pyarrow names the root "schema"
            "metadata": dict(metadata.metadata), "row groups": [g.num_rows for g in groups],
            "offset index": {c.has_offset_index for c in chunks}, "column index": {c.has_column_index for c in chunks},
            "statistics": {c.is_stats_set for c in chunks},
            # polars may dictionary-encode a flat column of few values (n_objects); never a list column
            "dictionary in lists": {c.has_dictionary_page for c in chunks if ".list." in c.path_in_schema},
            "compression": {c.compression for c in chunks}}


def test_the_train_shard_goes_to_polars_and_the_small_ones_to_pyarrow(wide):
    _, out = wide
    created = {p.name.split("-")[0]: pq.read_metadata(p).created_by for p in out.glob("data/W-1/*.parquet")}
    assert created["train"].lower().startswith("polars") and created["test"].startswith("parquet-cpp-arrow")
    assert encoder(POLARS_MIN_ROWS) == "polars" and encoder(POLARS_MIN_ROWS - 1) == "pyarrow"
    assert encoder(10 ** 6, cdc=True) == "pyarrow"


def test_polars_writes_what_pyarrow_writes_but_the_pages(wide):
    """Schema (list, not large_list; string, not string_view), stamp and statistics in the footer
    in pyarrow's order, row groups, offset index, no statistics or dictionaries, zstd, same values."""
    _, out = wide
    path = next(out.glob("data/W-1/train-*.parquet"))
    tables = shard_tables(path)
    schema = arrow_schema(json.loads((out / "manifests" / "W-1.json").read_text())["columns"])
    stamp = json.loads(pq.read_metadata(path).metadata[b"cogen"])
    stats = {"accepted": 2400, "regenerated": 3}
    by_polars = encode(tables, schema, stamp, stats, polars=True)
    by_pyarrow = encode(tables, schema, stamp, stats, polars=False)
    assert by_polars != by_pyarrow  # two encoders
    assert layout(by_polars) == layout(by_pyarrow)
    assert list(layout(by_polars)["metadata"]) == [b"ARROW:schema", b"huggingface", b"cogen", b"cogen_stats"]
    assert pq.read_table(pa.BufferReader(by_polars)).equals(pq.read_table(pa.BufferReader(by_pyarrow)))
    assert pq.read_table(pa.BufferReader(by_polars)).equals(pa.concat_tables(tables).cast(schema))


def test_row_groups_follow_the_first_table_and_the_byte_bound(monkeypatch):
    grid = [[i % 10 for i in range(20)]] * 20
    table = pa.table({"input": pa.array([grid] * 2500, pa.list_(pa.list_(pa.int8())))})
    schema = table.schema
    assert layout(encode([table.slice(0, 1000), table.slice(1000, 1000), table.slice(2000)], schema, {}, {},
                         polars=True))["row groups"] == [1000, 1000, 500]
    monkeypatch.setattr(parquet_module, "ROW_GROUP_BYTES", 400_000)  # about 920 rows of 20x20 grids
    by_polars, by_pyarrow = (encode([table], schema, {}, {}, polars=p) for p in (True, False))
    assert layout(by_polars)["row groups"] == layout(by_pyarrow)["row groups"]
    assert len(layout(by_polars)["row groups"]) > 1


@pytest.mark.slow
def test_polars_bytes_do_not_depend_on_its_threads(wide, tmp_path):
    _, out = wide
    path = next(out.glob("data/W-1/train-*.parquet"))
    script = ("import sys, pyarrow.parquet as pq\n"
              "from cogen.pipeline.parquet import write_parquet\n"
              "source = pq.ParquetFile(sys.argv[1])\n"
              "tables = [source.read_row_group(i) for i in range(source.num_row_groups)]\n"
              "write_parquet(sys.argv[2], source.schema_arrow.remove_metadata(), iter(tables), {'a': 1}, {})\n")
    written = []
    for threads in ("1", "3"):
        target = tmp_path / f"threads-{threads}.parquet"
        subprocess.run([sys.executable, "-c", script, str(path), str(target)], check=True,
                       env={**os.environ, "POLARS_MAX_THREADS": threads})
        written.append(target.read_bytes())
    assert written[0] == written[1]
    assert pq.read_metadata(tmp_path / "threads-1.parquet").created_by.lower().startswith("polars")


@pytest.mark.slow
@pytest.mark.parametrize("preset", [None, "3"])
def test_polars_loads_with_one_thread_and_a_prompt_allocator_unless_told_otherwise(wide, tmp_path, preset):
    """The settings that keep a C-ARC build under 500 MB (``bench_build.py carc``) reach polars
    when the writer loads it, and a user's own ``POLARS_MAX_THREADS`` wins."""
    _, out = wide
    path = next(out.glob("data/W-1/train-*.parquet"))
    script = ("import sys, json, os, pyarrow.parquet as pq\n"
              "from cogen.pipeline.parquet import write_parquet\n"
              "source = pq.ParquetFile(sys.argv[1])\n"
              "write_parquet(sys.argv[2], source.schema_arrow.remove_metadata(),\n"
              "              iter([source.read_row_group(0)]), {'a': 1}, {})\n"
              "import polars\n"  # loaded by the writer, with its settings
              "print(json.dumps([polars.thread_pool_size(), os.environ['_RJEM_MALLOC_CONF']]))\n")
    env = {key: value for key, value in os.environ.items() if key not in ("POLARS_MAX_THREADS", "_RJEM_MALLOC_CONF")}
    if preset:
        env["POLARS_MAX_THREADS"] = preset
    done = subprocess.run([sys.executable, "-c", script, str(path), str(tmp_path / "out.parquet")], check=True,
                          env=env, capture_output=True, text=True)
    threads, conf = json.loads(done.stdout.strip().splitlines()[-1])
    assert threads == int(preset or parquet_module.POLARS_THREADS)
    assert conf.endswith("," + parquet_module.POLARS_MALLOC_CONF)  # polars puts its defaults first; the last wins
    assert pq.read_metadata(tmp_path / "out.parquet").created_by.lower().startswith("polars")


MALLINFO = """\
import ctypes, sys
import numpy as np
class Info(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split())]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info
if sys.argv[1] == "polars":
    from cogen.pipeline.parquet import _polars
    _polars()
mapped = []
for _ in range(3):  # glibc raises its threshold when a mapped block is freed: the next one is not mapped
    block = np.ones(4 << 20, np.uint8)
    mapped.append(libc.mallinfo2().hblkhd >= 4 << 20)
    del block
print(all(mapped))
"""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_loading_polars_keeps_big_arrays_out_of_mallocs_arenas():
    """Once the writer has loaded polars, a freed array of 1 MB or more goes back to the system
    (glibc's mmap threshold stays fixed), as it does not by default."""
    # glibc's own settings fix the threshold too (Dask's nanny leaves MALLOC_TRIM_THRESHOLD_ in the
    # environment of the process that ran a local cluster): the subprocess starts without them.
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("MALLOC_") and key != "GLIBC_TUNABLES"}

    def all_mapped(mode: str) -> bool:
        done = subprocess.run([sys.executable, "-c", MALLINFO, mode], capture_output=True, text=True, env=env)
        if done.returncode:
            pytest.skip(f"no glibc mallinfo2: {done.stderr.strip().splitlines()[-1]}")
        return done.stdout.strip() == "True"

    assert all_mapped("polars")
    assert not all_mapped("default")  # the law the setting changes


@pytest.mark.slow
def test_load_dataset_gives_the_declared_features(wide):
    """``datasets`` (the installed one; 4.0 was checked by hand, see the README) loads grids as
    ``List(List(Value("int8")))``, not ``LargeList``, through the card and from the files alone."""
    import datasets

    _, out = wide
    expected = datasets.Features({
        "id": datasets.Value("string"),
        "input": datasets.List(datasets.List(datasets.Value("int8"))),
        "output": datasets.List(datasets.List(datasets.Value("int8"))),
        "transformations": datasets.List(datasets.Value("string")),
        "n_objects": datasets.Value("int16"),
        "object_ids": datasets.List(datasets.Value("int32")),
        "object_positions": datasets.List(datasets.List(datasets.Value("int16"))),
    })
    loaded = datasets.load_dataset(str(out), "W-1", split="train")
    direct = datasets.load_dataset("parquet", data_files=[str(p) for p in out.glob("data/W-1/train-*.parquet")],
                                   split="train")
    for dataset in (loaded, direct):
        assert dataset.features == expected and "LargeList" not in repr(dataset.features)
        assert dataset.num_rows == 2400
    assert loaded[7] == direct[7]
    table = pq.read_table(next(out.glob("data/W-1/train-*.parquet")))
    assert table.column("input").type == pa.list_(pa.list_(pa.int8()))
    assert loaded[7]["input"] == table.column("input")[7].as_py()


@pytest.mark.slow
def test_worker_count_and_start_method_never_change_a_byte(wide, tmp_path, monkeypatch, pooled):
    spec, one = wide
    runs = {"fork": tmp_path / "fork", "spawn": tmp_path / "spawn"}
    for method, folder in runs.items():
        monkeypatch.setenv("COGEN_WORKER_START", method)
        build(spec, folder, workers=2, rows_per_shard=1200)
    build(spec, tmp_path / "serial", workers=1, rows_per_shard=1200)
    assert digests(runs["fork"]) == digests(runs["spawn"]) == digests(tmp_path / "serial")
    assert len(digests(tmp_path / "serial")) == 4
    monkeypatch.setenv("COGEN_WORKER_START", "vfork")
    from cogen.errors import BuildError

    with pytest.raises(BuildError, match="COGEN_WORKER_START is 'vfork'; choose one of: fork, spawn, forkserver"):
        build(spec, tmp_path / "bad", workers=2, rows_per_shard=1200)


def test_cdc_is_off_by_default_and_recorded(wide):
    _, out = wide
    manifest = json.loads((out / "manifests" / "W-1.json").read_text())
    assert manifest["parquet_cdc"] is False and manifest["parquet_format"] == parquet_module.PARQUET_FORMAT
    assert "polars" in manifest["versions"]
    for path in out.glob("data/W-1/*.parquet"):
        assert json.loads(pq.read_metadata(path).metadata[b"cogen"])["cdc"] is False


@pytest.mark.slow
def test_a_build_with_the_other_cdc_setting_rewrites_every_shard(wide, tmp_path):
    spec, plain = wide
    out = tmp_path / "out"
    first = build(spec, out, parquet_cdc=True)
    assert json.loads((out / "manifests" / "W-1.json").read_text())["parquet_cdc"] is True
    for path in out.glob("data/W-1/*.parquet"):
        assert json.loads(pq.read_metadata(path).metadata[b"cogen"])["cdc"] is True
        assert pq.read_metadata(path).created_by.startswith("parquet-cpp-arrow")  # CDC: pyarrow only
    cdc_files = digests(out)
    assert cdc_files != digests(plain) and first.configs[0].written == len(cdc_files)
    assert build(spec, out, parquet_cdc=True).configs[0].kept  # same setting: kept whole
    with pytest.raises(BuildError, match="parquet_cdc True in the folder, False now"):  # a folder holds one build
        build(spec, out)
    again = build(spec, out, force=True)  # the default: every shard written again, none mixed in
    assert not again.configs[0].kept and again.configs[0].written == len(cdc_files)
    assert digests(out) == digests(plain)
    for table in (pq.read_table(p) for p in out.glob("data/W-1/*.parquet")):
        assert table.schema.field("input").type == pa.list_(pa.list_(pa.int8()))


def test_a_cdc_request_on_an_old_pyarrow_says_what_to_do(monkeypatch):
    from cogen.errors import BuildError

    parquet_module._has_writer_option.cache_clear()
    monkeypatch.setattr(parquet_module, "_has_writer_option", lambda name: False)
    with pytest.raises(BuildError, match="--parquet-cdc needs pyarrow >= 21"):
        parquet_module.parquet_layout_options(cdc=True)


def test_the_cli_passes_parquet_cdc(monkeypatch, tmp_path):
    from typer.testing import CliRunner

    from cogen.cli import app

    seen = {}

    def fake_build(spec, out, **options):
        seen.update(options)
        raise SystemExit(0)

    monkeypatch.setattr("cogen.pipeline.build", fake_build)
    for flags, expected in (([], False), (["--parquet-cdc"], True)):
        CliRunner().invoke(app, ["build", "--config", "c1", "--out", str(tmp_path / "x"), "--no-progress", *flags])
        assert seen.pop("parquet_cdc") is expected


def test_a_full_disk_under_polars_is_the_usual_one_line_error(wide, tmp_path, monkeypatch):
    """polars reports a failed write as its own ComputeError; the writer raises the OSError, so the
    build says what it says for pyarrow's shards (the file, the disk is full)."""
    import builtins
    import errno

    from cogen.errors import BuildError

    class FullDisk(io.RawIOBase):
        def writable(self) -> bool:
            return True

        def write(self, data) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    def full_disk_open(path, mode="r", *args, **kwargs):
        return FullDisk() if mode == "wb" and str(path).endswith(".tmp") else builtins.open(path, mode, *args, **kwargs)

    spec, _ = wide
    monkeypatch.setattr(parquet_module, "open", full_disk_open, raising=False)
    with pytest.raises(BuildError, match=r"cannot write .*data/W-1/train-00000-of-00001\.parquet: the disk is full"):
        build(spec, tmp_path / "out")
    assert not list((tmp_path / "out" / "data").glob("**/*.tmp"))
