"""The README and the reference pages stay true: generated tables match the code, the test install and
command are CI's, and every packaged spec is named."""

from __future__ import annotations

import re
from pathlib import Path

from cogen.engine.registry import markdown_table
from cogen.specs import packaged_specs

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SPECS = (ROOT / "docs" / "specs.md").read_text(encoding="utf-8")
DIFFERENCES = (ROOT / "docs" / "differences.md").read_text(encoding="utf-8")
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_transformation_table_is_generated_from_the_registry():
    block = re.search(r"<!-- transforms:start -->\n(.*?)<!-- transforms:end -->", SPECS, re.S)
    assert block, "docs/specs.md lost its transforms markers"
    assert block.group(1) == markdown_table(), "refresh the block with `cogen transforms --markdown`"


def _extras(text: str) -> set[str]:
    return {extra for match in re.finditer(r'pip install[^\n]*-e "\.\[([\w,]+)\]"', text)
            for extra in match.group(1).split(",")}


def test_the_readme_installs_and_tests_as_ci_does():
    block = re.search(r"## Test\n\n```bash\n(.+?)\n```", README, re.S).group(1)
    commands = [line.split("#")[0].strip() for line in block.splitlines()]
    assert commands[-1] == "python -m pytest -q" and commands[-1] in CI
    assert _extras(block) == _extras(CI) and _extras(CI)  # the extras that make the run skip-free
    assert "torch --index-url https://download.pytorch.org/whl/cpu" in block
    for package in ("chromium", "bubblewrap", "libseccomp2"):  # the system packages CI installs
        assert package in block and package in CI


def test_the_runtime_install_comes_before_the_test_install():
    assert README.index("pip install cogen-arc") < README.index("pip install -e .") < README.index("## Test")
    assert "[test" not in README.split("## Test")[0]


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

    block = re.search(r"<!-- differences:start -->\n(.*?)<!-- differences:end -->", DIFFERENCES, re.S)
    assert block, "docs/differences.md lost its differences markers"
    assert block.group(1).strip() == differences_table().strip()


def test_every_local_link_of_the_readme_and_docs_leads_to_a_file():
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if "://" not in target:
                assert (page.parent / target).exists(), f"{page.name} links to {target}, which does not exist"
