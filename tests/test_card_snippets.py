"""The dataset card's code works: every Python block of a built folder's card, pointed at the folder, runs.

A Hub visitor copies the card's Load lines first, so each block is executed as written (the repo id
``<org>/<name>`` replaced by the build folder, which ``datasets`` and cogen's loaders read like a repo),
and every comment that states an array's shape is checked against the array the block made. The fast
lane runs the tiny build of every family; the slow lane builds every packaged spec small and runs the
blocks of each card, then of a folder merged from one spec of each family.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cogen.card.body import REPO_PLACEHOLDER
from cogen.family import FAMILIES

BLOCK = re.compile(r"```python\n(.*?)```", re.S)
#: ``arrays["key"]  # (rows, n, 30, 30) ...`` and ``batch["key"]  # torch.int8 (64, 30, 30)``
SHAPE_COMMENT = re.compile(r'^\s*(?P<name>arrays|batch)\["(?P<key>\w+)"\]\s+#\s+(?:torch\.int8 )?\((?P<dims>[^)]*)\)', re.M)


def card_blocks(folder: Path) -> list[str]:
    """The card's Python blocks, pointed at ``folder``."""
    text = (folder / "README.md").read_text(encoding="utf-8")
    return [block.replace(REPO_PLACEHOLDER, str(folder)) for block in BLOCK.findall(text)]


def _check_shapes(block: str, namespace: dict) -> int:
    """Every shape comment of ``block`` against the array it names (ndim, and each number it states)."""
    checked = 0
    for match in SHAPE_COMMENT.finditer(block):
        value = namespace[match["name"]][match["key"]]
        dims = [d.strip() for d in match["dims"].split(",")]
        shape = tuple(value.shape)
        assert len(shape) == len(dims), (match.group(0), shape)
        for stated, actual in zip(dims[1:], shape[1:], strict=True):  # the first is rows / the batch
            assert not stated.isdigit() or int(stated) == actual, (match.group(0), shape)
        if match["name"] == "batch":
            assert str(value.dtype) == "torch.int8", match.group(0)
        checked += 1
    return checked


def run_card_blocks(folder: Path) -> list[int]:
    """Run every block of ``folder``'s card; returns the shape comments each one checked."""
    checked = []
    for number, block in enumerate(card_blocks(folder)):
        if "GridDataset" in block:
            pytest.importorskip("torch")
        namespace: dict = {"__name__": "__card__"}
        exec(compile(block, f"{folder.name}/README.md#python-{number}", "exec"), namespace)  # noqa: S102
        checked.append(_check_shapes(block, namespace))
    return checked


@pytest.fixture(autouse=True)
def _datasets_cache(tmp_path, monkeypatch):
    """``load_dataset`` keeps its cache in the test's folder, never in the user's."""
    import datasets.config

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "datasets-cache")


@pytest.mark.parametrize("name", list(FAMILIES))
def test_every_block_of_a_tiny_build_card_runs(tiny_builds, name):
    checked = run_card_blocks(tiny_builds[name])
    assert len(checked) == 3 and sum(checked) >= 3  # datasets, NumPy arrays, PyTorch; shapes stated and true


def test_the_card_loads_a_split_the_config_has_and_names_its_arrays(tiny_builds):
    for name, folder in tiny_builds.items():
        text = (folder / "README.md").read_text(encoding="utf-8")
        for split in re.findall(r'split="(\w+)"', text):
            assert any(f"  - split: {split}\n" in part for part in text.split("config_name")[1:]), (name, split)


def test_a_runner_that_misses_a_wrong_snippet_would_be_useless(tiny_builds, tmp_path):
    """A planted wrong split or array key fails, so a passing card means working code."""
    import shutil

    folder = tmp_path / "copy"
    shutil.copytree(tiny_builds["carc"], folder)
    card = folder / "README.md"
    text = card.read_text(encoding="utf-8")
    for planted in (re.sub(r'split="test"\)', 'split="test_ood")', text, count=1),
                    text.replace('arrays["study_inputs"]', 'arrays["input"]', 1)):
        assert planted != text
        card.write_text(planted, encoding="utf-8")
        with pytest.raises((ValueError, KeyError)):
            run_card_blocks(folder)


@pytest.fixture(scope="module")
def packaged_builds(shared_build) -> dict[str, Path]:
    """Every packaged spec built small (test_build's scale), each into a folder of its own (the session's builds)."""
    from test_build import PACKAGED_SCALE

    from cogen.specs import packaged_specs

    return {name: shared_build(name, scale=PACKAGED_SCALE) for name in sorted(packaged_specs())}


@pytest.mark.slow
def test_every_block_of_every_packaged_spec_card_runs(packaged_builds, tmp_path):
    import json

    from cogen.hub import merge

    runs: dict[str, int] = {}
    for folder in packaged_builds.values():
        family = json.loads(next((folder / "manifests").glob("*.json")).read_text())["family"]
        runs[family] = runs.get(family, 0) + len(run_card_blocks(folder))
    merged = tmp_path / "merged"
    merge([packaged_builds["c3"], packaged_builds["carc"], packaged_builds["programs"]], merged)
    assert len(run_card_blocks(merged)) == 9  # three blocks for each family's default config
    assert set(runs) == {"cogitao", "carc", "programs"} and all(runs.values())
