"""``cogen view`` without a browser: the split reader, the filters, the scoring of predictions
against ``cogen eval``, every family's drawing, the generic package, and the command line."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from terminal import as_in_a_terminal
from view_helpers import CONFIG, build_tiny, mixed_predictions, stored_rows, wrong_ids

from cogen.errors import DataError
from cogen.family import FAMILIES
from cogen.view import ViewApp
from cogen.view.drawing import Viewer, prediction_item
from cogen.view.index import FacetIndex
from cogen.view.source import FolderSource, safe_relpath
from cogen.view.split import SplitRows

VIEW = Path(__file__).resolve().parents[1] / "cogen" / "view"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The tiny build with frames, and a predictions file with every kind of mistake."""
    root = tmp_path_factory.mktemp("view")
    folder = build_tiny(root / "data")
    written = mixed_predictions(folder, root / "preds.jsonl")
    return folder, root / "preds.jsonl", written


# --- paths -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["../x", "a/../../x", "/etc/passwd", "a//b", "./a", "a/./b", "a\\..\\b", "a\x00b",
                                  ".cogen/lock", "", "C:/Windows", "a/..", "data/\n.parquet"])
def test_paths_that_could_leave_the_folder_are_refused(name):
    assert safe_relpath(name) is None


@pytest.mark.parametrize("name", ["README.md", "data/C1-1/train-00000-of-00001.parquet", "previews/C1-1.png"])
def test_plain_relative_paths_are_kept(name):
    assert safe_relpath(name) == name


def test_a_symlink_out_of_the_folder_is_refused(tmp_path):
    (tmp_path / "outside.txt").write_text("secret")
    folder = tmp_path / "data"
    (folder / "manifests").mkdir(parents=True)
    (folder / "link.txt").symlink_to(tmp_path / "outside.txt")
    with pytest.raises(DataError, match="leaves the dataset folder"):
        FolderSource(folder).path("link.txt")


# --- the split, a row group at a time ----------------------------------------------------------

def _synthetic(tmp_path: Path, legacy: bool = False) -> tuple[Path, list[dict]]:
    """A folder with one config whose split is 3 shards of uneven row groups."""
    folder, rows, files, shards = tmp_path / "synthetic", [], [], {}
    (folder / "manifests").mkdir(parents=True)
    (folder / "data" / "S").mkdir(parents=True)
    start = 0
    for k, (count, group) in enumerate([(7, 3), (1, 1), (12, 5)]):
        part = [{"id": f"S-train-{start + i}", "n": start + i, "grid": [[(start + i) % 10] * 2]} for i in range(count)]
        name = f"data/S/train-{k:05d}-of-00003.parquet"
        pq.write_table(pa.Table.from_pylist(part), folder / name, row_group_size=group)
        files.append(name)
        shards[name] = {"rows": count}
        rows += part
        start += count
    split = {"files": files} if legacy else {"files": files, "shards": shards}
    (folder / "manifests" / "S.json").write_text(json.dumps({"config": "S", "splits": {"train": split}}))
    return folder, rows


@pytest.mark.parametrize("legacy, batch", [(False, 64), (True, 64), (False, 2), (False, 1)])
def test_rows_read_by_row_group_equal_the_whole_table(tmp_path, monkeypatch, legacy, batch):
    import cogen.view.split

    monkeypatch.setattr(cogen.view.split, "BATCH", batch)
    monkeypatch.setattr(cogen.view.split, "CACHED_BATCHES", 3)
    folder, rows = _synthetic(tmp_path, legacy)
    split = SplitRows(FolderSource(folder), json.loads((folder / "manifests" / "S.json").read_text()), "train")
    assert len(split) == len(rows) == 20
    positions = np.random.default_rng(0).permutation(len(rows))
    assert split.rows(positions, ["id", "n", "grid", "absent"]) == [rows[k] for k in positions]
    with pytest.raises(DataError, match="outside the split"):
        split.rows([20], ["id"])


