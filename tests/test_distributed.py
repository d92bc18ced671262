"""Builds whose workers share no disk with the driver: fsspec URLs, Dask clients and scheduler
files, workers in other directories, the version check, and a real S3 API on loopback."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from cogen.errors import BuildError
from cogen.pipeline import build
from cogen.pipeline.verify import failed, verify

TINY = """\
setting: D
seed: 5
defaults:
  grid: {height: [6, 8], width: [6, 8]}
  objects: {count: [1, 2], where: {is_shape_fully_connected: true, rows: [1, 3], cols: [1, 3]}}
  sizes: {train: 60, validation: 10, test: 10, validation_ood: 6, test_ood: 6}
experiments:
  D-1:
    in_domain: {sequences: [[translate_up], [rot90], [mirror_horizontal, rot90]]}
    out_of_domain: {sequences: [[rot90, mirror_horizontal]]}
  D-2:
    in_domain: {sequences: [[change_shape_color]]}
"""
ROWS_PER_SHARD = 25  # 3 train shards per config: several tasks per worker


def digests(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.glob("data/**/*.parquet"))}


def remote_digests(fs, root: str) -> dict[str, str]:
    root = root.rstrip("/")
    return {p[len(root) + 1:]: hashlib.sha256(fs.cat_file(p)).hexdigest()
            for p in sorted(fs.find(root)) if p.endswith(".parquet")}


@pytest.fixture(scope="module")
def spec(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("spec") / "tiny.yaml"
    path.write_text(TINY)
    return path


@pytest.fixture(scope="module")
def local_build(spec, tmp_path_factory) -> Path:
    """The reference: the same spec built serially into a local folder."""
    out = tmp_path_factory.mktemp("local") / "out"
    build(spec, out, workers=1, rows_per_shard=ROWS_PER_SHARD)
    return out


def _own_directory(base: str, dask_worker=None) -> str:
    """Run on each worker: move into a directory of its own (as on another machine)."""
    path = Path(base) / dask_worker.name.__str__()
    path.mkdir(parents=True, exist_ok=True)
    os.chdir(path)
    return str(path)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A Dask LocalCluster of two worker processes, each in its own working directory, with a scheduler file."""
    distributed = pytest.importorskip("dask.distributed")
    base = tmp_path_factory.mktemp("workers")
    scheduler_file = base / "scheduler.json"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  scheduler_kwargs={"scheduler_file": str(scheduler_file)}) as cluster, \
            distributed.Client(cluster) as client:
        directories = client.run(_own_directory, str(base / "cwd"))
        yield client, scheduler_file, [Path(d) for d in directories.values()]


def test_a_memory_url_build_has_the_local_bytes_and_resumes(spec, local_build, tmp_path):
    fsspec = pytest.importorskip("fsspec")
    url = f"memory://cogen-test-{tmp_path.name}/tiny"
    report = build(spec, url, workers=1, rows_per_shard=ROWS_PER_SHARD, state_dir=tmp_path / "state")
    fs = fsspec.filesystem("memory")
    root = fs._strip_protocol(url)
    assert report.folder == url
    assert remote_digests(fs, root) == digests(local_build)
    for name in ("D-1", "D-2"):  # manifests assembled from what the workers reported
        assert json.loads(fs.cat_file(f"{root}/manifests/{name}.json")) == \
            json.loads((local_build / "manifests" / f"{name}.json").read_text())
    assert b"D-1" in fs.cat_file(f"{root}/README.md")

    # another machine (a fresh state folder) resumes from what the bucket holds
    again = build(spec, url, workers=1, rows_per_shard=ROWS_PER_SHARD, state_dir=tmp_path / "other-state")
    assert all(config.kept for config in again.configs)
    fs.rm_file(f"{root}/data/D-2/train-00001-of-00003.parquet")
    fs.pipe_file(f"{root}/data/D-2/train-00000-of-00003.parquet", b"not a shard")
    repaired = build(spec, url, workers=1, rows_per_shard=ROWS_PER_SHARD, state_dir=tmp_path / "other-state")
    d2 = next(config for config in repaired.configs if config.config == "D-2")
    assert (d2.written, d2.skipped) == (2, 3)
    assert remote_digests(fs, root) == digests(local_build)


