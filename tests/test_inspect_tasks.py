"""cogen's Inspect AI tasks, run by the real inspect_ai package against the loopback stand-in server: the same
per-row correctness and the same table as ``cogen prompts run``, pass@2 from ``--epochs 2 --epochs-reducer max``,
images, the programs family through the sandbox, and ``inspect eval cogen/<family>`` found by the entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from fake_openai import serve, stand_in

from cogen.eval import only_rows, sample_scores
from cogen.llm.run import RunSettings, run_prompts

inspect_ai = pytest.importorskip("inspect_ai", reason="the inspect extra (pip install 'cogen-arc[inspect]')")

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("right", "wrong", "right", "malformed")


def by_number(number: int):
    return KINDS[number % len(KINDS)]


@pytest.fixture
def server(monkeypatch):
    started = []

    def start(state):
        httpd, state = serve(state)
        started.append(httpd)
        # a service name per server: Inspect keeps a provider's client (and its URL) for the whole process
        state.service = f"standin{httpd.server_address[1]}"
        monkeypatch.setenv(f"{state.service.upper()}_BASE_URL", state.url)
        monkeypatch.setenv(f"{state.service.upper()}_API_KEY", "none")
        return state

    yield start
    for httpd in started:
        httpd.shutdown()
        httpd.server_close()


def inspect_run(family: str, state, tmp_path: Path, epochs: int = 1, **arguments):
    from inspect_ai import Epochs
    from inspect_ai import eval as inspect_eval

    from cogen.llm.inspect_tasks import family_task

    task = family_task(family)(**arguments)
    log, = inspect_eval(task, model=f"openai-api/{state.service}/stand-in", log_dir=str(tmp_path / "logs"), display="none",
                        epochs=Epochs(epochs, "max"), max_retries=0)
    assert log.status == "success", log.error
    metrics = {f"{name}/{metric.name}": metric.value for score in log.results.scores
               for name, metric in ((score.name if score.name != "family_scorer" else "", m) for m in
                                    score.metrics.values())}
    return log, {key.removeprefix("/"): value for key, value in metrics.items()}


def per_sample(log) -> dict[str, dict]:
    return {str(s.id): s.scores["family_scorer"].value for s in log.samples if s.epoch == 1}


def runner_rows(data, config, split, folder: Path, **options) -> dict[str, bool]:
    from cogen.folder import read_split

    records = [json.loads(line) for line in (folder / "prompts.jsonl").open()]
    split_data = only_rows(read_split(data, config, split), {str(r.get("row", r["id"])) for r in records})
    return {s["id"]: s["correct"] for s in sample_scores(split_data, folder / "predictions.jsonl", **options)}


@pytest.mark.slow
def test_the_task_and_the_runner_agree_row_by_row_and_on_the_table(tiny_cogitao, server, tmp_path):
    state = server(stand_in(tiny_cogitao, "V-1", "test_ood", by_number))
    run = run_prompts(RunSettings(str(tiny_cogitao), "V-1", "test_ood", state.url, "stand-in"), tmp_path / "run")
    log, metrics = inspect_run("cogitao", state, tmp_path, data=str(tiny_cogitao), config="V-1", split="test_ood")
    samples = per_sample(log)
    assert {name: bool(v["correct"]) for name, v in samples.items()} == \
        runner_rows(tiny_cogitao, "V-1", "test_ood", tmp_path / "run")
    table = run["metrics"]
    assert metrics["correct/mean"] == pytest.approx(table["grid_accuracy"])
    assert metrics["pixel/mean"] == pytest.approx(table["per_pixel_accuracy"])
    assert metrics["object_pixel/mean"] == pytest.approx(table["object_pixel_accuracy"])
    assert metrics["no_transformation/mean"] == pytest.approx(table["no_transformation"])
    assert metrics["stubborn/mean"] == pytest.approx(table["stubbornness"]["value"])
    assert metrics["correct_of_valid"] == pytest.approx(table["grid_accuracy_valid"])
    # the dataset is the exported prompts, in order, with their ids
    assert sorted(s.id for s in log.samples) == sorted(json.loads(line)["id"]
                                                       for line in (tmp_path / "run" / "prompts.jsonl").open())
    assert sum(k == "right" for k in state.kinds.values()) / len(state.kinds) == table["grid_accuracy"]


@pytest.mark.slow
def test_epochs_2_with_the_max_reducer_is_pass_at_2(tiny_cogitao, server, tmp_path):
    plan = [["wrong", "right"], ["right"], ["malformed", "wrong"], ["right", "malformed"]]
    state = server(stand_in(tiny_cogitao, "V-1", "test_ood", lambda n: plan[n % 4]))
    run = run_prompts(RunSettings(str(tiny_cogitao), "V-1", "test_ood", state.url, "stand-in", attempts=2,
                                  concurrency=1), tmp_path / "run")
    state.answers = stand_in(tiny_cogitao, "V-1", "test_ood", lambda n: plan[n % 4]).answers  # the same again
    log, metrics = inspect_run("cogitao", state, tmp_path, epochs=2, data=str(tiny_cogitao), config="V-1", split="test_ood")
    assert metrics["correct/mean"] == pytest.approx(run["scores"]["pass@2"]) and run["scores"]["pass@2"] > \
        run["scores"]["pass@1"]


@pytest.mark.slow
def test_text_and_image_prompts_and_the_first_query_of_each_episode(tiny_carc, server, tmp_path):
    config = "carc-systematicity-1860"
    state = server(stand_in(tiny_carc, config, "test", by_number, images=str(tmp_path / "probe")))
    run = run_prompts(RunSettings(str(tiny_carc), config, "test", state.url, "stand-in",
                                  options={"images": str(tmp_path / "a")}), tmp_path / "run")
    log, metrics = inspect_run("carc", state, tmp_path, data=str(tiny_carc), config=config, split="test",
                               images=str(tmp_path / "b"))
    assert {name: bool(v["correct"]) for name, v in per_sample(log).items()} == \
        runner_rows(tiny_carc, config, "test", tmp_path / "run", queries="first")
    for name in ("exact_match", "color_accuracy", "shape_accuracy"):
        key = {"exact_match": "correct", "color_accuracy": "color", "shape_accuracy": "shape"}[name]
        assert metrics[f"{key}/mean"] == pytest.approx(run["metrics"][name])
    inspected = [e for e in state.log if e.body["messages"][0]["content"][0].get("type") == "text"][-1]
    assert len(inspected.images) == 1 and inspected.images[0].startswith(b"\x89PNG")


@pytest.mark.slow
def test_the_programs_task_scores_in_the_sandbox_like_the_runner(tiny_programs, server, tmp_path):
    config = "vp-block"
    state = server(stand_in(tiny_programs, config, "test", by_number))
    run = run_prompts(RunSettings(str(tiny_programs), config, "test", state.url, "stand-in"), tmp_path / "run")
    log, metrics = inspect_run("programs", state, tmp_path, data=str(tiny_programs), config=config, split="test")
    cell = run["metrics"]["models"]["stand-in"]
    assert metrics["l_plus/mean"] == pytest.approx(cell["l_plus"])
    assert metrics["errors/mean"] == pytest.approx(cell["errors"])
    assert metrics["c/mean"] == pytest.approx(cell["c"])
    assert {name: bool(v["correct"]) for name, v in per_sample(log).items()} == \
        runner_rows(tiny_programs, config, "test", tmp_path / "run")


def test_task_arguments_are_the_family_options_checked_as_declared(tiny_cogitao):
    from cogen.errors import EvalError
    from cogen.llm.inspect_tasks import family_task

    task = family_task("cogitao")(data=str(tiny_cogitao), config="V-1", split="test_ood", regime="coded", examples=2)
    assert "['t" in task.dataset[0].input[0].text and task.dataset[0].metadata["regime"] == "coded"
    with pytest.raises(EvalError, match="--examples must be at least 1"):
        family_task("cogitao")(data=str(tiny_cogitao), config="V-1", split="test_ood", examples=0)
    with pytest.raises(EvalError, match="option --queries does not apply to COGITAO"):
        family_task("cogitao")(data=str(tiny_cogitao), config="V-1", split="test_ood", queries="first")


@pytest.mark.slow
def test_inspect_eval_finds_cogen_tasks_through_the_entry_point(tiny_cogitao, server, tmp_path):
    """``inspect eval cogen/cogitao`` in a fresh process, the task found through the entry point that
    ``pyproject.toml`` declares (installed here as a distribution's metadata on the path)."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["inspect_ai"]
    info = tmp_path / "site" / "cogen_arc-0.0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: cogen-arc\nVersion: 0.0.0\n")
    (info / "entry_points.txt").write_text("[inspect_ai]\n" + "".join(f"{k} = {v}\n" for k, v in declared.items()))
    state = server(stand_in(tiny_cogitao, "V-1", "test_ood", by_number))
    env = {**os.environ, "PYTHONPATH": f"{tmp_path / 'site'}{os.pathsep}{ROOT}"}
    done = subprocess.run([str(Path(sys.executable).parent / "inspect"), "eval", "cogen/cogitao", "-T", f"data={tiny_cogitao}", "-T", "config=V-1",
                           "-T", "split=test_ood", "--model", f"openai-api/{state.service}/stand-in", "--log-dir",
                           str(tmp_path / "logs"), "--log-format", "json", "--display", "none"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(next((tmp_path / "logs").glob("*.json"))))
    assert log.eval.task == "cogen/cogitao" and log.status == "success"
    correct = [s.scores["family_scorer"].value["correct"] for s in log.samples]
    assert sum(correct) == sum(k == "right" for k in state.kinds.values())