def test_a_page_reads_only_the_row_groups_it_shows(tmp_path):
    folder, _ = _synthetic(tmp_path)
    split = SplitRows(FolderSource(folder), json.loads((folder / "manifests" / "S.json").read_text()), "train")
    split.rows([0, 1, 2], ["id"])
    assert list(split._handles) == [0] and [key[:3] for key in split._cache] == [(0, 0, 0)]
    whole = [row for batch in split.batches(["id", "n", "absent"]) for row in batch.to_pylist()]
    assert whole == [{"id": f"S-train-{k}", "n": k} for k in range(20)]


# --- filters ----------------------------------------------------------------------------------

def test_facet_masks_match_the_rows_that_hold_the_values():
    rng = np.random.default_rng(1)
    names = ["a", "b", "c"]
    one = [str(v) for v in rng.integers(0, 4, 200)]
    many = [list(rng.choice(names, rng.integers(1, 4))) for _ in range(200)]  # repeats, as in rot90 -> rot90
    index = FacetIndex([f"r{k}" for k in range(200)], {"one": one, "many": many}, {"one": "one"})
    for value in set(one):
        assert np.array_equal(index.mask({"one": value}), np.array([v == value for v in one]))
    for value in names:
        assert np.array_equal(index.mask({"many": value}), np.array([value in v for v in many]))
    both = index.mask({"one": "2", "many": "a"})
    assert np.array_equal(both, np.array([o == "2" and "a" in m for o, m in zip(one, many, strict=True)]))
    assert not index.mask({"one": "nothing"}).any() and not index.mask({"unknown": "2"}).any()
    counts = {o["name"]: dict(o["values"]) for o in index.options()}
    assert counts["many"] == {value: sum(value in v for v in many) for value in names}, "a row counts once per value"
    assert sum(counts["one"].values()) == 200


# --- drawings -----------------------------------------------------------------------------------

def test_a_prediction_marks_exactly_the_cells_that_differ():
    rng = np.random.default_rng(2)
    truth = rng.integers(0, 10, (5, 6))
    guess = truth.copy()
    guess[rng.random(truth.shape) < 0.3] = 0
    item = prediction_item("p", guess, truth)
    assert sorted(map(tuple, item["marks"])) == sorted(map(tuple, np.argwhere(guess != truth).tolist()))
    assert item["right"] == (not (guess != truth).any())
    bigger = prediction_item("p", np.zeros((6, 6), int), np.zeros((5, 6), int))
    assert bigger["marks"] == [[5, c] for c in range(6)] and not bigger["right"] and "5x6" in bigger["note"]
    smaller = prediction_item("p", np.zeros((4, 6), int), np.zeros((5, 6), int))
    assert smaller["marks"] == [] and smaller["right"] is False
    assert prediction_item("p", None, truth, "null") == {"kind": "missing", "label": "p", "text": "null"}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_family_has_a_viewer(name):
    viewer = FAMILIES[name].load("viewer")
    for attribute in ("COLUMNS", "FACET_COLUMNS", "FACETS", "SUMMARY_FACET", "facets", "draw", "score"):
        assert hasattr(viewer, attribute), f"{name}'s viewer lacks {attribute} (see {Viewer.__name__})"
    assert viewer.SUMMARY_FACET is None or viewer.SUMMARY_FACET in viewer.FACETS


def test_the_view_package_names_no_family():
    for path in VIEW.rglob("*"):
        if path.suffix in (".py", ".js", ".html", ".css"):
            text = path.read_text()
            for name in FAMILIES:
                assert f'"{name}"' not in text and f"'{name}'" not in text, f"{path} names the family {name}"
            assert not re.search(r"family\s*==", text), f"{path} branches on a family"


def test_the_page_puts_text_in_as_text_and_uses_the_arc_palette():
    from cogen.palette import ARC_HEX

    script = (VIEW / "static" / "view.js").read_text()
    assert "innerHTML" not in script and "outerHTML" not in script and "insertAdjacentHTML" not in script
    css = (VIEW / "static" / "view.css").read_text()
    assert re.findall(r"\.c(\d) \{ background: (#[0-9A-Fa-f]{6}); \}", css) == [(str(k), h) for k, h in enumerate(ARC_HEX)]
    html = (VIEW / "static" / "index.html").read_text()
    assert "http" not in html and "http" not in script, "the page loads nothing from outside"


# --- the app on a real build ------------------------------------------------------------------

