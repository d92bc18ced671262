"""The README stays true: generated tables match the code, its commands match CI."""

from __future__ import annotations

import re
from pathlib import Path

from cogen.engine.registry import markdown_table
from cogen.specs import packaged_specs

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_transformation_table_is_generated_from_the_registry():
    block = re.search(r"<!-- transforms:start -->\n(.*?)<!-- transforms:end -->", README, re.S)
    assert block, "README lost its transforms markers"
    assert block.group(1) == markdown_table(), "refresh the block with `cogen transforms --markdown`"


def test_ci_runs_the_readme_test_command():
    test_command = re.search(r"## Test\n\n```bash\n(.+)\n```", README).group(1)
    assert test_command in (ROOT / ".ci" / "run").read_text()


def test_readme_names_every_packaged_spec():
    for name in packaged_specs():
        assert f"`{name}`" in README, f"README does not mention the packaged spec {name}"


def test_differences_table_is_the_one_the_dataset_card_shows():
    from cogen.card.differences import differences_table

    block = re.search(r"<!-- differences:start -->\n(.*?)<!-- differences:end -->", README, re.S)
    assert block, "README lost its differences markers"
    assert block.group(1).strip() == differences_table().strip()
