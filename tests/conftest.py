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
from collections.abc import Mapping  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402  (after the environment set-up above, on purpose)


@pytest.fixture
def pooled(monkeypatch):
    """Builds start their worker pool however small they are (the driver runs local builds under
    ``TINY_BUILD_ROWS`` rows itself): for tests whose point is that workers never change a byte."""
    from cogen.pipeline import driver

    monkeypatch.setattr(driver, "TINY_BUILD_ROWS", 0)


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


# --- Builds shared by the tests that only read them -------------------------------------------
class SharedBuilds:
    """Build folders made once per test session and shared by every test that asks for the same builds.

    ``shared_build(spec, **options)`` is the folder of ``cogen.pipeline.build(spec, folder, workers=1,
    **options)``, where ``spec`` is a packaged spec name or YAML text; ``shared_build.folder((spec,
    options), ...)`` builds several specs, each into a folder of its own, and merges them into one. Every folder is read-only: a test that must
    change one copies it first, and the session ends with an error naming any folder a test changed.
    """

    def __init__(self, root: Path):
        self.root = root
        self.folders: dict[str, tuple[Path, dict[str, str]]] = {}

    def __call__(self, spec: str, **options) -> Path:
        return self.folder((spec, options))

    def folder(self, *builds: tuple[str, dict]) -> Path:
        key = repr(builds)
        if key not in self.folders:
            from cogen.pipeline import build

            folder = self.root / f"build-{len(self.folders)}"
            parts = [folder] if len(builds) == 1 else [self.root / f"part-{len(self.folders)}-{n}" for n in range(len(builds))]
            for number, ((spec, options), part) in enumerate(zip(builds, parts, strict=True)):
                if "\n" in spec:  # YAML text, not a packaged name
                    path = self.root / f"spec-{len(self.folders)}-{number}.yaml"
                    path.write_text(spec, encoding="utf-8")
                    spec = path
                build(spec, part, **{"workers": 1, **options})
            if len(parts) > 1:  # a folder holds one build: several builds are merged into one folder
                from cogen.hub import merge

                merge(parts, folder)
            self.folders[key] = folder, _digests(folder)
        return self.folders[key][0]

    def changed(self) -> list[str]:
        """The folders whose files differ from what their builds wrote."""
        return [str(folder) for folder, digests in self.folders.values() if _digests(folder) != digests]


def _digests(folder: Path) -> dict[str, str]:
    import hashlib

    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and ".cogen" not in p.relative_to(folder).parts}


@pytest.fixture(scope="session")
def shared_build(tmp_path_factory):
    """The session's :class:`SharedBuilds` (read-only folders; copy one to change it)."""
    builds = SharedBuilds(tmp_path_factory.mktemp("shared"))
    yield builds
    changed = builds.changed()
    assert not changed, f"tests changed shared read-only builds (copy a build to change it): {changed}"


class TinyBuilds(Mapping):
    """The tiny build of every registered family (its ``testing`` role's ``TINY``, :mod:`cogen.kit.testing`), by
    family name, made on first use and shared read-only (:class:`SharedBuilds`)."""

    def __init__(self, builds: SharedBuilds):
        self.builds = builds

    def __getitem__(self, name: str) -> Path:
        tiny = tiny_of(name)
        return self.builds(tiny.spec, **tiny.options)

    def __iter__(self):
        from cogen.family import FAMILIES

        return iter(FAMILIES)

    def __len__(self) -> int:
        from cogen.family import FAMILIES

        return len(FAMILIES)


def tiny_of(name: str):
    """The :class:`cogen.kit.testing.TinyBuild` of family ``name``."""
    from cogen.family import family

    return family(name).load("testing").TINY


@pytest.fixture(scope="session")
def tiny_builds(shared_build) -> TinyBuilds:
    """The tiny build of every registered family, by family name (built when first asked for)."""
    return TinyBuilds(shared_build)


@pytest.fixture(scope="session")
def tiny_cogitao(tiny_builds) -> Path:
    """The tiny COGITAO build (experiment V-1), shared and read-only."""
    return tiny_builds["cogitao"]


@pytest.fixture(scope="session")
def tiny_carc(tiny_builds) -> Path:
    """The tiny Compositional-ARC build (scale 0.001: 100 episodes; a config of every kind), shared and read-only."""
    return tiny_builds["carc"]


@pytest.fixture(scope="session")
def tiny_programs(tiny_builds) -> Path:
    """The tiny programs build (config vp-block, 12 functions), shared and read-only."""
    return tiny_builds["programs"]


@pytest.fixture(scope="session")
def small_build(shared_build):
    """A small real build shared by the publishing and loader tests (read-only: copy it to change it).

    Two CompGen configs and one EnvGen config at scale 0.002 (200 training rows, 2 per other split).
    """
    return shared_build.folder(("c1", {"scale": 0.002, "only": ["C1-1", "C1-2"]}),
                               ("g2", {"scale": 0.002, "only": ["G2-1"]}))


# --- The object bank rebuilt once ---------------------------------------------------------------
_REBUILT_BANKS: dict[tuple, object] = {}


@pytest.fixture(scope="module")
def bank_rebuilt_once():
    """``cogen.bank.build.build_bank`` made once per session and seed (it is a pure function of the code, and
    ``tests/test_bank_build.py`` checks it is deterministic): for modules that run ``verify --regenerate``,
    whose object-bank check rebuilds the bank on every call (half a second each). The comparison with the
    installed bank (:func:`cogen.bank.check_rebuilt`) still runs every time."""
    from cogen.bank import build as bank_build

    real = bank_build.build_bank

    def once(*args, **kwargs):
        key = (args, tuple(sorted(kwargs.items())))
        if key not in _REBUILT_BANKS:
            _REBUILT_BANKS[key] = real(*args, **kwargs)
        return _REBUILT_BANKS[key]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bank_build, "build_bank", once)
        yield