def _all_rows(app, split: str = "test_ood", **filters) -> list[dict]:
    rows, offset = [], 0
    while True:
        page = app.page(CONFIG, split, offset=offset, limit=7, **filters)
        rows += page["rows"]
        offset += 7
        if offset >= page["total"]:
            return rows


def test_wrong_rows_and_error_types_are_those_cogen_eval_counts(tiny):
    from cogen.eval import evaluate

    folder, predictions, written = tiny
    app = ViewApp(folder, predictions=predictions)
    assert app.predicted == (CONFIG, "test_ood")
    metrics = evaluate(folder, CONFIG, "test_ood", predictions)
    shown = {row["id"] for row in _all_rows(app, wrong_only=True)}
    assert shown == wrong_ids(folder, written) and len(shown) == sum(metrics["errors"].values())
    overview = app.filters(CONFIG, "test_ood")["predictions"]
    assert dict(overview["errors"]) == {k: v for k, v in metrics["errors"].items() if v}
    for name, count in metrics["errors"].items():
        if count:
            assert len(_all_rows(app, error=name)) == count
    bars = {bar["value"]: bar["accuracy"] for bar in overview["bars"]}
    assert bars == pytest.approx({name: s["grid_accuracy"] for name, s in metrics["by_sequence"].items()})
    assert ["grid_accuracy", f"{100 * metrics['grid_accuracy']:.2f} %"] in overview["summary"]


def test_drawn_rows_are_the_stored_rows_with_the_predictions_beside_them(tiny):
    folder, predictions, written = tiny
    app = ViewApp(folder, predictions=predictions)
    stored = stored_rows(folder, CONFIG, "test_ood")
    for row in _all_rows(app):
        truth = stored[row["id"]]
        grids = {item["label"]: item for panel in row["panels"] for item in panel["items"] if item["kind"] != "arrow"}
        assert grids["input"]["cells"] == truth["input"] and grids["output"]["cells"] == truth["output"]
        assert row["title"] == " -> ".join(truth["transformations"])
        steps = [grids[f"step {k}"]["cells"] for k in range(1, len(truth["frames"]))]
        assert steps == truth["frames"][1:]
        if written.get(row["id"]) is None:
            assert grids["prediction"]["kind"] == "missing"
        else:
            assert grids["prediction"]["cells"] == written[row["id"]]
        assert row["verdict"]["wrong"] == (row["id"] in wrong_ids(folder, written))


def test_filters_keep_only_matching_rows_and_a_first_page_needs_no_index(tiny):
    folder, _, _ = tiny
    app = ViewApp(folder)
    assert app.start == (CONFIG, "train")
    first = app.page(CONFIG, "train")
    assert first["total"] == 30 and len(first["rows"]) == 12
    assert app.split_of(CONFIG, "train")._index is None, "the first page must not read the whole split"
    stored = stored_rows(folder, CONFIG, "train")
    sequences = {" -> ".join(row["transformations"]) for row in stored.values()}
    assert len(sequences) == 3
    for sequence in sequences:
        shown = _all_rows(app, "train", chosen={"sequence": sequence})
        assert {row["id"] for row in shown} == {k for k, r in stored.items() if " -> ".join(r["transformations"]) == sequence}
    shown = _all_rows(app, "train", chosen={"transformation": "rot90", "objects": "2"})
    assert {row["id"] for row in shown} == {k for k, r in stored.items() if "rot90" in r["transformations"]
                                            and r["n_objects"] == 2}
    sizes = {f"{len(r['input'])}x{len(r['input'][0])}" for r in stored.values()}
    assert {o["name"]: {v for v, _ in o["values"]} for o in app.filters(CONFIG, "train")["facets"]}["grid"] == sizes


