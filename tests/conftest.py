"""Test-wide settings: never reach the real Hub, wide terminals for readable CLI assertions."""

import os

# Read at import time by huggingface_hub / datasets / typer, so set before anything imports them.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TERMINAL_WIDTH", "200")
os.environ.setdefault("COLUMNS", "200")
# Programs run confined (bubblewrap); on a machine without it, the tests' own trusted programs run with
# the explicit opt-in, and the tests that need isolation skip (tests/sandbox_support.py).
if os.environ.get("COGEN_REQUIRE_SANDBOX") != "1":
    from sandbox_support import problem  # noqa: E402

    if problem() is not None:
        os.environ["COGEN_UNSAFE_RUN_UNTRUSTED_CODE"] = "1"


# --- Loopback Hub (tests/fake_hub.py) for the publishing tests -------------------------------
import pytest  # noqa: E402  (after the environment set-up above, on purpose)


@pytest.fixture
def fake_hub(monkeypatch, tmp_path):
    """A Hub-compatible server on 127.0.0.1; the real huggingface_hub and datasets clients talk to it.

    Offline mode is turned off only for this test's clients, by patching the module constants
    that both libraries read at import time (and the environment, which ``cogen push`` reads).
    Caches and the token file go to ``tmp_path``; Xet is disabled (the fake speaks plain LFS).
    """
    import datasets.config
    from fake_hub import serve
    from huggingface_hub import constants

    server, url, hub = serve()
    for module, name, value in [
        (constants, "ENDPOINT", url),
        (constants, "HUGGINGFACE_CO_URL_TEMPLATE", url + "/{repo_id}/resolve/{revision}/{filename}"),
        (constants, "HF_HUB_OFFLINE", False),
        (constants, "HF_HUB_DISABLE_XET", True),
        (constants, "HF_HUB_CACHE", str(tmp_path / "hub-cache")),
        (constants, "HF_TOKEN_PATH", str(tmp_path / "token")),
        (constants, "HF_STORED_TOKENS_PATH", str(tmp_path / "stored_tokens")),
        (datasets.config, "HF_ENDPOINT", url),
        (datasets.config, "HUB_DATASETS_URL", url + "/datasets/{repo_id}/resolve/{revision}/{path}"),
        (datasets.config, "HF_HUB_OFFLINE", False),
        (datasets.config, "HF_DATASETS_OFFLINE", False),
        (datasets.config, "HF_DATASETS_CACHE", tmp_path / "datasets-cache"),
    ]:
        monkeypatch.setattr(module, name, value)
    monkeypatch.setenv("HF_ENDPOINT", url)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HUGGING_FACE_HUB_TOKEN", raising=False)
    hub.url = url
    yield hub
    hub.wake.set()  # end any injected stall
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def small_build(tmp_path_factory):
    """A small real build shared by the publishing and loader tests (read-only: copy it to change it).

    Two CompGen configs and one EnvGen config at scale 0.002 (200 training rows, 2 per other split).
    """
    from cogen.hub import merge
    from cogen.pipeline import build

    parts = tmp_path_factory.mktemp("small-build-parts")  # a folder holds one build: two builds are merged
    build("c1", parts / "c1", scale=0.002, workers=1, only=["C1-1", "C1-2"])
    build("g2", parts / "g2", scale=0.002, workers=1, only=["G2-1"])
    out = tmp_path_factory.mktemp("small-build")
    merge([parts / "c1", parts / "g2"], out)
    return out
