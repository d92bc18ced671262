"""``cogen prompts run`` against a loopback stand-in server (tests/fake_openai.py): the prompts sent are the
exported ones, each reply is kept once under retries, stops and resumes, the key is never written, a changed
setting is refused, pass@2, images, every family scored as ``cogen eval`` scores it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_openai import Fault, serve, stand_in
from terminal import as_in_a_terminal
from test_failures import run_cli

from cogen.errors import EvalError
from cogen.eval import evaluate
from cogen.llm import export_prompts
from cogen.llm.run import RunSettings, read_replies, run_prompts

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("right", "right", "wrong", "malformed")  # by prompt number, cyclically


class Result:
    """What a ``cogen`` command did: exit code, stdout, stdout and stderr together."""

    def __init__(self, code: int, out: str, err: str):
        self.exit_code, self.stdout, self.output = code, out, out + err


def cli(capsys, args: list[str]) -> Result:
    return Result(*run_cli(capsys, *args))


def by_number(number: int) -> str:
    return KINDS[number % len(KINDS)]


@pytest.fixture
def server():
    started = []

    def start(state):
        httpd, state = serve(state)
        started.append(httpd)
        return state

    yield start
    for httpd in started:
        httpd.shutdown()
        httpd.server_close()


def settings(data, state, config="V-1", split="test_ood", **kw) -> RunSettings:
    return RunSettings(data=str(data), config=config, split=split, base_url=state.url, model="stand-in",
                       **{"first_backoff": 0.01, **kw})


def pairs(folder: Path) -> list[tuple[str, int]]:
    return [(r["id"], r["attempt"]) for r in read_replies(folder / "replies.jsonl")]


def test_a_run_keeps_every_reply_once_and_scores_as_cogen_eval(tiny_cogitao, server, tmp_path):
    state = server(stand_in(tiny_cogitao, "V-1", "test_ood", by_number))
    result = run_prompts(settings(tiny_cogitao, state, concurrency=4), tmp_path / "run")
    ids = [p.id for p in state.prompts]
    assert sorted(pairs(tmp_path / "run")) == sorted((name, 1) for name in ids)
    assert state.answered() == {name: 1 for name in ids}
    # the table is cogen eval's of the predictions written, and both follow from the stand-in's answers
    metrics = evaluate(tiny_cogitao, "V-1", "test_ood", tmp_path / "run" / "predictions.jsonl")
    assert result["metrics"]["grid_accuracy"] == metrics["grid_accuracy"] == \
        sum(k == "right" for k in state.kinds.values()) / len(ids)
    assert metrics["format_errors"]["total"] == sum(k == "malformed" for k in state.kinds.values())
    assert result["scores"]["pass@1"] == metrics["grid_accuracy"]
    recorded = json.loads((tmp_path / "run" / "run.json").read_text())
    assert recorded["status"] == "complete" and recorded["counts"]["replies"] == len(ids)
    assert recorded["tokens"]["prompt_tokens"] > 0 and recorded["identity"]["model"] == "stand-in"
    reply = read_replies(tmp_path / "run" / "replies.jsonl")[0]
    assert {"id", "attempt", "model", "prompt_version", "reply", "finish_reason", "usage", "latency_s"} <= set(reply)
    assert reply["prompt_version"] == "cogitao-v1"


def test_the_prompts_sent_are_the_exported_prompts_byte_for_byte(tiny_cogitao, server, tmp_path):
    state = server(stand_in(tiny_cogitao, "V-1", "test_ood", by_number, regime="coded", examples=3))
    run_prompts(settings(tiny_cogitao, state, options={"regime": "coded", "examples": 3}), tmp_path / "run")
    export_prompts(tiny_cogitao, "V-1", "test_ood", tmp_path / "exported.jsonl", regime="coded", examples=3)
    assert (tmp_path / "run" / "prompts.jsonl").read_bytes() == (tmp_path / "exported.jsonl").read_bytes()
    sent = sorted(entry.body["messages"][0]["content"] for entry in state.log)
    assert sent == sorted(json.loads(line)["prompt"] for line in (tmp_path / "exported.jsonl").open())


def test_retries_honour_retry_after_and_keep_each_reply_once(tiny_cogitao, server, tmp_path):
    state = server(stand_in(tiny_cogitao, "V-1", "test_ood", by_number))
    first = state.prompts[0].id
    state.fail(Fault(429, retry_after=1, only=first), Fault(500), Fault("drop"), Fault(503, retry_after_ms=50),
               Fault("slow", seconds=3), Fault(429, retry_after_ms=20))
    start = time.monotonic()
    result = run_prompts(settings(tiny_cogitao, state, concurrency=3, request_timeout=1.0, attempts=2), tmp_path / "run")
    asked = sorted(pairs(tmp_path / "run"))
    assert asked == sorted({(p.id, a) for p in state.prompts for a in (1, 2)})  # each (id, attempt) once
    assert state.answered() == {p.id: 2 for p in state.prompts}
    first_times = [e.time for e in state.log if e.name == first]
    assert first_times[1] - first_times[0] >= 0.95  # Retry-After: 1 waited
    assert time.monotonic() - start >= 1.0
    retries = result["counts"]["retries"]
    assert retries.get("429") == 2 and retries.get("500") == 1 and retries.get("503") == 1
    assert retries.get("connection") >= 1  # the dropped connection and the timed-out slow answer


def test_a_prompt_that_keeps_failing_is_missing_not_written(tiny_cogitao, server, tmp_path, capsys):
    state = server(stand_in(tiny_cogitao, "V-1", "test_ood", by_number))
    victim = state.prompts[1].id
    state.fail(*[Fault(500, only=victim)] * 2)
    result = cli(capsys, ["prompts", "run", "-d", str(tiny_cogitao), "-c", "V-1", "--base-url", state.url,
                                 "-m", "stand-in", "-o", str(tmp_path / "run"), "--retries", "1", "--no-progress"])
    assert result.exit_code == 1 and "grid_accuracy" in result.output  # the table, then one line naming the missing
    assert f"1 requests got no reply after their retries (first: {victim}: HTTP 500" in result.output
    assert victim not in {name for name, _ in pairs(tmp_path / "run")}
    recorded = json.loads((tmp_path / "run" / "run.json").read_text())
    assert recorded["status"] == "incomplete" and recorded["counts"]["missing"] == 1
    # asking again asks for that one prompt only
    before = len(state.log)
    run_prompts(settings(tiny_cogitao, state), tmp_path / "run")
    assert [e.name for e in state.log[before:]] == [victim]


def test_resume_asks_only_what_is_missing_and_drops_a_cut_last_line(tiny_cogitao, server, tmp_path):
    state = server(stand_in(tiny_cogitao, "V-1", "test_ood", by_number))
    run_prompts(settings(tiny_cogitao, state, limit=5), tmp_path / "run")
    replies = tmp_path / "run" / "replies.jsonl"
    lines = replies.read_bytes().splitlines(keepends=True)
    replies.write_bytes(b"".join(lines[:4]) + lines[4][:30])  # a crash while writing the fifth reply
    before = len(state.log)
    run_prompts(settings(tiny_cogitao, state), tmp_path / "run")
    done = {json.loads(line)["id"] for line in lines[:4]}
    assert sorted(e.name for e in state.log[before:]) == sorted(p.id for p in state.prompts if p.id not in done)
    assert sorted(pairs(tmp_path / "run")) == sorted((p.id, 1) for p in state.prompts)


def test_a_changed_setting_is_refused_naming_it_unless_force(tiny_cogitao, server, tmp_path):
    state = server(stand_in(tiny_cogitao, "V-1", "test_ood", by_number))
    run_prompts(settings(tiny_cogitao, state, limit=2), tmp_path / "run")
    with pytest.raises(EvalError, match=r"prompt_options: \{\} now \{\"regime\": \"coded\"\}.*--force"):
        run_prompts(settings(tiny_cogitao, state, options={"regime": "coded"}), tmp_path / "run")
    with pytest.raises(EvalError, match='model: "stand-in" now "other"'):
        run_prompts(RunSettings(str(tiny_cogitao), "V-1", "test_ood", state.url, "other"), tmp_path / "run")
    with pytest.raises(EvalError, match="temperature: null now 0.5"):
        run_prompts(settings(tiny_cogitao, state, temperature=0.5), tmp_path / "run")
    # what only decides how the run is sent is no change
    run_prompts(settings(tiny_cogitao, state, limit=3, concurrency=1, attempts=1), tmp_path / "run")
    forced = run_prompts(settings(tiny_cogitao, state, options={"regime": "coded"}, limit=2), tmp_path / "run",
                         force=True)
    assert forced["counts"]["this_run"] == 2 and len(pairs(tmp_path / "run")) == 2
    assert json.loads((tmp_path / "run" / "prompts.jsonl").open().readline())["regime"] == "coded"


def test_pass_at_2_counts_a_prompt_solved_by_either_attempt(tiny_cogitao, server, tmp_path):
    plan = [["right"], ["wrong", "right"], ["malformed", "wrong"], ["right", "malformed"]]
    state = server(stand_in(tiny_cogitao, "V-1", "test_ood", lambda n: plan[n % 4]))
    result = run_prompts(settings(tiny_cogitao, state, attempts=2, concurrency=1), tmp_path / "run")
    n = len(state.prompts)
    first = sum(plan[k % 4][0] == "right" for k in range(n))
    either = sum("right" in plan[k % 4] for k in range(n))
    assert result["scores"]["solved"] == {"pass@1": first, "pass@2": either} and first < either
    assert result["scores"]["pass@2"] == either / n
    assert (tmp_path / "run" / "predictions-2.jsonl").exists()
    second = evaluate(tiny_cogitao, "V-1", "test_ood", tmp_path / "run" / "predictions-2.jsonl")
    assert second["grid_accuracy"] == sum(plan[k % 4][-1 if len(plan[k % 4]) > 1 else 0] == "right"
                                          for k in range(n)) / n


def test_a_refusal_is_one_line_that_never_holds_the_key(tiny_cogitao, server, tmp_path, monkeypatch, capsys):
    state = stand_in(tiny_cogitao, "V-1", "test_ood", by_number)
    state.key = "sk-right-key-0123456789"
    server(state)
    secret = "sk-wrong-key-ABCDEFGHIJKLMNOP"
    monkeypatch.setenv("STAND_IN_KEY", secret)
    result = cli(capsys, ["prompts", "run", "-d", str(tiny_cogitao), "-c", "V-1", "--base-url", state.url,
                                 "-m", "stand-in", "-o", str(tmp_path / "run"), "--api-key-env", "STAND_IN_KEY",
                                 "--no-progress"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "HTTP 401" in result.output and "Incorrect API key provided: ***" in result.output
    assert secret not in result.output and secret[:10] not in result.output
    assert state.log[0].authorization == f"Bearer {secret}"  # it was sent, in the header only
    for path in (tmp_path / "run").rglob("*"):
        assert not path.is_file() or secret[:10] not in path.read_text(errors="replace"), path
    # the right key: a whole run, and the key in no file it wrote and nowhere on screen
    monkeypatch.setenv("STAND_IN_KEY", state.key)
    result = cli(capsys, ["prompts", "run", "-d", str(tiny_cogitao), "-c", "V-1", "--base-url", state.url,
                                 "-m", "stand-in", "-o", str(tmp_path / "ok"), "--api-key-env", "STAND_IN_KEY",
                                 "--no-progress", "--json"])
    assert result.exit_code == 0, result.output
    assert state.key not in result.output
    assert json.loads(result.stdout)["settings"]["api_key_env"] == "STAND_IN_KEY"
    for path in (tmp_path / "ok").rglob("*"):
        assert not path.is_file() or state.key not in path.read_text(errors="replace"), path


@pytest.mark.parametrize(("base", "message"), [("/nowhere", "HTTP 404"), ("", "HTTP 404")])
def test_a_wrong_url_is_one_line(tiny_cogitao, server, tmp_path, base, message, capsys):
    state = server(stand_in(tiny_cogitao, "V-1", "test_ood", by_number))
    result = cli(capsys, ["prompts", "run", "-d", str(tiny_cogitao), "-c", "V-1", "--base-url",
                                 state.url.removesuffix("/v1") + base, "-m", "x", "-o", str(tmp_path / "run"),
                                 "--no-progress"])
    assert result.exit_code == 1 and message in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(("args", "message"), [
    (["--api-key-env", "NOT_SET_ANYWHERE"], "environment variable NOT_SET_ANYWHERE is not set"),
    (["--base-url", "ftp://x"], "is not an http(s) URL"),
    (["--param", "nonsense"], "is not NAME=VALUE"),
    (["--param", "max_tokens=3"], "use --max-tokens"),
    (["--concurrency", "0"], "--concurrency must be at least 1"),
    (["--regime", "fancy"], "--regime must be one of explicit, coded"),
    (["--queries", "first"], "option --queries does not apply to COGITAO configs"),
])
def test_bad_settings_are_one_clear_line(tiny_cogitao, tmp_path, args, message, capsys):
    base = ["prompts", "run", "-d", str(tiny_cogitao), "-c", "V-1", "--base-url", "http://127.0.0.1:9/v1", "-m", "m",
            "-o", str(tmp_path / "run"), "--no-progress"]
    result = cli(capsys, base + args)
    assert result.exit_code in (1, 2) and message in result.output and "Traceback" not in result.output


def test_dry_run_prints_the_cost_and_sends_nothing(tiny_cogitao, server, tmp_path, capsys):
    state = server(stand_in(tiny_cogitao, "V-1", "test_ood", by_number))
    result = cli(capsys, ["prompts", "run", "-d", str(tiny_cogitao), "-c", "V-1", "--base-url", state.url,
                                 "-m", "m", "-o", str(tmp_path / "run"), "--attempts", "2", "--max-tokens", "100",
                                 "--dry-run"])
    n = len(state.prompts)
    assert result.exit_code == 0, result.output
    assert f"{n} prompts x 2 attempt(s): {2 * n} requests to send" in result.output
    assert f"at most {200 * n:,} reply tokens" in result.output and "prompt tokens" in result.output
    assert state.log == [] and not (tmp_path / "run").exists()


def test_images_of_text_and_image_prompts_are_sent_as_image_parts(tiny_carc, server, tmp_path):
    images = tmp_path / "images"
    config = "carc-systematicity-1860"
    state = server(stand_in(tiny_carc, config, "test", by_number, images=str(tmp_path / "probe")))
    result = run_prompts(settings(tiny_carc, state, config=config, split="test", options={"images": str(images)},
                                  limit=4), tmp_path / "run")
    records = [json.loads(line) for line in (tmp_path / "run" / "prompts.jsonl").open()][:4]
    sent = {e.name: e for e in state.log}
    for record in records:
        entry = sent[record["id"]]
        assert entry.images == [Path(record["image"]).read_bytes()] and entry.images[0].startswith(b"\x89PNG")
        assert entry.body["messages"][0]["content"][0]["text"] == record["prompt"]
    assert result["scores"]["solved"]["pass@1"] == sum(state.kinds[r["id"]] == "right" for r in records)
    assert result["metrics"]["queries"] == "first"  # the prompts' queries, not cogen eval's default (all)


def test_programs_end_to_end_through_the_sandbox(tiny_programs, server, tmp_path):
    config = "vp-block"
    state = server(stand_in(tiny_programs, config, "test", by_number))
    result = run_prompts(settings(tiny_programs, state, config=config, split="test"), tmp_path / "run")
    kinds = [state.kinds[p.id] for p in state.prompts]
    model = result["metrics"]["models"]["stand-in"]
    assert model["functions"] == len(kinds) and model["valid"] == sum(k != "malformed" for k in kinds)
    assert result["scores"]["solved"]["pass@1"] == kinds.count("right")
    assert result["metrics"]["prompt_versions"] == ["programs-v1"]
    assert (tmp_path / "run" / "report.md").read_text().count("stand-in") >= 1
    table = evaluate(tiny_programs, config, "test", tmp_path / "run" / "predictions.jsonl")
    assert table["models"] == result["metrics"]["models"]


def test_a_proxy_from_the_environment_is_used(tiny_cogitao, server, tmp_path, monkeypatch):
    state = server(stand_in(tiny_cogitao, "V-1", "test_ood", by_number))
    monkeypatch.setenv("http_proxy", state.url.removesuffix("/v1"))
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    result = run_prompts(RunSettings(str(tiny_cogitao), "V-1", "test_ood", "http://models.invalid/v1", "stand-in",
                                     limit=2), tmp_path / "run")
    assert result["counts"]["replies"] == 2 and len(state.log) == 2


def test_the_command_prints_the_table_pass_at_k_and_the_counts(tiny_cogitao, server, tmp_path, capsys):
    state = server(stand_in(tiny_cogitao, "V-1", "test_ood", by_number))
    result = cli(capsys, ["prompts", "run", "-d", str(tiny_cogitao), "-c", "V-1", "--base-url", state.url,
                                 "-m", "stand-in", "-o", str(tmp_path / "run"), "--attempts", "2", "--no-progress",
                                 "--param", "top_p=1", "--temperature", "0.7"])
    assert result.exit_code == 0, result.output
    assert "grid_accuracy" in result.output and "pass@1" in result.output and "pass@2" in result.output
    assert state.log[0].body["top_p"] == 1 and state.log[0].body["temperature"] == 0.7


# ---------------------------------------------------------------- a real process stopped and resumed
def _start(data, url, out, *extra) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "cogen", "prompts", "run", "-d", str(data), "-c", "V-1",
                             "--base-url", url, "-m", "stand-in", "-o", str(out), "--concurrency", "2",
                             "--no-progress", *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, preexec_fn=as_in_a_terminal)


def _wait_for_replies(path: Path, count: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if path.exists() and path.read_bytes().count(b"\n") >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"no {count} replies in time (exit {process.poll()})")


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGKILL])
def test_a_run_stopped_at_half_resumes_and_asks_each_id_once(tiny_cogitao, server, tmp_path, stop):
    state = stand_in(tiny_cogitao, "V-1", "test_ood", by_number)
    state.delay = 0.3
    server(state)
    out = tmp_path / "run"
    process = _start(tiny_cogitao, state.url, out)
    _wait_for_replies(out / "replies.jsonl", len(state.prompts) // 2, process)
    process.send_signal(stop)
    _, err = process.communicate(timeout=60)
    kept = pairs(out)
    if stop == signal.SIGINT:  # Ctrl-C: the requests in flight finish and are kept
        assert process.returncode == 130 and "replies kept" in err and "run the same command again" in err
        assert len(kept) == len(state.log)
    else:
        assert process.returncode == -signal.SIGKILL
    assert len(set(kept)) == len(kept) < len(state.prompts)
    done = _start(tiny_cogitao, state.url, out)
    assert done.wait(120) == 0, done.stderr.read()
    assert sorted(pairs(out)) == sorted((p.id, 1) for p in state.prompts)
    answered = state.answered()
    if stop == signal.SIGINT:
        assert answered == {p.id: 1 for p in state.prompts}  # every id asked exactly once, across the stop
    else:  # a kill loses the replies in flight (at most --concurrency), which are asked again
        assert sum(answered.values()) - len(state.prompts) <= 2 and set(answered) == {p.id for p in state.prompts}


def test_a_server_that_accepts_no_connection_is_refused_in_one_line_within_seconds(tiny_cogitao, server, tmp_path,
                                                                                  monkeypatch, capsys):
    """A typo in --base-url or a server not started: one line after a few seconds, not minutes of retries
    and a table of zeros; a finished run is scored again without the server."""
    import socket

    from cogen.llm import run as run_module

    monkeypatch.setattr(run_module, "REACH_WAITS", (0.05, 0.05))
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    dead = f"http://127.0.0.1:{port}/v1"
    start = time.monotonic()
    result = cli(capsys, ["prompts", "run", "-d", str(tiny_cogitao), "-c", "V-1", "-s", "test_ood", "--base-url",
                          dead, "-m", "stand-in", "-o", str(tmp_path / "run"), "--no-progress"])
    assert result.exit_code == 1 and time.monotonic() - start < 30
    assert f"cannot reach {dead}" in result.output and "ConnectionRefusedError" in result.output
    assert "Traceback" not in result.output and "grid_accuracy" not in result.output
    assert pairs(tmp_path / "run") == []
    state = server(stand_in(tiny_cogitao, "V-1", "test_ood", by_number))
    done = run_prompts(settings(tiny_cogitao, state), tmp_path / "run")
    from dataclasses import replace

    again = run_prompts(replace(settings(tiny_cogitao, state), base_url=dead), tmp_path / "run")  # nothing to ask
    assert again["scores"] == done["scores"]