def test_the_first_page_does_not_wait_for_the_predictions_to_be_scored(tiny, monkeypatch):
    import threading

    folder, predictions, _ = tiny
    app = ViewApp(folder, predictions=predictions)
    part = app.split_of(CONFIG, "test_ood")
    release, score = threading.Event(), part.viewer.score

    def slow_score(data, path):
        release.wait(30)
        return score(data, path)

    monkeypatch.setattr(part, "viewer", type("Slow", (), {**{k: getattr(part.viewer, k) for k in
                                                              ("COLUMNS", "FACET_COLUMNS", "FACETS", "SUMMARY_FACET",
                                                               "facets", "draw")}, "score": staticmethod(slow_score)}))
    app.start_scoring()
    while not part._score_lock.locked():
        time.sleep(0.01)
    first = app.page(CONFIG, "test_ood")
    assert first["scored"] is False and len(first["rows"]) == 12 and "verdict" not in first["rows"][0]
    pending = app.filters(CONFIG, "test_ood")  # the dataset filters do not wait for the scores either
    assert pending["predictions"] == {"pending": True} and pending["facets"] and pending["rows"] == 30
    release.set()
    part.scored()
    assert app.filters(CONFIG, "test_ood")["predictions"]["wrong_rows"] == 20
    assert app.page(CONFIG, "test_ood")["scored"] is True


def test_a_jump_opens_the_page_holding_the_row(tiny):
    folder, _, _ = tiny
    app = ViewApp(folder)
    page = app.page(CONFIG, "train", limit=12, row_id=f"{CONFIG}-train-25")
    assert page["offset"] == 24 and f"{CONFIG}-train-25" in [row["id"] for row in page["rows"]]
    with pytest.raises(DataError, match="has no row"):
        app.page(CONFIG, "train", row_id="nope")
    with pytest.raises(DataError, match="no predictions"):
        app.page(CONFIG, "train", wrong_only=True)


def test_predictions_name_their_split_or_are_refused(tiny, tmp_path):
    folder, predictions, _ = tiny
    assert ViewApp(folder, predictions=predictions, config=CONFIG, split="test").predicted == (CONFIG, "test")
    with pytest.raises(DataError, match="give both --config and --split"):
        ViewApp(folder, predictions=predictions, split="test")
    other = tmp_path / "other.jsonl"
    other.write_text('{"id": "X-9-test-0", "prediction": [[1]]}\n')
    with pytest.raises(DataError, match="names no config and split"):
        ViewApp(folder, predictions=other)
    for config, split in [(None, None), (CONFIG, "test")]:
        with pytest.raises(DataError, match="no such"):
            ViewApp(folder, predictions=tmp_path / "absent.jsonl", config=config, split=split)
    with pytest.raises(DataError, match="has no config"):
        ViewApp(folder, config="nope")


# --- the other families ------------------------------------------------------------------------

def _family_view(folder: Path, config: str, predictions: Path, kind: str, **options):
    """A baseline for ``config`` / test of a family's tiny build (tests/conftest.py: tiny_builds), and a ViewApp on both."""
    from cogen.eval import write_baseline
    from cogen.folder import read_split

    data = read_split(folder, config, "test")
    write_baseline(predictions, data, kind, **options)
    return data, ViewApp(folder, predictions=predictions)


@pytest.mark.slow
def test_carc_episodes_and_their_wrong_queries_are_those_cogen_eval_counts(tiny_carc, tmp_path):
    from cogen.eval import evaluate

    config = "carc-systematicity-1860"
    data, app = _family_view(tiny_carc, config, tmp_path / "first.jsonl", "identity", queries="first")
    metrics = evaluate(tiny_carc, config, "test", tmp_path / "first.jsonl", queries="first")
    scored = app.split_of(config, "test").scored()
    assert int(scored.expected.sum()) == metrics["n"] == data.table.num_rows
    assert int(scored.correct.sum()) == round(metrics["exact_match"] * metrics["n"])
    row = app.page(config, "test", limit=1)["rows"][0]
    stored = data.table.slice(0, 1).to_pylist()[0]
    titles = [panel["title"] for panel in row["panels"]]
    assert len(titles) == len(stored["study_inputs"]) + len(stored["query_inputs"])
    query = row["panels"][len(stored["study_inputs"])]
    assert [item.get("cells") for item in query["items"] if item["kind"] == "grid"][:2] == \
        [stored["query_inputs"][0], stored["query_outputs"][0]]
    assert query["items"][-1]["label"] == "prediction" and "no_transformation" in query["title"]


