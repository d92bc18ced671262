"""``--data`` is a local folder or a Hub repo, told apart at once: a mistyped local path never becomes Hub retries."""

from __future__ import annotations

import time

import pytest
from typer.testing import CliRunner

from cogen.errors import DataError
from cogen.folder.locate import hub_repo_id, locate_data


class _Hub:
    """A stand-in for ``HfApi`` that counts its requests and answers as told."""

    calls: list[str] = []
    error: Exception | None = None

    def dataset_info(self, repo_id, timeout=None):
        _Hub.calls.append(repo_id)
        if _Hub.error is not None:
            raise _Hub.error
        return object()


@pytest.fixture
def hub(monkeypatch):
    import huggingface_hub
    from huggingface_hub import constants

    from cogen.folder import locate

    locate._probe.cache_clear()
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub, "HfApi", _Hub)
    _Hub.calls, _Hub.error = [], None
    yield _Hub
    locate._probe.cache_clear()


def test_an_existing_folder_is_a_folder_and_a_prefixed_id_is_the_hub(tmp_path, monkeypatch, hub):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "owner" / "name").mkdir(parents=True)
    assert locate_data("owner/name").resolve() == tmp_path / "owner" / "name" and hub.calls == []
    assert locate_data("hf://datasets/owner/name") == "owner/name" and hub.calls == ["owner/name"]
    assert hub_repo_id("hf://datasets/a/b") == "a/b" and hub_repo_id("a/b/c") is None


@pytest.mark.parametrize("given", ["out/c1-smal", "./c1-smal", "../x/y", "/no/such/folder", "a/b/c", "~/nothing-here"])
def test_a_path_that_is_clearly_local_fails_at_once_naming_it(given, tmp_path, monkeypatch, hub):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()  # `out` is a folder here, so out/c1-smal is a local path
    start = time.perf_counter()
    with pytest.raises(DataError, match=rf"^{given}: no such folder"):
        locate_data(given)
    assert time.perf_counter() - start < 1 and hub.calls == []


def test_an_unknown_repo_id_asks_the_hub_once_and_names_both_readings(tmp_path, monkeypatch, hub):
    monkeypatch.chdir(tmp_path)
    hub.error = ConnectionError("[Errno -2] Name or service not known")
    for _ in range(2):
        with pytest.raises(DataError, match=r"^someone/c1-smal: no local folder of that name, and the Hugging Face "
                                            r"Hub could not be reached \(ConnectionError"):
            locate_data("someone/c1-smal")
    assert hub.calls == ["someone/c1-smal"] * 2  # one request each time: no retries

    class RepositoryNotFoundError(Exception):
        pass

    hub.error = RepositoryNotFoundError("404")
    with pytest.raises(DataError, match="the Hugging Face Hub has no dataset repo of that name"):
        locate_data("someone/other")


def test_every_command_that_takes_data_says_so_in_one_line_without_a_request(tmp_path, monkeypatch, hub):
    from cogen.cli import app

    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "p.jsonl").write_text("")
    for command in (["view", "out/c1-smal", "--no-browser"],
                    ["eval", "--data", "out/c1-smal", "-c", "C1-1", "-s", "test", "-p", "p.jsonl"],
                    ["export", "--data", "out/c1-smal", "-c", "C1-1", "-f", "arc-json", "-o", "arc"],
                    ["prompts", "export", "--data", "out/c1-smal", "-c", "C1-1", "-s", "test", "-o", "q.jsonl"]):
        result = CliRunner().invoke(app, command)
        assert isinstance(result.exception, DataError), (command, result.output)
        assert str(result.exception).startswith("out/c1-smal: no such folder")
    assert hub.calls == []
