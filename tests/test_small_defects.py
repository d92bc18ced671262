"""Issue 14's small defects, each pinned: hints name only real commands, --help lists every packaged
spec, --queries is refused on COGITAO configs (preview labels: tests/test_hub_card.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from cogen.cli import app
from cogen.errors import SpecError
from cogen.specs import packaged_specs

runner = CliRunner()


def _commands() -> set[str]:
    import typer.main

    group = typer.main.get_command(app)
    return set(group.commands)


def test_the_missing_spec_hint_names_the_packaged_specs_not_a_missing_command(tmp_path):
    from cogen.specs._yaml import read_located

    with pytest.raises(SpecError) as error:
        read_located(tmp_path / "missing.yaml")
    message = str(error.value)
    assert "carc_extended" in message and "as_run/c1" in message
    for command in re.findall(r"`cogen (\w+)", message):
        assert command in _commands(), command


def test_every_hinted_cogen_command_exists():
    """Every `cogen <command>` named in a message of the package is a real command."""
    from pathlib import Path

    import cogen

    commands = _commands()
    for path in Path(cogen.__file__).parent.rglob("*.py"):
        for command in re.findall(r"`cogen ([a-z][\w-]*)", path.read_text(encoding="utf-8")):
            assert command in commands, f"{path.name} names `cogen {command}`"


@pytest.mark.slow
def test_build_help_lists_every_packaged_spec():
    result = subprocess.run([sys.executable, "-m", "cogen", "build", "--help"], capture_output=True, text=True,
                            timeout=60, env={**os.environ, "COLUMNS": "400", "TERMINAL_WIDTH": "400"})
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.replace("│", " ").split())
    for name in packaged_specs():
        assert re.search(rf"[ (]{re.escape(name)}[,)]", text), name


@pytest.mark.parametrize("command", [
    ["eval", "--predictions", "{preds}"],
    ["eval", "baseline", "--out", "{preds}"],
    ["prompts", "export", "--out", "{prompts}"],
])
def test_queries_is_refused_on_cogitao_configs(small_build, tmp_path, command):
    """A valid --queries (a Compositional-ARC option) on a COGITAO config is refused naming both families; a
    value no family takes is refused before any data is read (a usage error, exit 2)."""
    preds = tmp_path / "p.jsonl"
    assert runner.invoke(app, ["eval", "baseline", "--data", str(small_build), "--config", "C1-1", "--split", "test",
                               "--out", str(preds)]).exit_code == 0
    args = [a.format(preds=preds, prompts=tmp_path / "q.jsonl") for a in command]
    result = runner.invoke(app, [*args, "--data", str(small_build), "--config", "C1-1", "--split", "test",
                                 "--queries", "first"])
    assert result.exit_code == 1
    assert "queries" in str(result.exception) and "COGITAO" in str(result.exception)
    assert "Compositional-ARC" in str(result.exception) or "prompts" in str(result.exception)
    bogus = runner.invoke(app, [*args, "--data", str(small_build), "--config", "C1-1", "--split", "test",
                                "--queries", "bogus"])
    assert bogus.exit_code == 2 and "--queries must be one of" in bogus.output and "bogus" in bogus.output
