"""Shards in the Parquet layout `datasets` writes: page index, row groups bounded in bytes,
content-defined chunking on request (``--parquet-cdc``), and a layout version that keeps resumed
builds from mixing layouts (``tests/test_shard_writer.py`` checks the two encoders agree)."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cogen.errors import BuildError
from cogen.pipeline import build
from cogen.pipeline import parquet as parquet_module
from cogen.pipeline.parquet import PARQUET_FORMAT, parquet_layout_options, write_parquet

TINY = """\
setting: P
seed: 9
defaults:
  grid: {height: [6, 8], width: [6, 8]}
  objects: {count: [1, 2], where: {is_shape_fully_connected: true, rows: [1, 3], cols: [1, 3]}}
  sizes: {train: 40, validation: 6, test: 6, validation_ood: 4, test_ood: 4}
experiments:
  P-1:
    in_domain: {sequences: [[translate_up], [rot90]]}
    out_of_domain: {sequences: [[rot90, translate_up]]}
"""


def grids_table(rows: int, side: int) -> pa.Table:
    grid = [[i % 10 for i in range(side)]] * side
    return pa.table({"input": pa.array([grid] * rows, pa.list_(pa.list_(pa.int8())))})


def test_row_groups_stay_under_the_byte_bound(monkeypatch):
    monkeypatch.setattr(parquet_module, "ROW_GROUP_BYTES", 40_000)
    table = grids_table(500, 20)  # ~ 500 * 420 bytes of cells and offsets
    sink = pa.BufferOutputStream()
    write_parquet(sink, table.schema, iter([table]), {"test": 1})
    metadata = pq.read_metadata(pa.BufferReader(sink.getvalue()))
    per_group = [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)]
    assert sum(per_group) == 500 and len(per_group) > 1
    assert max(per_group) * table.nbytes / table.num_rows <= 40_000


def test_small_tables_keep_the_row_cap():
    assert parquet_module.row_group_rows(grids_table(50, 5)) == parquet_module.ROW_GROUP_ROWS


@pytest.fixture
def built(tmp_path):
    spec = tmp_path / "p.yaml"
    spec.write_text(TINY)
    build(spec, tmp_path / "out", rows_per_shard=20)
    return spec, tmp_path / "out"


def test_shards_have_a_page_index_and_the_layout_version(built):
    _, out = built
    files = sorted(out.glob("data/P-1/*.parquet"))
    assert files
    for path in files:
        metadata = pq.ParquetFile(path).metadata
        column = metadata.row_group(0).column(0)
        assert column.has_offset_index  # the page index
        assert json.loads(metadata.metadata[b"cogen"])["parquet_format"] == PARQUET_FORMAT
    manifest = json.loads((out / "manifests" / "P-1.json").read_text())
    assert manifest["parquet_format"] == PARQUET_FORMAT
    assert "use_content_defined_chunking" not in parquet_layout_options()
    if int(pa.__version__.split(".")[0]) >= 21:
        assert parquet_layout_options(cdc=True)["use_content_defined_chunking"] is True


def test_a_shard_of_the_older_layout_is_rewritten_not_kept(built, monkeypatch):
    spec, out = built
    before = {p.name: p.read_bytes() for p in out.glob("data/P-1/*.parquet")}
    monkeypatch.setattr(parquet_module, "PARQUET_FORMAT", 1)  # as if an older cogen had written the folder
    monkeypatch.setattr("cogen.pipeline.shards.PARQUET_FORMAT", 1)
    monkeypatch.setattr(parquet_module, "parquet_layout_options", lambda cdc=False: {})
    with pytest.raises(BuildError, match="parquet_format 3 in the folder, 1 now"):  # a folder holds one build
        build(spec, out, rows_per_shard=20)
    old = build(spec, out, rows_per_shard=20, force=True)
    assert not old.configs[0].kept and old.configs[0].written == len(before)
    monkeypatch.undo()
    again = build(spec, out, rows_per_shard=20, force=True)
    assert not again.configs[0].kept and again.configs[0].written == len(before)
    assert {p.name: p.read_bytes() for p in out.glob("data/P-1/*.parquet")} == before
