"""Sequential COGITAO (``output: {frames: true}``): every frame the sampler validated, re-derivable,
without changing a byte of the plain rows."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import oracle
import pyarrow.parquet as pq
import pytest

from cogen.bank import load_bank
from cogen.errors import SpecError
from cogen.pipeline import build
from cogen.pipeline.verify import failed, verify
from cogen.specs import load_spec, parse_spec_text

SPEC = """\
setting: Q
seed: 5
{output}
defaults:
  grid: {{height: [7, 9], width: [7, 9]}}
  objects: {{count: [1, 2], where: {{is_shape_fully_connected: true, rows: [1, 3], cols: [1, 3]}}}}
  sizes: {{train: 90, validation: 15, test: 15, validation_ood: 12, test_ood: 12}}
experiments:
  Q-1:
    in_domain: {{sequences: [[translate_up], [rot90, translate_right], [mirror_horizontal, translate_down, rot90]]}}
    out_of_domain: {{sequences: [[translate_right, rot90]]}}
"""


def _spec(tmp: Path, output: str) -> Path:
    path = tmp / f"q{len(output)}.yaml"
    path.write_text(SPEC.format(output=output))
    return path


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    root = tmp_path_factory.mktemp("sequential")
    build(_spec(root, "output: {frames: true}"), root / "frames", workers=1, rows_per_shard=40)
    build(_spec(root, ""), root / "plain", workers=1, rows_per_shard=40)
    return root


def _tables(folder: Path) -> dict[str, object]:
    return {p.relative_to(folder).as_posix(): pq.read_table(p) for p in sorted(folder.glob("data/**/*.parquet"))}


def test_every_frame_follows_from_the_last_by_its_action_per_the_numpy_oracle(builds):
    bank = load_bank()
    rows = 0
    for table in _tables(builds / "frames").values():
        for row in table.to_pylist():
            frames = [np.array(f, np.int8) for f in row["frames"]]
            assert row["actions"] == row["transformations"]
            assert len(frames) == len(row["actions"]) + 1
            assert np.array_equal(frames[0], np.array(row["input"], np.int8))
            assert np.array_equal(frames[-1], np.array(row["output"], np.int8))
            objects = [(r, c, bank.object(i)) for i, (r, c) in zip(row["object_ids"], row["object_positions"],
                                                                       strict=True)]
            height, width = frames[0].shape
            for step, action in enumerate(row["actions"]):  # each frame: the previous objects moved by one step
                cause, objects, frame = oracle.scene([action], objects, height, width)
                assert cause is None, (row["id"], step, cause)
                assert np.array_equal(frame, frames[step + 1]), (row["id"], step)
            rows += 1
    assert rows == 90 + 15 + 15 + 12 + 12


def test_frames_change_no_byte_of_the_plain_columns(builds):
    with_frames, plain = _tables(builds / "frames"), _tables(builds / "plain")
    assert with_frames.keys() == plain.keys()
    for name, table in with_frames.items():
        assert table.column_names[-2:] == ["frames", "actions"]
        assert table.drop(["frames", "actions"]).equals(plain[name].select(table.column_names[:-2]))
        assert "frames" not in plain[name].column_names


@pytest.mark.slow
def test_one_and_two_workers_write_identical_bytes(builds, tmp_path, pooled):
    build(_spec(tmp_path, "output: {frames: true}"), tmp_path / "two", workers=2, rows_per_shard=40)

    def digests(folder):
        return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(folder.glob("data/**/*.parquet"))}

    assert digests(tmp_path / "two") == digests(builds / "frames")


def test_verify_re_derives_every_frame_and_catches_a_changed_one(builds, tmp_path):
    import shutil

    from cogen.kit.testing import edit_shard

    checks = verify(builds / "frames", full=True)
    assert not failed(checks)
    rederived = next(c for c in checks if c.name == "re-derived outputs")
    assert "every frame re-derived" in rederived.detail
    folder = tmp_path / "tampered"
    shutil.copytree(builds / "frames", folder)
    shard = sorted(folder.glob("data/Q-1/train-*.parquet"))[0]

    def change(columns):
        frames = columns["frames"][3]
        frames[1][0][0] = (frames[1][0][0] + 1) % 10  # a middle frame, so input and output still replay
    edit_shard(shard, change)
    bad = [c for c in failed(verify(folder, full=True)) if c.name == "re-derived outputs"]
    assert bad and "frame" in bad[0].detail


def test_split_arrays_pads_frames_to_depth_plus_one(builds):
    from cogen.io import split_arrays

    arrays = split_arrays(builds / "frames", "Q-1", split="train", size=9)
    assert arrays["frames"].shape == (90, 4, 9, 9)
    assert np.array_equal(arrays["frames"][:, 0], arrays["input"])
    depths = (arrays["frames_shape"][:, :, 0] > 0).sum(axis=1) - 1
    last = arrays["frames"][np.arange(90), depths]
    assert np.array_equal(last, arrays["output"])


def test_output_is_read_per_spec_and_per_experiment():
    text = SPEC.format(output="output: {frames: true}").replace(
        "  Q-1:\n", "  Q-0:\n    output: {frames: false}\n    in_domain: {sequences: [[rot90]]}\n  Q-1:\n")
    setting = parse_spec_text(text)
    assert [e.frames for e in setting.experiments] == [False, True]
    assert load_spec("c1_sequential").experiments[0].frames
    assert not load_spec("c1").experiments[0].frames


@pytest.mark.parametrize("output,words", [
    ("output: {frame: true}", ["unknown key 'frame'", "frames"]),
    ("output: {frames: yes please}", ["output.frames must be true or false"]),
    ("output: frames", ["expected a mapping"]),
])
def test_bad_output_options_are_named(output, words):
    with pytest.raises(SpecError) as error:
        parse_spec_text(SPEC.format(output=output), "q.yaml")
    for word in words:
        assert word in str(error.value)
    assert "q.yaml" in str(error.value)


def test_previews_show_a_sequential_row_as_a_strip_of_its_frames(builds, tmp_path):
    from cogen.card.preview import Band, _draw_strips, render_config

    previews = render_config(builds / "frames", ["Q-1"], "train", 3, tmp_path)
    assert previews[0].labels == ("train", "train frames") and previews[0].path.is_file()
    strip = tuple(np.full((3, 4), colour, np.int8) for colour in (1, 2, 3))
    drawn = _draw_strips(Band("x", (), (strip,)), cell=2)
    widths = 3 * (4 * 3 + 1) + 2 * 8  # three 4-cell grids (2 px cells, 1 px lines), two 8-px arrow gaps
    assert drawn.shape[1] == widths
    seen = [int(v) for v in drawn[2, :] if v < 10]  # the middle of the first cell row, left to right
    assert [c for i, c in enumerate(seen) if i == 0 or c != seen[i - 1]] == [1, 2, 3]
