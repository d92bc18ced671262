"""Every ``cogen`` command follows the CLI conventions of ``cogen/cli/_help.py``: checked over the live command
tree, so a command added later is held to them the moment it exists."""

from __future__ import annotations

import json
import re
import shlex

import pytest
import typer
from rich.text import Text
from typer.testing import CliRunner

from cogen.cli import app

runner = CliRunner()
ROOT = typer.main.get_command(app)


def commands(command=ROOT, path=("cogen",)):
    """(path, command) of the root, every group and every command."""
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from commands(sub, (*path, name))


COMMANDS = dict(commands())


def resolve(argv: list[str]) -> tuple[tuple[str, ...], dict]:
    """The command path an example runs and its parsed options (callbacks included; nothing invoked)."""
    assert argv[0] == "cogen"
    context = ROOT.make_context("cogen", argv[1:])
    command, path = ROOT, ("cogen",)
    while hasattr(command, "commands") and (rest := [*context._protected_args, *context.args]):
        name, command, rest = command.resolve_command(context, rest)
        path += (name,)
        context = command.make_context(name, rest, parent=context)
    return path, context.params


def examples_of(command) -> list[str]:
    lines = (command.epilog or "").splitlines()
    assert lines[:2] in (["\b", "Example:"], ["\b", "Examples:"]), "give the command epilog=examples(...)"
    return [line.strip() for line in lines[2:]]


@pytest.mark.parametrize("path", list(COMMANDS), ids=" ".join)
def test_every_command_shows_examples_that_parse(path):
    for example in examples_of(COMMANDS[path]):
        target, _ = resolve(shlex.split(example))
        assert target[:len(path)] == path, f"{example!r} runs {' '.join(target)}, not a {' '.join(path)} command"


@pytest.mark.parametrize("path", list(COMMANDS), ids=" ".join)
def test_h_is_help_and_the_help_ends_with_the_examples(path):
    result = runner.invoke(app, [*path[1:], "-h"])
    assert result.exit_code == 0, result.output
    assert "Usage: " in result.output and "Example" in result.output
    assert examples_of(COMMANDS[path])[0] in result.output


def _help_texts():
    for path, command in COMMANDS.items():
        yield " ".join(path), command.help or ""
        for param in command.params:
            yield f"{' '.join(path)} {param.name}", getattr(param, "help", None) or ""


def test_defaults_are_shown_by_typer_and_no_help_text_is_eaten_by_markup():
    for where, text in _help_texts():
        assert not re.search(r"\[default|\(default|default:", text, re.I), \
            f"{where}: give the option its default, or show_default='...', not a default in the help text"
        assert Text.from_markup(text).plain == text, f"{where}: rich markup would change this help text"


def test_json_is_a_flag_everywhere_and_a_file_is_json_out():
    flags = {" ".join(path): param for path, command in COMMANDS.items() for param in command.params
             if "--json" in getattr(param, "opts", ())}
    assert {"cogen build", "cogen verify", "cogen export", "cogen eval", "cogen eval programs"} <= set(flags)
    assert all(param.is_flag for param in flags.values())
    files = [param for command in COMMANDS.values() for param in command.params
             if "--json-out" in getattr(param, "opts", ())]
    assert len(files) == 2 and not any(param.is_flag for param in files)


def test_the_old_eval_json_file_is_read_as_json_out_with_a_note():
    from cogen.cli.evaluate import _old_json_out

    commands_ = {"baseline", "programs"}
    assert _old_json_out(["-d", "x", "--json", "m.json"], commands_) == ["-d", "x", "--json-out", "m.json"]
    assert _old_json_out(["--json=m.json"], commands_) == ["--json-out=m.json"]
    for unchanged in (["--json"], ["--json", "--no-breakdown"], ["--json", "programs"], ["--json-out", "m.json"]):
        assert _old_json_out(unchanged, commands_) == unchanged
    path, params = resolve(["cogen", "eval", "-d", "x", "-c", "C1-1", "-p", "p.jsonl", "--json", "m.json"])
    assert path == ("cogen", "eval") and str(params["json_out"]) == "m.json" and params["json_output"] is False
    path, params = resolve(["cogen", "eval", "programs", "-d", "x", "-p", "p.jsonl", "--json", "t.json"])
    assert path == ("cogen", "eval", "programs") and str(params["json_out"]) == "t.json"


def test_eval_json_prints_the_metrics_on_stdout(small_build, tmp_path):
    predictions = tmp_path / "p.jsonl"
    base = ["eval", "-d", str(small_build), "-c", "C1-1", "-s", "test_ood"]
    assert runner.invoke(app, ["eval", "baseline", *base[1:], "--kind", "target", "-o", str(predictions)]).exit_code == 0
    result = runner.invoke(app, [*base, "-p", str(predictions), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["grid_accuracy"] == 1.0
    old = runner.invoke(app, [*base, "-p", str(predictions), "--json", str(tmp_path / "m.json")])
    assert old.exit_code == 0 and "`--json FILE` is now `--json-out FILE`" in old.stderr
    assert json.loads((tmp_path / "m.json").read_text())["grid_accuracy"] == 1.0


def complete(words: str) -> list[str]:
    """What bash completion offers after ``words`` (the last word is the one being completed)."""
    parts = words.split(" ")
    environment = {"_COGEN_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(len(parts) - 1)}
    result = runner.invoke(app, [], env=environment, prog_name="cogen")
    assert result.exit_code == 0, result.output
    return result.stdout.split()


def test_completion_offers_specs_configs_formats_views_and_transformations(small_build):
    from cogen._resources import packaged_specs
    from cogen.engine.registry import TRANSFORMS
    from cogen.export import formats
    from cogen.folder import read_manifests

    assert set(packaged_specs()) <= set(complete("cogen build --config "))
    assert complete("cogen build --config C3-") == ["C3-1", "C3-2", "C3-3", "C3-4", "C3-5"]
    assert complete(f"cogen eval -d {small_build} -c ") == list(read_manifests(small_build))
    assert complete(f"cogen prompts export -d {small_build} -c C1-") == ["C1-1", "C1-2"]
    assert complete(f"cogen render {small_build} --config G") == ["G2-1"]
    assert complete(f"cogen view {small_build} -c C1-") == ["C1-1", "C1-2"]
    assert complete("cogen export -f ") == list(formats())
    assert complete("cogen export --columns cogitao") == ["cogitao-release"]
    assert complete("cogen sample -t rot90,mirror_") == [f"rot90,{n}" for n in TRANSFORMS if n.startswith("mirror_")]
    assert complete("cogen eval -d no-such-folder -c ") == []
