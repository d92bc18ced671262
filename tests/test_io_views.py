"""cogen.io.load_configs (every config in one call) and the cogitao-release column view."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from cogen.cli import app
from cogen.errors import DataError, UnknownNameError
from cogen.export import export
from cogen.folder import read_split
from cogen.folder.manifest import read_manifests
from cogen.io import column_view, load_configs

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_load_configs_gives_every_config_of_a_folder_row_for_row(small_build):
    loaded = load_configs(small_build)
    manifests = read_manifests(small_build)
    assert list(loaded) == list(manifests)
    for name, splits in loaded.items():
        assert list(splits) == list(manifests[name]["splits"])
        for split, dataset in splits.items():
            assert dataset.to_list() == read_split(small_build, name, split).table.to_pylist(), (name, split)
    one = load_configs(small_build, configs=["C1-2"], split="test_ood")
    assert list(one) == ["C1-2"] and one["C1-2"].num_rows == manifests["C1-2"]["splits"]["test_ood"]["rows"]


def test_the_release_view_renames_columns_and_widens_grids(small_build):
    table = read_split(small_build, "C1-1", "train").table
    view = column_view("cogitao-release").convert(table)
    assert view.column_names == [{"transformations": "transformation_suite"}.get(n, n) for n in table.column_names]
    assert str(view.schema.field("input").type) == "list<item: list<item: int64>>"
    assert view["input"].to_pylist() == table["input"].to_pylist()
    assert view["transformation_suite"].to_pylist() == table["transformations"].to_pylist()
    loaded = load_configs(small_build, configs=["C1-1"], split="train", columns="cogitao-release")["C1-1"]
    assert loaded["transformation_suite"] == table["transformations"].to_pylist()
    assert loaded["input"] == table["input"].to_pylist()
    assert str(loaded.features["input"]) == "List(List(Value('int64')))"
    assert loaded.cache_files, "the view is cast into the datasets cache a batch at a time, not held in memory"
    with pytest.raises(DataError, match="lacks transformations"):
        column_view("cogitao-release").convert(table.drop(["transformations"]))
    with pytest.raises(UnknownNameError):
        load_configs(small_build, columns="cogitao")


def test_export_parquet_with_the_release_columns_uses_the_release_file_names(small_build, tmp_path):
    result = CliRunner().invoke(app, ["export", "--data", str(small_build), "--config", "C1-1", "--out",
                                      str(tmp_path / "r"), "--format", "parquet", "--columns", "cogitao-release"])
    assert result.exit_code == 0, result.output
    names = {"train": "train", "validation": "val", "test": "test", "validation_ood": "val_ood", "test_ood": "test_ood"}
    for split, stem in names.items():
        written = pq.read_table(tmp_path / "r" / f"{stem}.parquet")
        source = read_split(small_build, "C1-1", split).table
        assert written["transformation_suite"].to_pylist() == source["transformations"].to_pylist()
        assert written["output"].to_pylist() == source["output"].to_pylist()
    report = export(small_build, "C1-1", tmp_path / "plain", format="parquet")
    assert pq.read_table(report.files[0].path).equals(read_split(small_build, "C1-1", "train").table)
