"""A folder holds one build (issue 26, item 2), and a resume keeps what is finished at every stage
(issue 28, item 4): each interruption point, then the same command again, gives a clean build's
bytes, manifests and card included, without sampling again what was finished."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from test_build import TINY  # two configs, five splits, 12 shards of 50 rows

from cogen.errors import BuildError, BuildInterrupted
from cogen.pipeline import build
from cogen.pipeline.verify import failed, verify

OPTIONS = {"workers": 1, "rows_per_shard": 50}


def every_file(folder: Path) -> dict[str, str]:
    """SHA-256 of every file of a finished build's folder; its build state (journals, plans, saved keys)
    must be gone, only the lock left."""
    assert [p.name for p in (folder / ".cogen").rglob("*")] == ["lock"]
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != "lock"}


@pytest.fixture
def spec(tmp_path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY)
    return path


@pytest.fixture
def built(spec, tmp_path) -> Path:
    out = tmp_path / "out"
    build(spec, out, **OPTIONS)
    return out


def _edited(spec: Path, old: str, new: str) -> Path:
    path = spec.with_name("edited.yaml")
    path.write_text(spec.read_text().replace(old, new))
    return path


def _generator_version(monkeypatch):
    monkeypatch.setattr("cogen.families.cogitao.build.GENERATOR_VERSION", 99)


def _code(monkeypatch):
    monkeypatch.setattr("cogen.pipeline.driver.code_digest", lambda: "0" * 64)


def _numpy(monkeypatch):
    from cogen.folder import environment_versions

    monkeypatch.setattr("cogen.pipeline.driver.environment_versions",
                        lambda: {**environment_versions(), "numpy": "0.0"})


CHANGES = {  # what differs -> (how the second build differs, the phrase of the refusal)
    "spec value": (lambda spec, mp: (_edited(spec, "[6, 8]", "[7, 8]"), {}), r"the spec's values differ \(T-1, T-2\)"),
    "seed": (lambda spec, mp: (spec, {"seed": 9}), r"seed 3 in the folder, 9 now \(T-1, T-2\)"),
    "scale": (lambda spec, mp: (spec, {"scale": 0.5}), r"scale 1\.0 in the folder, 0\.5 now"),
    "generator version": (lambda spec, mp: (spec, _generator_version(mp) or {}), r"generator version 2 in the folder, 99 now"),
    "dropped config": (lambda spec, mp: (_edited(spec, TINY[TINY.index("  T-2:"):], ""), {}),
                       r"configs that this spec does not make \(T-2\)"),
    "code": (lambda spec, mp: (spec, _code(mp) or {}), r"cogen's code \w{12}\.\.\. in the folder, 000000000000\.\.\. now"),
    "library version": (lambda spec, mp: (spec, _numpy(mp) or {}), r"numpy \S+ in the folder, 0\.0 now"),
    "only, with another seed": (lambda spec, mp: (spec, {"seed": 9, "only": ["T-1"]}), r"seed 3 in the folder, 9 now"),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_other_inputs_are_refused_and_force_gives_a_clean_build(change, spec, built, tmp_path, monkeypatch):
    make, phrase = CHANGES[change]
    before = every_file(built)
    second, options = make(spec, monkeypatch)
    with pytest.raises(BuildError, match=rf"holds a build with other inputs: .*{phrase}.*pass --force"):
        build(second, built, **OPTIONS, **options)
    assert every_file(built) == before  # refused before anything was touched
    build(second, built, **OPTIONS, **options, force=True)
    build(second, tmp_path / "clean", **OPTIONS, **options)
    assert every_file(built) == every_file(tmp_path / "clean")


def test_the_same_inputs_keep_everything(spec, built):
    before = every_file(built)
    report = build(spec, built, **OPTIONS)
    assert all(config.kept for config in report.configs)
    assert every_file(built) == before


def test_a_second_spec_is_refused_and_merge_is_the_way(spec, built, tmp_path):
    from cogen.hub import merge

    other = _edited(spec, "setting: T", "setting: U").with_name("other.yaml")
    other.write_text(TINY.replace("setting: T", "setting: U").replace("T-1", "U-1").replace("T-2", "U-2"))
    with pytest.raises(BuildError, match=r"configs that this spec does not make \(T-1, T-2\)"):
        build(other, built, **OPTIONS)
    build(other, tmp_path / "other", **OPTIONS)
    merge([tmp_path / "other"], built)
    assert not failed(verify(built))


def test_a_manifest_records_what_its_config_was_built_from(built):
    import json

    from cogen.folder.inputs import code_digest

    inputs = json.loads((built / "manifests/T-1.json").read_text())["inputs"]
    assert {"fingerprint", "seed", "scale", "rows_per_shard", "generator_version", "bank_sha256", "versions", "code",
            "parquet_format"} <= set(inputs)
    assert (inputs["seed"], inputs["scale"], inputs["code"]) == (3, 1.0, code_digest())


def _interrupt_on(monkeypatch, target: str, call: int):
    """Make ``target`` (module:attribute) raise KeyboardInterrupt on its ``call``-th call."""
    import importlib

    module, name = target.split(":")
    real = getattr(importlib.import_module(module), name)
    calls = {"n": 0}

    def interrupted(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == call:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(f"{module}.{name}", interrupted)
    return calls


def _no_sampling(monkeypatch):
    """Fail the test if the resumed build samples a key or a shard again."""
    def sampled(*args, **kwargs):
        raise AssertionError("sampled again")

    monkeypatch.setattr("cogen.families.cogitao.build.shard_keys_and_file", sampled)
    monkeypatch.setattr("cogen.families.cogitao.build.shard_tables", sampled)
    monkeypatch.setattr("cogen.families.cogitao.build.CogitaoBuilder.pilot", sampled)


@pytest.mark.parametrize("stage,target,call", [
    ("writing manifests", "cogen.pipeline.driver:_write_manifest", 2),
    ("writing the card", "cogen.pipeline.driver:write_card", 1),
])
def test_a_build_stopped_after_its_last_shard_resumes_without_sampling(stage, target, call, spec, tmp_path,
                                                                       monkeypatch):
    out = tmp_path / "out"
    _interrupt_on(monkeypatch, target, call)
    with pytest.raises(BuildInterrupted, match=rf"interrupted while {stage} \(12 of 12 shards written"):
        build(spec, out, **OPTIONS)
    monkeypatch.undo()
    _no_sampling(monkeypatch)
    report = build(spec, out, **OPTIONS)
    assert all(config.kept for config in report.configs)  # every config reported kept, nothing resampled
    monkeypatch.undo()
    build(spec, tmp_path / "clean", **OPTIONS)
    assert every_file(out) == every_file(tmp_path / "clean")  # manifests and card byte-identical too


def test_an_interrupted_key_pass_keeps_the_keys_of_finished_shards(spec, tmp_path, monkeypatch):
    out = tmp_path / "out"
    _interrupt_on(monkeypatch, "cogen.families.cogitao.build:shard_keys_and_file", 4)
    with pytest.raises(BuildInterrupted, match=r"interrupted while sampling keys \(no shard written yet; the key pass "
                                               r"of 3 shards is saved\)"):
        build(spec, out, **OPTIONS)
    monkeypatch.undo()
    calls = _interrupt_on(monkeypatch, "cogen.families.cogitao.build:shard_keys_and_file", 0)
    build(spec, out, **OPTIONS)
    assert calls["n"] == 12 - 3  # the three finished shards of the key pass were not sampled again
    monkeypatch.undo()
    build(spec, tmp_path / "clean", **OPTIONS)
    assert every_file(out) == every_file(tmp_path / "clean")


def test_an_interrupted_shard_pass_resumes_to_a_clean_build_bytes(spec, tmp_path, monkeypatch):
    out = tmp_path / "out"
    monkeypatch.setattr("cogen.families.cogitao.build.ENCODED_ROWS", 0)  # every shard written by the second pass
    _interrupt_on(monkeypatch, "cogen.pipeline.shards:write_parquet_atomic", 5)
    with pytest.raises(BuildInterrupted, match=r"interrupted while writing shards \(4 of 12"):
        build(spec, out, **OPTIONS)
    monkeypatch.undo()
    monkeypatch.setattr("cogen.families.cogitao.build.ENCODED_ROWS", 0)
    report = build(spec, out, **OPTIONS)
    assert sum(config.skipped for config in report.configs) == 4
    build(spec, tmp_path / "clean", **OPTIONS)
    assert every_file(out) == every_file(tmp_path / "clean")  # the manifests' statistics in one order


def test_a_resume_after_a_code_change_keeps_no_old_shard(spec, tmp_path, monkeypatch):
    out = tmp_path / "out"
    _interrupt_on(monkeypatch, "cogen.pipeline.shards:write_parquet_atomic", 5)
    monkeypatch.setattr("cogen.families.cogitao.build.ENCODED_ROWS", 0)
    with pytest.raises(BuildInterrupted):
        build(spec, out, **OPTIONS)
    monkeypatch.undo()
    _code(monkeypatch)
    with pytest.raises(BuildError, match=r"cogen's code .* in the folder, 000000000000\.\.\. now \(T-1, T-2\)"):
        build(spec, out, **OPTIONS)
    report = build(spec, out, **OPTIONS, force=True)
    assert sum(config.skipped for config in report.configs) == 0  # nothing of the old code kept


def test_every_write_reaches_the_disk_before_its_rename(tmp_path, monkeypatch):
    import os

    from cogen.folder import append_journal, atomic_write

    synced = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd)))
    atomic_write(tmp_path / "a.json", lambda temporary: temporary.write_text("{}"))
    assert len(synced) == 2  # the file, then its folder
    append_journal(tmp_path, "T-1", "key", "data/T-1/x.parquet", {"sha256": "0", "bytes": 1, "rows": 1, "row_groups": 1})
    assert len(synced) == 3


def test_workers_are_capped_at_the_cores(spec, tmp_path, monkeypatch):
    monkeypatch.setattr("cogen.pipeline.driver.available_cores", lambda: 1)
    notes = []
    build(spec, tmp_path / "out", workers=64, rows_per_shard=50, notify=notes.append)
    assert notes == ["--workers 64 is more than the 1 cores available; using 1"]


def test_a_build_that_cannot_fit_in_memory_is_refused_before_it_starts(spec, tmp_path, monkeypatch):
    monkeypatch.setattr("cogen.pipeline.driver.machine_memory", lambda: 2**30)
    with pytest.raises(BuildError, match=r"this build makes 520,000,000,000 rows and needs about [0-9.,]+ TiB of memory, "
                                         r"more than the 1\.0 GiB this process may use"):
        build("c1", tmp_path / "out", scale=1e6, workers=1)
    assert not list((tmp_path / "out").glob("data/*"))


@pytest.mark.parametrize("options,message", [
    ({"scale": float("nan")}, "--scale must be a positive finite number, got nan"),
    ({"scale": float("inf")}, "--scale must be a positive finite number, got inf"),
    ({"scale": -1.0}, "--scale must be a positive finite number"),
    ({"seed": -1}, "--seed must be an integer from 0 to"),
    ({"seed": 2**64}, "--seed must be an integer from 0 to"),
    ({"workers": 0}, "--workers must be a positive integer"),
])
def test_numbers_no_build_can_use_give_one_line(spec, tmp_path, options, message):
    with pytest.raises(BuildError, match=message):
        build(spec, tmp_path / "out", **{"workers": 1, **options})


@pytest.mark.parametrize("args,message", [
    (["build", "--scale", "nan"], "--scale must be a finite number, got nan"),
    (["build", "--scale", "inf"], "--scale must be a finite number, got inf"),
    (["build", "--scale", "0"], "--scale must be greater than 0"),
    (["build", "--seed", "-1"], "--seed must be at least 0, got -1"),
    (["build", "--seed", str(2**64)], "--seed must be at most"),
    (["build", "--workers", "0"], "--workers must be at least 1"),
    (["verify", ".", "--sample", "-1"], "--sample must be at least 0"),
])
def test_every_cli_number_is_checked_before_any_work(args, message, tmp_path):
    from typer.testing import CliRunner

    from cogen.cli import app

    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "out")] if args[0] == "build" else args)
    assert result.exit_code == 2 and message in " ".join(result.output.split()), result.output
    assert not (tmp_path / "out").exists()


def test_force_empties_a_remote_folder_too(spec, tmp_path):
    pytest.importorskip("fsspec")
    import fsspec

    url, state = "memory://inputs-test/out", tmp_path / "state"
    build(spec, url, state_dir=state, **OPTIONS)
    with pytest.raises(BuildError, match="seed 3 in the folder, 9 now"):
        build(spec, url, state_dir=state, seed=9, only=["T-1"], **OPTIONS)
    build(spec, url, state_dir=state, seed=9, only=["T-1"], force=True, **OPTIONS)
    files = fsspec.filesystem("memory").find("/inputs-test/out")
    assert files and not [f for f in files if "/T-2" in f]  # the old T-2 is gone from the bucket too
    fsspec.filesystem("memory").rm("/inputs-test", recursive=True)


def test_a_build_that_failed_before_writing_anything_refuses_nothing(spec, tmp_path):
    from cogen.errors import GenerationError

    hopeless = _edited(spec, "[[translate_up], [rot90], [mirror_horizontal, rot90]]",
                       "[[double_right, double_right, double_right]]").read_text()
    spec.with_name("hopeless.yaml").write_text(hopeless.replace("rows: [1, 3], cols: [1, 3]", "rows: [3, 3], cols: [3, 3]"))
    with pytest.raises(GenerationError):
        build(spec.with_name("hopeless.yaml"), tmp_path / "out", **OPTIONS)
    build(spec, tmp_path / "out", **OPTIONS)  # the fixed spec: nothing of the failed one was recorded
    assert not failed(verify(tmp_path / "out"))


@pytest.mark.slow
def test_a_key_pass_stopped_in_a_worker_pool_keeps_what_it_saved(spec, tmp_path, pooled):
    out = tmp_path / "out"
    seen = {"keys": 0}

    def progress(phase, advance, total):  # Ctrl-C, as the driver's thread sees it, after 3 key-pass results
        seen[phase] = seen.get(phase, 0) + advance
        if phase == "keys" and advance and seen["keys"] >= 3 * 50:
            raise KeyboardInterrupt

    with pytest.raises(BuildInterrupted, match=r"interrupted while sampling keys \(no shard written yet; the key pass "
                                               r"of \d+ shards is saved"):
        build(spec, out, workers=2, rows_per_shard=50, progress=progress)
    assert len(list(out.glob(".cogen/keys/*/*.npz"))) >= 3
    build(spec, out, workers=2, rows_per_shard=50)
    build(spec, tmp_path / "clean", **OPTIONS)
    assert every_file(out) == every_file(tmp_path / "clean")
