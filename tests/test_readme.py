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


def test_the_packaged_specs_the_readme_names_exist_and_each_is_a_registered_familys():
    """The README names packaged specs as examples, and only real ones; every packaged spec is read by a registered
    family (a new family's spec needs no README line: ``--config`` with an unknown name lists them all)."""
    from cogen.family import FAMILIES
    from cogen.specs import load_spec

    listed = re.search(r"a packaged name: (.*?)\) or one config", README, re.S)
    assert listed, "README lost its list of packaged specs in the `cogen build` row"
    named = re.findall(r"`([a-z0-9_/]+)`", listed.group(1))
    assert named and set(named) <= set(packaged_specs()), set(named) - set(packaged_specs())
    assert all(load_spec(name).family in FAMILIES for name in packaged_specs())


def test_differences_table_is_the_one_the_dataset_card_shows():
    from cogen.card.differences import differences_table

    block = re.search(r"<!-- differences:start -->\n(.*?)<!-- differences:end -->", README, re.S)
    assert block, "README lost its differences markers"
    assert block.group(1).strip() == differences_table().strip()
