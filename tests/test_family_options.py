"""Families declare their own options (cogen.family.Option): checked as declared wherever they arrive (the
library, the command line, the Inspect tasks), and a family with a new option changes only its folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cogen.errors import EvalError
from cogen.family import FAMILIES, Option
from cogen.llm import Prompt

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(("option", "value", "expected"), [
    (Option("n", "n.", type=int, minimum=1), "3", 3),
    (Option("n", "n.", type=int), 4.0, 4),
    (Option("x", "x.", type=float), "0.5", 0.5),
    (Option("b", "b.", type=bool), "true", True),
    (Option("b", "b.", type=bool), False, False),
    (Option("s", "s.", choices=("a", "b")), "b", "b"),
    (Option("p", "p.", type=Path), Path("x/y"), "x/y"),
])
def test_a_value_is_converted_to_its_declared_type(option, value, expected):
    assert option.check(value) == expected


@pytest.mark.parametrize(("option", "value", "message"), [
    (Option("n", "n.", type=int, minimum=1), 0, "--n must be at least 1, not 0"),
    (Option("n", "n.", type=int, maximum=9), 10, "--n must be at most 9, not 10"),
    (Option("n", "n.", type=int), 2.5, "--n: takes an integer, not 2.5"),
    (Option("n", "n.", type=int), True, "--n: takes a number, not True"),
    (Option("x", "x.", type=float), "nan", "--x: takes a finite number"),
    (Option("b", "b.", type=bool), "maybe", "--b: takes true or false"),
    (Option("per_thing", "s.", choices=("a", "b")), "c", "--per-thing must be one of a, b, not 'c'"),
    (Option("s", "s.", flag="--other"), 3, "--other: takes text, not 3"),
    (Option("pad", "p.", parse="cogen.families.cogitao.evaluate:parse_pad"), "3", "--pad: '3' is not HxW"),
])
def test_a_bad_value_is_one_line_naming_the_flag(option, value, message):
    with pytest.raises(EvalError, match=message.replace("(", r"\(").replace(")", r"\)")):
        option.check(value)


def test_an_option_of_another_family_names_the_families_that_take_it():
    cogitao = FAMILIES["cogitao"]
    with pytest.raises(EvalError, match="option --queries does not apply to COGITAO configs such as C1-1; it applies "
                                        "to Compositional-ARC configs"):
        cogitao.check_options("eval", {"queries": "first"}, "C1-1")
    assert cogitao.check_options("prompts", {"regime": "coded", "seed": None}) == {"regime": "coded"}


def test_declarations_of_one_name_agree_across_families():
    """The command line has one option per name: families that share a name declare it alike."""
    from cogen.cli._family_options import declared_options

    for command in ("eval", "baseline", "prompts"):
        for name, pairs in declared_options([command]).items():
            kinds = {(o.type, o.option, o.short, o.negatable) for _, o in pairs}
            assert len(kinds) == 1, (command, name, kinds)


def toy_prompts_with_greeting(data, split, *, greeting: str = "Hello"):
    """The toy family's prompt maker with an option of its own (the test below registers it)."""
    from toy_family.prompts import prompts

    for prompt in prompts(data, split):
        yield Prompt(prompt.id, f"{greeting}! {prompt.prompt}", prompt.meta)


REGISTER = """
import dataclasses, sys, types
sys.path.insert(0, {tests!r})
import cogen.family
from cogen.family import Option
from toy_family import TOY
greeting = Option("greeting", "how the prompt begins.", ("prompts",), default="Hello", choices=("Hello", "Hi"))
toy = dataclasses.replace(TOY, options=(greeting,), prompts="test_family_options:toy_prompts_with_greeting")
cogen.family.FAMILIES = types.MappingProxyType({{**cogen.family.FAMILIES, "toy": toy}})
from cogen.cli import main
sys.argv = ["cogen", *sys.argv[1:]]
main()
"""


@pytest.mark.slow
def test_an_option_declared_in_a_familys_folder_reaches_the_command_line(tmp_path, monkeypatch):
    """Nothing outside the record and the prompt maker changes: ``--greeting`` appears in ``cogen prompts export``
    and ``cogen prompts run``, with its help and its choices checked, and reaches the prompt maker."""
    from toy_family.testing import TINY

    from cogen.pipeline import build

    code = REGISTER.format(tests=str(ROOT / "tests"))
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"}

    def command(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env)

    for words in (["prompts", "export"], ["prompts", "run"]):
        shown = command(*words, "--help")
        assert shown.returncode == 0 and "--greeting" in shown.stdout and "Toy mirrors: how the prompt" in shown.stdout
    spec = tmp_path / "toy.yaml"
    spec.write_text(TINY.spec)
    from toy_family import TOY

    import cogen.family

    monkeypatch.setattr(cogen.family, "FAMILIES", {**cogen.family.FAMILIES, "toy": TOY})
    build(spec, tmp_path / "data", workers=1)
    out = tmp_path / "prompts.jsonl"
    done = command("prompts", "export", "-d", str(tmp_path / "data"), "-c", TINY.config, "-s", TINY.split, "-o", str(out),
                 "--greeting", "Hi", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text().splitlines()[0])["prompt"].startswith("Hi! Mirror this grid")
    refused = command("prompts", "export", "-d", str(tmp_path / "data"), "-c", TINY.config, "-s", TINY.split, "-o", str(out),
                    "--greeting", "Yo")
    assert refused.returncode == 2 and "--greeting must be one of Hello, Hi, not 'Yo'" in refused.stderr

