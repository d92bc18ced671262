"""Every install line names cogen's own distribution, and every optional import fails with one line naming its extra.

``cogen`` on PyPI is an unrelated 2009 package, so a bare ``pip install cogen`` anywhere (a dataset
card, an error hint, the README) would send a user to it.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from cogen.errors import DISTRIBUTION, OPTIONAL_MODULES, MissingDependencyError, install_hint, optional_import

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
#: ``pip install`` of the import name, bare or with extras, possibly after -U / --upgrade and a quote.
BARE = re.compile(r"pip3?\s+install\s+(?:(?:-U|--upgrade|-q|--quiet)\s+)*['\"]?cogen(?![-\w])")
#: An install of the distribution with extras: ``cogen-arc[rgb]``, ``cogen-arc[dask,s3]``.
EXTRAS = re.compile(re.escape(DISTRIBUTION) + r"\[([\w,\s]+)\]")


def texts() -> dict[str, str]:
    """Every text a user reads: README, docs, the card template, CI, pyproject, and the code (hints, docstrings)."""
    paths = [ROOT / "README.md", ROOT / "hub_card.md", ROOT / "pyproject.toml", ROOT / ".ci" / "run",
             *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "cogen").rglob("*.py")),
             *sorted((ROOT / "cogen_baselines").rglob("*.py"))]
    return {str(path.relative_to(ROOT)): path.read_text(encoding="utf-8") for path in paths}


def test_the_distribution_is_cogen_arc_and_no_text_installs_cogen_bare():
    assert PYPROJECT["project"]["name"] == DISTRIBUTION == "cogen-arc"
    assert PYPROJECT["project"]["scripts"] == {"cogen": "cogen.cli:entry"}  # the command keeps its name
    found = [f"{name}:{text[:match.start()].count(chr(10)) + 1}: {match.group(0)}"
             for name, text in texts().items() for match in BARE.finditer(text)]
    assert found == []
    assert BARE.search("see `pip install 'cogen[rgb]'`") and BARE.search("pip install -U cogen")  # the pattern bites
    assert not BARE.search("pip install cogen-arc") and not BARE.search("pip install 'cogen-arc[rgb]'")


def test_every_extra_an_install_line_names_exists():
    extras = set(PYPROJECT["project"]["optional-dependencies"])
    named = {extra.strip() for text in texts().values() for match in EXTRAS.finditer(text)
             for extra in match.group(1).split(",")}
    assert {"baselines", "rgb", "dask", "s3"} <= named <= extras
    assert {extra for _, extra in OPTIONAL_MODULES.values()} <= extras


def test_the_card_names_the_install_and_no_made_up_repository():
    card = (ROOT / "hub_card.md").read_text(encoding="utf-8")
    assert f"pip install {DISTRIBUTION}" in card and "github.com/cogen-dev" not in card


def test_readme_shows_the_cpu_and_gpu_torch_paths():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in readme
    assert "Python 3.11" in readme and f"pip install {DISTRIBUTION}" in readme


def _one_line(error: Exception, extra: str) -> str:
    message = str(error)
    hint = install_hint(extra)
    assert "\n" not in message and (message.endswith(hint) or f"{hint} (" in message), message
    return message


def test_optional_imports_fail_with_one_line_naming_the_extra(monkeypatch):
    for module in ("torch", "PIL", "PIL.Image", "dask", "dask.distributed", "s3fs"):
        monkeypatch.setitem(sys.modules, module, None)  # as if it were not installed
    from cogen.io import Collate, GridDataset
    from cogen.render import RenderSettings, encode

    with pytest.raises(MissingDependencyError) as caught:
        GridDataset(arrays={"input": np.zeros((2, 3, 3), np.int8)})
    assert _one_line(caught.value, "baselines").startswith("GridDataset")
    assert "download.pytorch.org/whl/cpu" in str(caught.value)
    with pytest.raises(MissingDependencyError, match=re.escape(install_hint("baselines"))):
        Collate(size=3)([{"input": [[1]]}])
    with pytest.raises(MissingDependencyError) as caught:
        encode(np.zeros((4, 4, 3), np.uint8), RenderSettings(size=4))
    _one_line(caught.value, "rgb")
    with pytest.raises(ImportError):  # a MissingDependencyError is an ImportError too
        optional_import("dask.distributed", "the dask executor")
    with pytest.raises(MissingDependencyError) as caught:
        optional_import("s3fs", "s3://bucket/x")
    _one_line(caught.value, "s3")
    with pytest.raises(ModuleNotFoundError):  # not an optional dependency: the real error
        optional_import("cogen_no_such_module", "nothing")


def test_baselines_without_torch(monkeypatch):
    import cogen_baselines

    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(MissingDependencyError) as caught:
        cogen_baselines.RunConfig  # noqa: B018 - the attribute access imports the module
    assert _one_line(caught.value, "baselines").startswith("cogen_baselines.RunConfig needs PyTorch")
    assert callable(cogen_baselines.results_table)  # the table writer needs no torch


def test_stream_torch_dataset_without_torch(monkeypatch):
    from cogen.stream import SampleStream

    stream = SampleStream("c1", "C1-1", batch_size=4)
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(MissingDependencyError) as caught:
        stream.torch_dataset()
    assert _one_line(caught.value, "baselines").startswith("SampleStream.torch_dataset() needs PyTorch")