@pytest.mark.slow
def test_dask_workers_elsewhere_write_a_relative_out_into_the_drivers_folder(spec, local_build, cluster, tmp_path,
                                                                             monkeypatch):
    client, scheduler_file, worker_dirs = cluster
    monkeypatch.chdir(tmp_path)
    build(spec, "by-client", executor="dask", client=client, rows_per_shard=ROWS_PER_SHARD)
    build(spec, "by-file", executor="dask", dask_scheduler_file=str(scheduler_file), rows_per_shard=ROWS_PER_SHARD)
    assert digests(tmp_path / "by-client") == digests(local_build)
    assert digests(tmp_path / "by-file") == digests(local_build)
    assert not [p for d in worker_dirs for p in d.rglob("*.parquet")]  # nothing landed in the workers' directories
    assert not client.status == "closed"  # the caller's client is the caller's to close


@pytest.mark.slow
def test_a_worker_with_another_cogen_is_refused_before_any_shard(spec, tmp_path, monkeypatch):
    distributed = pytest.importorskip("dask.distributed")
    from cogen.folder import environment_versions
    from cogen.pipeline import executors

    faked = {**environment_versions(), "cogen": "0.0.0+other"}
    monkeypatch.setattr(executors, "worker_versions", lambda: faked)
    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        with pytest.raises(BuildError, match=r"has cogen 0\.0\.0\+other, the driver .*Install the same versions"):
            build(spec, tmp_path / "out", executor="dask", client=client, rows_per_shard=ROWS_PER_SHARD)
    assert not (tmp_path / "out" / "data").exists()


def test_dask_connection_options_are_exclusive_and_dask_only(spec, tmp_path):
    with pytest.raises(BuildError, match="--dask-scheduler-file only goes with --executor dask"):
        build(spec, tmp_path / "a", dask_scheduler_file="x.json")
    pytest.importorskip("dask.distributed")
    with pytest.raises(BuildError, match="one way to reach the Dask cluster"):
        build(spec, tmp_path / "b", executor="dask", dask_address="tcp://127.0.0.1:1", dask_scheduler_file="x.json")
    with pytest.raises(BuildError, match="storage options only go with a remote --out"):
        build(spec, tmp_path / "c", storage_options={"anon": True})


# --- a real S3 API on loopback (moto's server mode) ------------------------------------------


@pytest.fixture
def s3(monkeypatch):
    """An S3-compatible server on 127.0.0.1 and the fsspec options that reach it (no AWS account, no internet)."""
    moto_server = pytest.importorskip("moto.server")
    s3fs = pytest.importorskip("s3fs")
    for name, value in [("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                        ("AWS_DEFAULT_REGION", "us-east-1"), ("AWS_EC2_METADATA_DISABLED", "true")]:
        monkeypatch.setenv(name, value)
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    options = {"key": "testing", "secret": "testing",
               "client_kwargs": {"endpoint_url": f"http://{host}:{port}", "region_name": "us-east-1"}}
    boto3 = pytest.importorskip("boto3")
    boto3.client("s3", endpoint_url=f"http://{host}:{port}", region_name="us-east-1").create_bucket(Bucket="cogen-bucket")
    fs = s3fs.S3FileSystem(**options)
    yield fs, options
    server.stop()


@pytest.mark.slow
def test_a_dask_build_straight_into_s3_has_the_local_bytes_and_reads_back(spec, local_build, cluster, s3, tmp_path,
                                                                         monkeypatch):
    import datasets
    import datasets.config
    from typer.testing import CliRunner

    from cogen.cli import app

    client, _, worker_dirs = cluster
    fs, options = s3
    url = "s3://cogen-bucket/tiny"
    build(spec, url, executor="dask", client=client, rows_per_shard=ROWS_PER_SHARD, storage_options=options,
          state_dir=tmp_path / "state")
    fs.invalidate_cache()
    assert remote_digests(fs, "cogen-bucket/tiny") == digests(local_build)
    assert not [p for d in worker_dirs for p in d.rglob("*.parquet")]

    assert not failed(verify(url, storage_options=options))
    result = CliRunner().invoke(app, ["verify", url, "--storage-options", json.dumps(options), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "checks passed" in result.output

    # the bucket is on loopback: let datasets leave offline mode for it (the Hub stays unreachable)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", False)
    # datasets reads object storage through its parquet builder (a bucket is not a Hub repo: no card configs)
    splits = ("train", "validation", "test", "validation_ood", "test_ood")
    remote = datasets.load_dataset("parquet", data_files={s: f"{url}/data/D-1/{s}-*.parquet" for s in splits},
                                   storage_options=options, cache_dir=str(tmp_path / "cache"))
    local = datasets.load_dataset(str(local_build), "D-1", cache_dir=str(tmp_path / "cache-local"))
    assert {s: d.num_rows for s, d in remote.items()} == {s: d.num_rows for s, d in local.items()}
    assert remote["train"][:5] == local["train"][:5]
