"""cogen push against a loopback Hub: one commit, loads back row for row, clean failures, dry runs offline."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cogen.errors import PublishError
from cogen.folder.manifest import read_manifests
from cogen.hub.publish import hub_settings, push, upload_plan
from cogen.pipeline import build

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # inside the HTTP client library


def local_rows(folder: Path, config: str, split: str) -> list[dict]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = read_manifests(folder)[config]["splits"][split]["files"]
    return pa.concat_tables([pq.read_table(folder / f) for f in files]).to_pylist()


@pytest.mark.slow
def test_push_with_the_cli_then_load_dataset_gives_back_every_row(small_build, fake_hub, tmp_path):
    import datasets

    env = {**os.environ, "HF_ENDPOINT": fake_hub.url, "HF_HUB_OFFLINE": "0", "HF_HUB_DISABLE_XET": "1",
           "HF_TOKEN": "hf_test", "HF_HOME": str(tmp_path / "home")}
    result = subprocess.run([sys.executable, "-m", "cogen", "push", str(small_build), "--repo", "org/cogitao"],
                            env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "in one commit" in result.stdout
    repo = fake_hub.repo("org/cogitao")
    assert len(repo.commits) == 1
    pushed = sorted(repo.files)
    assert "README.md" in pushed and "previews/C1-1.png" in pushed and "manifests/G2-1.json" in pushed
    assert 'load_dataset("org/cogitao", "C1-1")' in repo.files["README.md"].decode()

    assert datasets.get_dataset_config_names("org/cogitao") == ["C1-1", "C1-2", "G2-1"]
    loaded = datasets.load_dataset("org/cogitao", "C1-1")
    manifest = read_manifests(small_build)["C1-1"]
    assert list(loaded) == list(manifest["splits"])
    for split, dataset in loaded.items():
        assert dataset.to_list() == local_rows(small_build, "C1-1", split), split
        assert list(dataset.features) == list(manifest["columns"])


def test_the_training_loaders_read_a_hub_repo(small_build, fake_hub):
    from cogen.io import split_arrays

    push(small_build, "org/cogitao", token="hf_test")
    from_hub = split_arrays("org/cogitao", "G2-1", "test_ood", size=20)
    from_folder = split_arrays(small_build, "G2-1", "test_ood", size=20)
    assert from_hub.keys() == from_folder.keys()
    assert all((from_hub[k] == from_folder[k]).all() for k in from_hub)


def test_a_replaced_config_leaves_no_stale_shard_on_the_hub(small_build, fake_hub, tmp_path):
    import datasets

    folder = tmp_path / "folder"
    shutil.copytree(small_build, folder)
    push(folder, "org/cogitao", token="hf_test")
    _replace_c1_1(folder, tmp_path)
    result = push(folder, "org/cogitao", token="hf_test")
    repo = fake_hub.repo("org/cogitao")
    assert len(repo.commits) == 2
    assert result.deleted == ["data/C1-1/train-00000-of-00001.parquet"]
    assert sorted(p for p in repo.files if p.startswith("data/C1-1/train")) == [
        f"data/C1-1/train-0000{i}-of-00003.parquet" for i in range(3)]
    assert datasets.load_dataset("org/cogitao", "C1-1", split="train").num_rows == 200


def test_a_failed_upload_publishes_nothing(small_build, fake_hub):
    push(small_build, "org/cogitao", token="hf_test", verify=False)
    before = dict(fake_hub.repo("org/cogitao").files)
    fake_hub.failures["PUT /__lfs__"] = 400  # a client error: no retries with back-off
    fake_hub.lfs.clear()  # every shard must be uploaded again, and the upload fails
    with pytest.raises(PublishError, match=r"Error while uploading 'data/.*answered 400.*Nothing was published"):
        push(small_build, "org/cogitao", token="hf_test", verify=False)
    repo = fake_hub.repo("org/cogitao")
    assert len(repo.commits) == 1 and repo.files == before


def _second_version(small_build: Path, tmp_path: Path) -> Path:
    """A copy of the small build whose C1-1 is rebuilt in 3 shards (what a second push uploads)."""
    folder = tmp_path / "folder"
    shutil.copytree(small_build, folder)
    _replace_c1_1(folder, tmp_path)
    return folder


def _replace_c1_1(folder: Path, tmp_path: Path) -> None:
    """Replace C1-1 of ``folder`` by a build of it in 3 shards (a folder holds one build: merged in)."""
    from cogen.hub import merge

    build("c1", tmp_path / "c1-v2", scale=0.002, workers=1, only=["C1-1"], rows_per_shard=80)  # 200 rows in 3 shards
    merge([tmp_path / "c1-v2"], folder)


def _published_as(repo, folder: Path) -> bool:
    """The repo holds exactly the folder's upload: every manifest-listed file byte for byte, nothing stale."""
    plan = upload_plan(folder, repo.id)
    local = {f.path for f in plan.files}
    def expected(path: str) -> bytes:  # croissant.json is rendered for the repo, like the card
        return plan.croissant if path == "croissant.json" else (folder / path).read_bytes()

    return set(repo.files) == local and all(repo.files[p] == expected(p) for p in local if p != "README.md")


