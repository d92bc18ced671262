"""Program replies end to end: prompt export, code extraction, hostile programs scored (never obeyed),
``cogen eval`` and ``cogen eval programs`` on the CLI, and clear errors for bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cogen.cli import app
from cogen.errors import EvalError
from cogen.eval import evaluate
from cogen.families.programs.code import extract_code
from cogen.families.programs.evaluate import evaluate_table
from cogen.families.programs.functions import INPUTS
from cogen.families.programs.prompts import PROMPT_VERSION, split_prompts
from cogen.families.programs.styles import STYLES, corrupt, program
from cogen.folder import read_split
from cogen.llm import export_prompts
from cogen.pipeline import build

runner = CliRunner()
SPEC = """\
setting: Q
family: programs
seed: 5
functions: 6
settings: [horizontal, random]
"""


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("programs-eval")
    (folder / "q.yaml").write_text(SPEC)
    build(folder / "q.yaml", folder / "out", workers=1)
    return folder / "out"


def _rows(data, config="Q-horizontal"):
    return read_split(data, config, "test").table.to_pylist()


def _solution(row, style="letter_dicts") -> str:
    patterns = [[c == "*" for c in p] for p in row["patterns"]]
    return program(style, np.array(row["cell_groups"]), patterns)


def _write(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


# ---------------------------------------------------------------- code extraction
@pytest.mark.parametrize(("reply", "code"), [
    ("```python\ndef f(s):\n    return s\n```", "def f(s):\n    return s\n"),
    ("Sure.\n```py\nimport os\n```\nThen:\n```python\ndef f(s):\n    return 1\n```\nDone.", "def f(s):\n    return 1\n"),
    ("Here it is:\n\nROWS = {'A': '.*.*'}\ndef f(s):\n    return ROWS[s[0]]\n\nIt maps each letter.",
     "ROWS = {'A': '.*.*'}\ndef f(s):\n    return ROWS[s[0]]\n"),
    ("def f(s):\n    return s", "def f(s):\n    return s\n"),
    ("```\ndef f(s):\n  return 2\n", "def f(s):\n  return 2\n"),   # an unclosed fence runs to the end
    ("```python\ndef f(s) return\n```", "def f(s) return\n"),    # kept: the scorer reports the syntax error
    ("exec('T = 1')\n\n\ndef f(s):\n    return T\n", "exec('T = 1')\n\n\ndef f(s):\n    return T\n"),  # all of it
])
def test_code_is_extracted_whether_fenced_or_not(reply, code):
    assert extract_code(reply) == (code, None)


@pytest.mark.parametrize("reply", ["I cannot solve this.", "", "   ", None, 42, "```text\nhello\n```", "Sorry"])
def test_replies_without_code(reply):
    assert extract_code(reply) == (None, "no code")


# ---------------------------------------------------------------- prompts
def test_prompts_show_all_16_pairs_and_carry_their_version(data, tmp_path):
    out = tmp_path / "prompts.jsonl"
    assert export_prompts(data, "Q-random", "test", out) == 6
    record = json.loads(out.read_text().splitlines()[0])
    row = _rows(data, "Q-random")[0]
    assert record["id"] == row["id"] and record["prompt_version"] == PROMPT_VERSION == "programs-v1"
    assert record["setting"] == "random" and record["family"] == "programs"
    for text, grid in zip(row["inputs"], row["outputs"], strict=True):
        assert f"{text} ->\n{grid}\n" in record["prompt"]
    assert "`f(s: str) -> str`" in record["prompt"] and "standard library" in record["prompt"]
    with pytest.raises(EvalError, match="prompt version 'programs-v0'"):
        next(split_prompts(data, read_split(data, "Q-random", "test"), version="programs-v0"))
    with pytest.raises(EvalError, match="option --regime does not apply to String-to-grid programs configs"):
        export_prompts(data, "Q-random", "test", out, regime="coded")


# ---------------------------------------------------------------- the sandbox (attacks: tests/test_sandbox_hostile.py)
def test_the_sandbox_survives_a_program_that_kills_its_server(tmp_path):
    from cogen.sandbox import Sandbox

    with Sandbox(workers=1, timeout=1.0) as box:
        first, second = box.run(["import os\nos.kill(os.getppid(), 9)\n", "def f(s):\n    return ['....'] * 4\n"], INPUTS)
        assert first.fate == "ok" and "PermissionError" in first.reasons[0]  # the kernel refused the signal
        assert second.outputs[0] == "." * 16 and second.function == "f"
        other, = box.run(["def helper(a, b):\n    return a\ndef solve(s):\n    return '....\\n' * 4\n"], INPUTS)
        assert other.function == "solve" and other.outputs == ("." * 16,) * 16  # no f: the one-argument function


# ---------------------------------------------------------------- cogen eval
def _replies(data, path: Path) -> Path:
    records = []
    for config in ("Q-horizontal", "Q-random"):
        for k, row in enumerate(_rows(data, config)):
            style = sorted(STYLES)[k % len(STYLES)]
            records.append({"id": row["id"], "model": "oracle", "prompt_version": PROMPT_VERSION,
                            "reply": f"Here is the program.\n```python\n{_solution(row, style)}```\nDone."})
            patterns = [[c == "*" for c in p] for p in row["patterns"]]
            sloppy = corrupt(np.array(row["cell_groups"]), patterns, range(k)) if k else "no idea"
            records.append({"id": row["id"], "model": "sloppy", "prompt_version": PROMPT_VERSION, "reply": sloppy})
    return _write(path, records)


def test_cogen_eval_scores_every_model_and_explains_itself(data, tmp_path):
    replies = _replies(data, tmp_path / "replies.jsonl")
    metrics = evaluate(data, "Q-horizontal", "test", replies, explain=True)
    assert metrics["family"] == "programs" and metrics["n"] == 12 and metrics["n_valid"] == 11
    oracle, sloppy = metrics["models"]["oracle"], metrics["models"]["sloppy"]
    assert oracle["errors"] == 0 and oracle["functions"] == 6 and oracle["valid"] == 6
    assert sloppy["errors"] == pytest.approx((16 + 1 + 2 + 3 + 4 + 5) / 6) and sloppy["c"] == 0.0
    assert metrics["prompt_versions"] == [PROMPT_VERSION]
    assert all(f["prompt_version"] == PROMPT_VERSION for f in metrics["functions"])
    assert metrics["format_errors"]["reasons"] == {"no code": 1} and metrics["format_errors"]["extra_ids"] == 6
    assert len(metrics["explanations"]) == 12 and "| oracle |" in metrics["markdown"]


def test_cli_eval_explain_markdown_and_json(data, tmp_path):
    replies = _replies(data, tmp_path / "replies.jsonl")
    result = runner.invoke(app, ["eval", "-d", str(data), "-c", "Q-horizontal", "-s", "test", "-p", str(replies),
                                 "--explain", "--markdown", str(tmp_path / "t.md"), "--json-out", str(tmp_path / "m.json"),
                                 "--timeout", "3", "--memory-mb", "128", "--workers", "1", "--low-length", "100",
                                 "--low-errors", "2"])
    assert result.exit_code == 0, result.output
    assert "combination {" in result.stdout and "m +" in result.stdout and "Σn = " in result.stdout
    assert "oracle: L(P+) / E / C" in result.stdout and "prompt versions" in result.stdout
    assert "| Model | Horizontal |  |  | n_valid / n |" in (tmp_path / "t.md").read_text()
    metrics = json.loads((tmp_path / "m.json").read_text())
    assert metrics["report"]["thresholds"] == {"low_length": 100.0, "low_errors": 2.0}
    isolation = "none" if os.environ.get("COGEN_UNSAFE_RUN_UNTRUSTED_CODE") == "1" else "bubblewrap"
    assert metrics["sandbox"] == {"timeout": 3.0, "wall_limit": 20.0, "memory_mb": 128, "workers": 1,
                                  "isolation": isolation}


def test_cli_eval_programs_writes_table_1(data, tmp_path):
    replies = _replies(data, tmp_path / "replies.jsonl")
    result = runner.invoke(app, ["eval", "programs", "-d", str(data), "-p", str(replies), "--json-out",
                                 str(tmp_path / "t.json"), "--markdown", str(tmp_path / "t.md"), "--workers", "2",
                                 "--timeout", "2", "--memory-mb", "200", "--low-length", "150", "--low-errors", "3"])
    assert result.exit_code == 0, result.output
    assert "24 predictions scored" in result.stdout
    table = (tmp_path / "t.md").read_text()
    assert "| Model | Horizontal |  |  | Random |  |  | n_valid / n |" in table.splitlines()
    assert "| oracle |" in table and "| sloppy |" in table and "low L(P⁺) <= 150" in table
    report = json.loads((tmp_path / "t.json").read_text())
    assert report["report"]["settings"] == ["horizontal", "random"] and set(report["configs"]) == {"Q-horizontal",
                                                                                                   "Q-random"}
    library = evaluate_table(data, replies)
    assert library["report"]["cells"]["oracle"]["random"]["errors"] == 0


@pytest.mark.slow
@pytest.mark.parametrize(("args", "message"), [
    (["eval", "-d", "DATA", "-c", "Q-horizontal", "-s", "test", "-p", "missing.jsonl"], "no such replies file"),
    (["eval", "-d", "DATA", "-c", "Q-horizontal", "-s", "test", "-p", "REPLIES", "--queries", "first"],
     "does not apply"),
    (["eval", "-d", "DATA", "-c", "Q-horizontal", "-s", "test_ood", "-p", "REPLIES"], "has no split 'test_ood'"),
    (["eval", "baseline", "-d", "DATA", "-c", "Q-horizontal", "-s", "test", "--out", "b.jsonl"], "no baseline 'identity' for String-to-grid programs configs (choose from target)"),
    (["eval", "programs", "-d", "DATA", "-p", "EMPTY"], "no reply id names a config"),
])
def test_bad_input_is_a_clear_error_without_traceback(data, tmp_path, args, message):
    replies = _replies(data, tmp_path / "replies.jsonl")
    (tmp_path / "empty.jsonl").write_text("")
    places = {"DATA": str(data), "REPLIES": str(replies), "EMPTY": str(tmp_path / "empty.jsonl")}
    args = [places.get(a, a) for a in args]
    result = subprocess.run([sys.executable, "-m", "cogen", *args], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 1, result
    assert message in result.stderr and "Traceback" not in result.stderr


def test_options_of_one_family_are_refused_for_another(data, tmp_path, small_build):
    replies = _replies(data, tmp_path / "replies.jsonl")
    with pytest.raises(EvalError, match="option --explain does not apply to COGITAO configs"):
        evaluate(small_build, "C1-1", "test_ood", replies, explain=True)
    result = runner.invoke(app, ["eval", "-d", str(small_build), "-c", "C1-1", "-p", str(replies), "--markdown",
                                 str(tmp_path / "x.md")])
    assert result.exit_code != 0