@pytest.mark.slow
def test_programs_show_the_16_pairs_the_cell_groups_and_scored_programs(tiny_programs, tmp_path):
    config = "vp-block"
    data, app = _family_view(tiny_programs, config, tmp_path / "replies.jsonl", "target")
    row = app.page(config, "test", limit=1)["rows"][0]
    stored = data.table.slice(0, 1).to_pylist()[0]
    pairs = row["panels"][0]["items"]
    assert [item["label"] for item in pairs] == stored["inputs"] and [i["cells"] for i in pairs] == stored["sample_outputs"]
    assert row["panels"][1]["items"][0]["cells"] == (np.array(stored["cell_groups"]) + 1).tolist()
    assert "E 0" in row["panels"][2]["title"] and not row["verdict"]["wrong"]
    assert app.filters(config, "test")["predictions"]["bars"][0]["accuracy"] == 1.0


# --- the command line -------------------------------------------------------------------------

def _start(*args: str) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen([sys.executable, "-m", "cogen", "view", *args, "--no-browser"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=as_in_a_terminal)
    line = process.stdout.readline()
    match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    assert match, (line, process.stderr.read() if process.poll() is not None else "")
    return process, match.group(0)


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_the_command_serves_on_loopback_and_stops_with_one_line(tiny, stop):
    import urllib.request

    folder, predictions, _ = tiny
    process, url = _start(str(folder), "--predictions", str(predictions))
    with urllib.request.urlopen(url + "api/info", timeout=30) as response:
        assert json.loads(response.read())["predictions"]["split"] == "test_ood"
    time.sleep(0.2)
    process.send_signal(stop)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0 and out.strip() == "cogen view: stopped" and err == ""


@pytest.mark.slow
@pytest.mark.parametrize("args, message", [
    (["/nonexistent/folder"], "/nonexistent/folder: no such folder"),
    (["{folder}", "--predictions", "{folder}/README.md"], "no such .jsonl or .parquet predictions file"),
    (["{folder}", "--config", "nope"], "has no config 'nope'"),
    (["{folder}", "--split", "nope"], "has no split 'nope'"),
])
def test_bad_input_is_one_line(tiny, args, message):
    folder = tiny[0]
    result = subprocess.run([sys.executable, "-m", "cogen", "view", *[a.format(folder=folder) for a in args],
                             "--no-browser"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and message in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_a_hub_repo_is_viewed_like_its_folder(tiny, fake_hub):
    from cogen.hub.publish import push

    folder, predictions, written = tiny
    push(folder, "org/view", token="hf_test")
    app = ViewApp("org/view", predictions=predictions)
    assert app.info()["configs"] == ViewApp(folder).info()["configs"] and app.predicted == (CONFIG, "test_ood")
    stored = stored_rows(folder, CONFIG, "test_ood")
    rows = _all_rows(app)
    assert [row["id"] for row in rows] == list(stored)
    assert all(row["panels"][0]["items"][0]["cells"] == stored[row["id"]]["input"] for row in rows)
    assert {row["id"] for row in _all_rows(app, wrong_only=True)} == wrong_ids(folder, written)
    with pytest.raises(DataError, match="no local folder of that name, and the Hugging Face Hub has no dataset repo"):
        ViewApp("org/absent")


@pytest.mark.slow
def test_a_family_made_in_tests_alone_is_viewed_through_its_record(tmp_path, monkeypatch):
    from types import MappingProxyType

    from toy_family import TOY

    import cogen.family
    from cogen.eval import baseline_records, write_predictions
    from cogen.folder import read_split
    from cogen.pipeline import build

    monkeypatch.setattr(cogen.family, "FAMILIES", MappingProxyType({**cogen.family.FAMILIES, TOY.name: TOY}))
    spec = tmp_path / "toy.yaml"
    spec.write_text("setting: tm\nfamily: toy\nseed: 5\nside: 4\nood_side: 5\nrows: 6\n")
    build(spec, tmp_path / "data", workers=1)
    records = list(baseline_records(read_split(tmp_path / "data", "tm-mirror", "test"), "target"))
    records[1] = (records[1][0], np.zeros((4, 4), int))
    write_predictions(tmp_path / "p.jsonl", records)
    app = ViewApp(tmp_path / "data", predictions=tmp_path / "p.jsonl")
    assert [row["id"] for row in app.page("tm-mirror", "test", wrong_only=True)["rows"]] == [records[1][0]]
    assert app.filters("tm-mirror", "test")["facets"][0]["values"] == [["4x4", len(records)]]
