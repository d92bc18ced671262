"""``cogen baselines``: every command end to end, the results table's aggregation on fixture runs, the
paper's numbers, and the errors bad input gets (one line, no traceback)."""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

torch = pytest.importorskip("torch")

from baselines_helpers import built, compgen_build, one_thread  # noqa: F401  (fixtures)

from cogen.cli import app
from cogen_baselines.paper import EXPERIMENTS, TABLE_1
from cogen_baselines.table import find_runs, mean_sem, results_table

runner = CliRunner()
SMALL = ["--size", "small", "--epochs", "1", "--batch-size", "16", "--train-samples", "32", "--device", "cpu"]


def _cli(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.mark.slow
def test_train_table_suite_and_models_commands(compgen, tmp_path):
    runs = tmp_path / "suite"
    first = runs / "resnet" / "E-2" / "seed0"
    result = _cli("baselines", "train", "--model", "resnet", "--data", str(compgen), "--config", "E-2",
                  "--out", str(first), *SMALL)
    assert result.exit_code == 0, result.output
    assert "resnet on E-2, seed 0" in result.output and "test_ood" in result.output
    assert (first / "summary.json").is_file() and (first / "predictions" / "ood_loss" / "test_ood.jsonl").is_file()

    # the suite finds seed 0 finished; side by side (separate processes) it skips seed 0 and trains seed 1
    finished = (first / "summary.json").read_text()
    result = _cli("baselines", "suite", "--models", "resnet", "--settings", "e-2", "--seeds", "0", "--data",
                  str(compgen), "--out", str(runs), "--no-progress", *SMALL)
    assert result.exit_code == 0, result.output
    assert "| E |" in result.stdout and (runs / "table.md").read_text() == result.stdout
    result = _cli("baselines", "suite", "--models", "resnet", "--settings", "E-2", "--seeds", "0,1", "--data",
                  str(compgen), "--out", str(runs), "--jobs", "2", *SMALL)
    assert result.exit_code == 0, result.output
    assert (runs / "resnet" / "E-2" / "seed1" / "summary.json").is_file()
    assert len(list((runs / "logs").glob("*.log"))) == 2 and (first / "summary.json").read_text() == finished

    result = _cli("baselines", "table", str(runs), "--rule", "final", "--out", str(tmp_path / "t.md"))
    assert result.exit_code == 0, result.output
    assert "Checkpoint rule: final epoch" in result.stdout and "2 seed(s)" in result.stdout
    assert (tmp_path / "t.md").read_text() == result.stdout

    result = _cli("baselines", "models")
    assert result.exit_code == 0 and all(name in result.output for name in ("resnet", "grid-tf", "llada", "mlc"))


def _errors(*args: str) -> str:
    """Run the real entry point in-process: cogen errors become one line on stderr and exit code 1."""
    from cogen.cli import main

    argv = sys.argv
    sys.argv = ["cogen", "baselines", *args]
    try:
        with pytest.raises(SystemExit) as exit_:
            main()
    finally:
        sys.argv = argv
    assert exit_.value.code == 1
    return _ERRORS.readouterr().err


_ERRORS = None


@pytest.fixture
def errors(capsys):
    global _ERRORS
    _ERRORS = capsys
    yield _errors


@pytest.mark.slow
def test_the_entry_point_prints_one_line_without_a_traceback():
    result = subprocess.run([sys.executable, "-m", "cogen", "baselines", "table", "/no/such/runs"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 1 and "Traceback" not in result.stderr and "no such run folder" in result.stderr


def test_bad_input_gets_a_clear_error(compgen, tmp_path, errors):
    _errors = errors
    data = ["--data", str(compgen)]
    assert "unknown model 'resnt'" in _errors("train", "--model", "resnt", *data, "--config", "E-1")
    assert "did you mean 'resnet'" in _errors("train", "--model", "resnt", *data, "--config", "E-1")
    assert "no config 'E-9'" in _errors("train", "--model", "resnet", *data, "--config", "E-9")
    assert "unknown model size 'huge'" in _errors("train", "--model", "resnet", *data, "--config", "E-1", "--size",
                                                  "huge")
    assert "--model resnet" in _errors("train", "--model", "mlc", *data, "--config", "E-1")
    if not torch.cuda.is_available():
        assert "sees no CUDA device" in _errors("train", "--model", "resnet", *data, "--config", "E-1", "--device",
                                                "cuda")
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    assert "not a run folder" in _errors("train", "--model", "resnet", *data, "--config", "E-1", "--out", str(other))
    assert "no finished runs" in _errors("table", str(tmp_path))


def test_a_folder_with_another_config_is_refused(compgen, tmp_path):
    from cogen_baselines.config import RunConfig
    from cogen_baselines.errors import RunFolderError
    from cogen_baselines.folder import prepare

    run = RunConfig("resnet", str(compgen), "E-1", seed=0, epochs=1).as_dict()
    assert prepare(tmp_path / "run", run) is None
    (tmp_path / "run" / "config.json").write_text(json.dumps({"run": run}))
    with pytest.raises(RunFolderError, match=r"different run \(seed 0 -> 1\)"):
        prepare(tmp_path / "run", {**run, "seed": 1})


def _fixture_run(folder: Path, model: str, config: str, seed: int, ident: float, ood: float, family="cogitao",
                 departures=()):
    """A finished run's summary: ``ident``/``ood`` are the cogen eval grid accuracies under every rule but
    ``final``; the paper's padded accuracy is half of each."""
    numbers = {"test": {"grid_accuracy": ident, "padded_grid_accuracy": ident / 2},
               "test_ood": {"grid_accuracy": ood, "padded_grid_accuracy": ood / 2}}
    results = {rule: {"epoch": 1, **numbers} for rule in ("ood_acc", "ood_cell_acc", "ood_loss", "id_val")}
    results["final"] = {"epoch": 3, "test": {"grid_accuracy": 1.0, "padded_grid_accuracy": 1.0},
                        "test_ood": {"grid_accuracy": 0.0, "padded_grid_accuracy": 0.0}}
    path = folder / model / config / f"seed{seed}"
    path.mkdir(parents=True)
    (path / "summary.json").write_text(json.dumps({"model": model, "config": config, "setting": config.split("-")[0],
                                                   "family": family, "seed": seed, "results": results,
                                                   "departures": list(departures), "complete": True}))


def _value(experiment: int, seed: int) -> tuple[float, float]:
    return 0.05 * experiment + 0.1 * seed ** 2, 0.01 * experiment * seed


def test_the_table_averages_experiments_per_seed_then_gives_mean_and_sem(tmp_path):
    for experiment in range(1, 6):
        for seed in range(3):
            _fixture_run(tmp_path, "resnet", f"C1-{experiment}", seed, *_value(experiment, seed))
    for seed in range(2):
        _fixture_run(tmp_path, "vanilla-tf", "G3-1", seed, 0.5 + 0.1 * seed, 0.2)
    (tmp_path / "unfinished").mkdir()
    table = results_table(find_runs([tmp_path]), metric="grid_accuracy")
    ids = [100 * statistics.fmean(_value(e, s)[0] for e in range(1, 6)) for s in range(3)]
    oods = [100 * statistics.fmean(_value(e, s)[1] for e in range(1, 6)) for s in range(3)]
    deltas = [i - o for i, o in zip(ids, oods, strict=True)]
    paper_id, paper_ood = TABLE_1["C1"]["resnet"]
    row = next(line for line in table.splitlines() if line.startswith("| C1 |"))
    for values, paper in ((ids, paper_id), (oods, paper_ood), (deltas, paper_id - paper_ood)):
        mean = statistics.fmean(values)
        sem = statistics.stdev(values) / math.sqrt(3)
        assert f"{mean:.1f} ± {sem:.1f} ({paper:.1f})" in row
    g3 = next(line for line in table.splitlines() if line.startswith("| G3 |"))
    vanilla = EXPERIMENTS["G3-1"]["vanilla-tf"]
    assert f"55.0 ± 5.0 ({vanilla[0]:.1f}*)" in g3 and f"20.0 ± 0.0 ({vanilla[2]:.1f}*)" in g3
    assert "each run's paper rule" in table and "rule ood_acc" in table and "†" not in row
    assert "resnet C1: 5 experiment(s)" in table and "x 3 seed(s)" in table
    final = results_table(find_runs([tmp_path]), rule="final", metric="grid_accuracy")
    assert "100.0 ± 0.0 (2.6)" in final and "final epoch" in final
    # the default: the paper's metric (the padded grids: half of each number here), cogen eval's beside it
    paper = results_table(find_runs([tmp_path]))
    row = next(line for line in paper.splitlines() if line.startswith("| C1 |"))
    assert f"{statistics.fmean(ids) / 2:.1f} ±" in row and "grid accuracy (%) on the padded grids" in paper
    assert f"| {statistics.fmean(ids):.1f} / {statistics.fmean(oods):.1f} |" in row


def test_runs_off_the_papers_protocol_are_marked(tmp_path):
    """A smoke run never sits unmarked beside the paper's numbers: every cell its group enters carries the
    mark, and the notes say how it departs; a run that records nothing (older) is marked too."""
    _fixture_run(tmp_path, "resnet", "G3-1", 0, 0.9, 0.5)
    _fixture_run(tmp_path / "smoke", "grid-tf", "G3-1", 0, 0.9, 0.5,
                 departures=["size small", "4 epochs (the paper's 10)", "a scale-0.02 build"])
    _fixture_run(tmp_path / "hostile", "pl-tf", "G3-1", 0, 0.9, 0.5, departures=["a | b <script>\x1b[31m"])
    old = tmp_path / "old" / "vanilla-tf" / "G3-1" / "seed0"
    _fixture_run(tmp_path / "old", "vanilla-tf", "G3-1", 0, 0.9, 0.5)
    summary = json.loads((old / "summary.json").read_text())
    del summary["departures"]
    (old / "summary.json").write_text(json.dumps(summary))
    table = results_table(find_runs([tmp_path]))
    row = next(line for line in table.splitlines() if line.startswith("| G3 |")).split(" | ")
    header = next(line for line in table.splitlines() if line.startswith("| setting |")).split(" | ")
    cells = dict(zip(header, row, strict=True))
    assert "†" not in cells["resnet ID"] and "†" not in cells["resnet OOD"]
    assert all("†" in cells[f"{model} {column}"] for model in ("grid-tf", "vanilla-tf") for column in ("ID", "OOD", "Δ"))
    assert "grid-tf G3: 1 experiment(s) (G3-1) x 1 seed(s); rule ood_acc; † not the paper's protocol: size small; " \
           "4 epochs (the paper's 10); a scale-0.02 build" in table
    assert "vanilla-tf G3" in table and "its protocol was not recorded" in table
    assert "a \\| b &lt;script&gt;?\\[31m" in table and "<script>" not in table    # run folders are foreign input


def test_compositional_arc_runs_get_their_own_table(tmp_path):
    path = tmp_path / "mlc" / "carc-systematicity-1860" / "seed0"
    path.mkdir(parents=True)
    greedy = {"exact_match": 0.5, "color_accuracy": 0.75, "shape_accuracy": 0.625}
    forced = {"exact_match": 0.5, "color_accuracy": 0.875, "shape_accuracy": 0.75}
    test = {**greedy, "teacher_forced": forced}
    (path / "summary.json").write_text(json.dumps({
        "model": "mlc", "config": "carc-systematicity-1860", "setting": "carc", "family": "carc", "seed": 0,
        "complete": True, "departures": [], "rule": "final",
        "results": {"id_val": {"epoch": 1, "test": test}, "final": {"epoch": 1, "test": test}}}))
    table = results_table(find_runs([tmp_path]))
    assert "| carc-systematicity-1860 | mlc | 1 | 50.0 (78.3) | 87.5 (97.9) | 75.0 (80.5) | 50.0 / 75.0 / 62.5 |" \
        in table and "gold prefix" in table
    greedy_table = results_table(find_runs([tmp_path]), metric="grid_accuracy")
    assert "| carc-systematicity-1860 | mlc | 1 | 50.0 (78.3) | 75.0 (97.9) | 62.5 (80.5) |" in greedy_table
    assert "no OOD validation split" in results_table(find_runs([tmp_path]), rule="ood_loss")


def test_mean_and_sem():
    assert mean_sem([2.0]) == (2.0, None)
    mean, sem = mean_sem([1.0, 2.0, 6.0])
    assert mean == 3.0 and sem == pytest.approx(statistics.stdev([1, 2, 6]) / math.sqrt(3))


def test_the_papers_table_1_is_the_mean_of_its_tables_5_to_8():
    """Typed-in numbers checked against each other: each Table 1 cell is the mean of five experiment
    rows (each rounded to 0.1, so the means agree to 0.1)."""
    assert len(EXPERIMENTS) == 40 and set(TABLE_1) == {"C1", "C2", "C3", "G1", "G2", "G3", "G4", "G5"}
    for setting, models in TABLE_1.items():
        for model, (ident, ood) in models.items():
            rows = [EXPERIMENTS[f"{setting}-{k}"][model] for k in range(1, 6)]
            assert statistics.fmean(r[0] for r in rows) == pytest.approx(ident, abs=0.1), (setting, model)
            assert statistics.fmean(r[2] for r in rows) == pytest.approx(ood, abs=0.1), (setting, model)


@pytest.mark.slow
def test_train_with_stream_records_it_and_scores_like_any_run(compgen, tmp_path):
    folder = tmp_path / "streamed"
    result = _cli("baselines", "train", "--model", "resnet", "--data", str(compgen), "--config", "E-1",
                  "--stream", str(compgen.parent / "compgen.yaml"), "--out", str(folder), *SMALL)
    assert result.exit_code == 0, result.output
    config = json.loads((folder / "config.json").read_text())
    assert config["run"]["stream"].endswith("compgen.yaml")
    assert config["data"]["train_stream"]["samples_per_epoch"] == 32  # --train-samples
    assert (folder / "eval" / "final" / "test_ood.json").is_file()


def test_stream_with_mlc_is_refused(tmp_path, errors):
    message = errors("train", "--model", "mlc", "--data", str(tmp_path), "--config", "carc-3shot-1860",
                     "--stream", "c1", "--out", str(tmp_path / "run"))
    assert "--stream makes fresh grid samples; mlc trains on stored episodes" in message


def test_the_suite_plans_every_model_config_and_seed_in_order(compgen):
    from cogen_baselines.errors import BaselineError
    from cogen_baselines.suite import plan

    runs = plan(["resnet"], ["e"], [0, 1], str(compgen))
    assert [(run.model, run.config, run.seed) for run in runs] == [
        ("resnet", config, seed) for config in ("E-1", "E-2") for seed in (0, 1)]
    with pytest.raises(BaselineError, match="no config of setting 'x'"):
        plan(["resnet"], ["x"], [0], str(compgen))