def test_a_failed_commit_request_publishes_nothing_and_a_rerun_publishes_all(small_build, fake_hub, tmp_path):
    from fake_hub import Fault

    push(small_build, "org/cogitao", token="hf_test", verify=False)
    before = dict(fake_hub.repo("org/cogitao").files)
    folder = _second_version(small_build, tmp_path)
    fake_hub.failures["POST /api/datasets/org/cogitao/commit"] = Fault(400)  # the commit itself is refused
    with pytest.raises(PublishError, match=r"answered 400.*Nothing was published"):
        push(folder, "org/cogitao", token="hf_test")
    repo = fake_hub.repo("org/cogitao")
    assert len(repo.commits) == 1 and repo.files == before  # still the first version, whole
    fake_hub.failures.clear()
    push(folder, "org/cogitao", token="hf_test")
    assert len(repo.commits) == 2 and _published_as(repo, folder)


def test_an_upload_failing_partway_publishes_nothing_and_a_rerun_completes(small_build, fake_hub):
    from fake_hub import Fault

    fake_hub.failures["PUT /__lfs__"] = Fault(400, after=2)  # two shards go up, the third fails
    with pytest.raises(PublishError, match=r"Error while uploading 'data/.*answered 400.*Nothing was published"):
        push(small_build, "org/cogitao", token="hf_test", verify=False)
    repo = fake_hub.repo("org/cogitao")
    assert len(fake_hub.lfs) == 2 and repo.commits == [] and repo.files == {}  # blobs, but nothing published
    fake_hub.failures.clear()
    push(small_build, "org/cogitao", token="hf_test", verify=False)
    assert len(repo.commits) == 1 and _published_as(repo, small_build)


