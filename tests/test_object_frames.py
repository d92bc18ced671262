"""Object frames (``output: {object_frames: true}``): every object's box and tight array at every step,
exactly the states the sampler validated, re-derivable, without changing a byte of the other columns."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import oracle
import pyarrow.parquet as pq
import pytest
from test_sequential import SPEC

from cogen.bank import load_bank
from cogen.families.cogitao.build import OBJECT_FRAME_COLUMNS
from cogen.pipeline import build
from cogen.pipeline.verify import failed, verify
from cogen.specs import parse_spec_text

OUTPUTS = {"plain": "", "frames": "output: {frames: true}", "objects": "output: {object_frames: true}",
           "both": "output: {frames: true, object_frames: true}"}
ROWS = 90 + 15 + 15 + 12 + 12


def _build(root: Path, name: str, workers: int = 1) -> Path:
    spec = root / f"{name}.yaml"
    spec.write_text(SPEC.format(output=OUTPUTS[name]))
    build(spec, root / f"{name}-{workers}", workers=workers, rows_per_shard=40)
    return root / f"{name}-{workers}"


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("object_frames")
    return {name: _build(root, name) for name in OUTPUTS}


def _tables(folder: Path) -> dict[str, object]:
    return {p.relative_to(folder).as_posix(): pq.read_table(p) for p in sorted(folder.glob("data/**/*.parquet"))}


def _render(objects, height: int, width: int) -> np.ndarray:
    """Objects as (box, array) drawn on an empty grid through their masks (array != 0), in order."""
    grid = np.zeros((height, width), np.int8)
    for (row, col, h, w), array in objects:
        mask = array != 0
        grid[row: row + h, col: col + w][mask] = array[mask]
    return grid


def test_every_object_frame_is_the_oracle_step_of_the_last_and_renders_to_the_frames(builds):
    bank = load_bank()
    rows = 0
    for table in _tables(builds["both"]).values():
        for row in table.to_pylist():
            depth, n = len(row["actions"]), row["n_objects"]
            assert row["actions"] == row["transformations"]
            assert len(row["object_boxes"]) == len(row["object_grids"]) == n
            assert all(len(steps) == depth + 1 for steps in row["object_boxes"] + row["object_grids"])
            height, width = np.array(row["input"]).shape
            states = [[(tuple(row["object_boxes"][i][t]), np.array(row["object_grids"][i][t], np.int8))
                       for i in range(n)] for t in range(depth + 1)]
            for t, objects in enumerate(states):
                for (r, c, h, w), array in objects:  # a tight box inside the grid, holding its array
                    assert array.shape == (h, w) and 0 <= r and 0 <= c and r + h <= height and c + w <= width
                    mask = array != 0
                    assert mask[0].any() and mask[-1].any() and mask[:, 0].any() and mask[:, -1].any()
                assert np.array_equal(_render(objects, height, width), np.array(row["frames"][t], np.int8))
            assert np.array_equal(_render(states[0], height, width), np.array(row["input"], np.int8))
            assert np.array_equal(_render(states[-1], height, width), np.array(row["output"], np.int8))
            placed = [(r, c, bank.object(i)) for i, (r, c) in zip(row["object_ids"], row["object_positions"],
                                                                    strict=True)]
            assert [((r, c, *g.shape), g.tolist()) for r, c, g in placed] == \
                [(box, array.tolist()) for box, array in states[0]]
            for t, action in enumerate(row["actions"]):  # step t + 1: the oracle's step of step t's objects
                cause, moved, _ = oracle.scene([action], [(r, c, a) for (r, c, _, _), a in states[t]], height, width)
                assert cause is None, (row["id"], t, cause)
                assert [((r, c, *g.shape), g.tolist()) for r, c, g in moved] == \
                    [(box, array.tolist()) for box, array in states[t + 1]], (row["id"], t)
            rows += 1
    assert rows == ROWS


@pytest.mark.parametrize("with_objects,without", [("objects", "plain"), ("both", "frames")])
def test_object_frames_change_no_byte_of_the_other_columns(builds, with_objects, without):
    added = [name for name, _ in OBJECT_FRAME_COLUMNS]
    tables, others = _tables(builds[with_objects]), _tables(builds[without])
    assert tables.keys() == others.keys()
    for name, table in tables.items():
        assert table.column_names[-2:] == added
        kept = table.drop(added)
        if without == "plain":  # object frames alone add actions too
            assert kept.column_names[-1] == "actions"
            assert kept.column("actions").equals(kept.column("transformations"))
            kept = kept.drop(["actions"])
        assert kept.equals(others[name]), name
        assert not set(added) & set(others[name].column_names)


def test_builds_without_object_frames_keep_the_rows_they_had_before_the_option(builds):
    """Plain and frames-only builds: the rows main wrote before object frames existed (tests/golden)."""
    from test_sampling_modes import row_digests

    golden = json.loads((Path(__file__).parent / "golden" / "frames_digests.json").read_text())["digests"]
    assert {name: row_digests(builds[name]) for name in golden} == golden


@pytest.mark.slow
def test_one_and_two_workers_write_identical_bytes(builds, tmp_path, pooled):
    def digests(folder):
        return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(folder.glob("data/**/*.parquet"))}

    assert digests(_build(tmp_path, "objects", workers=2)) == digests(builds["objects"])


def test_verify_re_derives_every_object_frame(builds):
    for name in ("objects", "both"):
        checks = verify(builds[name], full=True)
        assert not failed(checks), failed(checks)
        detail = next(c.detail for c in checks if c.name == "re-derived outputs")
        assert "every object frame re-derived step by step" in detail
        assert ("every frame re-derived" in detail) == (name == "both")


def test_datasets_loads_a_list_per_object_of_a_list_per_step(builds):
    import datasets

    files = sorted(str(p) for p in (builds["objects"] / "data" / "Q-1").glob("train-*.parquet"))
    data = datasets.load_dataset("parquet", data_files={"train": files}, split="train")
    assert len(data) == 90
    row = data[0]
    table_row = pq.read_table(files[0]).slice(0, 1).to_pylist()[0]
    assert row["object_boxes"] == table_row["object_boxes"] and row["object_grids"] == table_row["object_grids"]
    assert len(row["object_boxes"]) == row["n_objects"] and len(row["object_boxes"][0]) == len(row["actions"]) + 1
    assert all(len(box) == 4 for steps in row["object_boxes"] for box in steps)
    assert isinstance(row["object_grids"][0][0][0][0], int)
    feature = data.features["object_grids"]
    for _ in range(4):  # object, step, line, cell
        feature = feature.feature
    assert feature.dtype == "int8" and data.features["object_boxes"].feature.feature.feature.dtype == "int16"


def test_object_frames_are_read_alone_with_frames_and_per_experiment():
    for output, flags in [("output: {object_frames: true}", (False, True)),
                          ("output: {frames: true, object_frames: true}", (True, True)),
                          ("output: {frames: true, object_frames: false}", (True, False))]:
        experiment = parse_spec_text(SPEC.format(output=output)).experiments[0]
        assert (experiment.frames, experiment.object_frames) == flags
    text = SPEC.format(output="output: {frames: true}").replace(
        "  Q-1:\n", "  Q-0:\n    output: {object_frames: true}\n    in_domain: {sequences: [[rot90]]}\n  Q-1:\n")
    assert [e.output for e in parse_spec_text(text).experiments] == [("frames", "object_frames"), ("frames",)]


def test_the_card_describes_the_object_frame_columns(builds):
    from cogen.family import FAMILIES

    card = (builds["objects"] / "README.md").read_text()
    for name, type_ in OBJECT_FRAME_COLUMNS + (("actions", "list<string>"),):
        assert f"| `{name}` | `{type_}` | {FAMILIES['cogitao'].column_notes[name]} |" in card


@pytest.mark.parametrize("output,words", [
    ("output: {object_frame: true}", ["unknown key 'object_frame'", "frames", "object_frames"]),
    ("output: {object_frames: 1}", ["output.object_frames must be true or false"]),
])
def test_bad_object_frame_options_are_named(output, words):
    from cogen.errors import SpecError

    with pytest.raises(SpecError) as error:
        parse_spec_text(SPEC.format(output=output), "q.yaml")
    for word in words:
        assert word in str(error.value)