@pytest.mark.slow
def test_a_killed_push_publishes_nothing_and_a_rerun_completes(small_build, fake_hub, tmp_path):
    from fake_hub import Fault

    push(small_build, "org/cogitao", token="hf_test", verify=False)
    repo = fake_hub.repo("org/cogitao")
    before = dict(repo.files)
    folder = _second_version(small_build, tmp_path)
    stall = fake_hub.failures["PUT /__lfs__"] = Fault(500, after=1, stall=120)  # the second upload hangs
    env = {**os.environ, "HF_ENDPOINT": fake_hub.url, "HF_HUB_OFFLINE": "0", "HF_HUB_DISABLE_XET": "1",
           "HF_TOKEN": "hf_test", "HF_HOME": str(tmp_path / "home")}
    pusher = subprocess.Popen([sys.executable, "-m", "cogen", "push", str(folder), "--repo", "org/cogitao"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while stall.failed == 0 and pusher.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert stall.failed >= 1, f"the push never reached its second upload: {pusher.poll() and pusher.stderr.read()}"
    finally:
        pusher.kill()
        pusher.wait()
    assert len(repo.commits) == 1 and repo.files == before
    fake_hub.wake.set()
    fake_hub.failures.clear()
    push(folder, "org/cogitao", token="hf_test")
    assert len(repo.commits) == 2 and _published_as(repo, folder)


def test_a_shard_changed_after_verification_is_not_uploaded(small_build, fake_hub, tmp_path, monkeypatch):
    import cogen.hub.publish as publish

    folder = tmp_path / "folder"
    shutil.copytree(small_build, folder)
    shard = folder / "data/C1-2/test-00000-of-00001.parquet"
    real = publish._verify_folder

    def verify_then_change(path, **options):
        real(path, **options)
        shard.write_bytes(shard.read_bytes()[:-1] + b"\0")  # the file changes between the check and the upload
    monkeypatch.setattr(publish, "_verify_folder", verify_then_change)
    with pytest.raises(PublishError, match="data/C1-2/test-00000-of-00001.parquet changed after it was verified"):
        push(folder, "org/cogitao", token="hf_test")
    assert fake_hub.repo("org/cogitao").commits == []


def test_push_refuses_a_changed_shard_or_manifest_by_name(small_build, tmp_path):
    folder = tmp_path / "folder"
    shutil.copytree(small_build, folder)
    manifest = folder / "manifests/C1-1.json"
    manifest.write_text(manifest.read_text().replace('"seed": 1,', '"seed": 2,'))
    with pytest.raises(PublishError, match=r"manifests/C1-1\.json changed after the card was written"):
        push(folder, "org/cogitao", dry_run=True)
    shutil.copy(small_build / "manifests/C1-1.json", manifest)
    shard = folder / "data/G2-1/validation-00000-of-00001.parquet"
    data = bytearray(shard.read_bytes())
    data[812 % len(data)] ^= 0x01
    shard.write_bytes(bytes(data))
    with pytest.raises(PublishError, match=r"data/G2-1/validation-00000-of-00001\.parquet: SHA-256 differs"):
        push(folder, "org/cogitao", dry_run=True)


def test_a_missing_token_fails_before_any_request(small_build, fake_hub):
    with pytest.raises(PublishError, match="no Hugging Face token"):
        push(small_build, "org/cogitao")
    assert fake_hub.log == [] and fake_hub.repos == {}


def test_a_read_only_or_unknown_token_is_refused(small_build, fake_hub):
    fake_hub.tokens = {"hf_read": "read"}
    with pytest.raises(PublishError, match=r"refused access to org/cogitao \(403\)"):
        push(small_build, "org/cogitao", token="hf_read", verify=False)
    with pytest.raises(PublishError, match=r"rejected the token \(401\)"):
        push(small_build, "org/cogitao", token="hf_nobody", verify=False)
    assert fake_hub.repos == {}


def test_an_unreachable_hub_is_a_clear_error(small_build, fake_hub, monkeypatch):
    with socket.socket() as probe:  # a port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    with pytest.raises(PublishError, match=f"cannot reach the Hub at http://127.0.0.1:{port}"):
        push(small_build, "org/cogitao", token="hf_test", verify=False)


def test_push_refuses_a_folder_that_fails_verification(small_build, fake_hub, tmp_path):
    folder = tmp_path / "folder"
    shutil.copytree(small_build, folder)
    (folder / "README.md").unlink()  # what an interrupted merge leaves
    with pytest.raises(PublishError, match="refusing to push .*checks of `cogen verify` fail.*README.md is missing"):
        push(folder, "org/cogitao", token="hf_test")
    with pytest.raises(PublishError, match="not a Hub repo id"):
        push(small_build, "cogitao", token="hf_test")
    assert fake_hub.log == []


def test_dry_run_lists_files_sizes_and_configs_without_the_network(small_build, monkeypatch):
    from cogen.cli import app

    def no_network(*args, **kwargs):
        raise AssertionError("a dry run opened a connection")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    result = CliRunner().invoke(app, ["push", str(small_build), "--repo", "org/cogitao", "--dry-run"])
    assert result.exit_code == 0, result.output
    for path in ("README.md", "manifests/C1-1.json", "data/G2-1/train-00000-of-00001.parquet", "previews/C1-2.png"):
        assert path in result.stdout
    assert "3 configs" in result.stdout
    plan = upload_plan(small_build, "org/cogitao")
    assert f"would upload {len(plan.files)} files" in result.stdout
    assert re.search(r"C1-1\s*│\s*200\s*│\s*2\s*│", result.stdout)  # configs with split sizes
    assert re.search(r"data/C1-1/train-00000-of-00001\.parquet\s*│\s*[\d.,]+ kB", result.stdout)


def test_settings_follow_the_environment_of_now(monkeypatch):
    import huggingface_hub.constants as constants

    monkeypatch.setattr(constants, "ENDPOINT", "https://stale.example")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:1/")
    monkeypatch.setenv("HF_TOKEN", "hf_from_env")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    settings = hub_settings()
    assert (settings.endpoint, settings.token, settings.offline) == ("http://127.0.0.1:1", "hf_from_env", False)
    assert hub_settings(token="hf_arg", endpoint="http://x").token == "hf_arg"
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert hub_settings().offline


def test_offline_mode_refuses_to_push(small_build, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(PublishError, match="HF_HUB_OFFLINE is set"):
        push(small_build, "org/cogitao", token="hf_test", verify=False)
