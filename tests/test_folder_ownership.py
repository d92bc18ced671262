"""cogen writes and deletes only its own files, only inside the folder (issue 36, review round 4: F8-F12, F16-F19).

Every layout of the review's symlink cases is built into, with a victim folder outside holding
files whose names cogen uses; the build must refuse with one line naming the link, and every
victim file must keep its bytes. ``--force`` replaces only what cogen wrote; a manifest path
outside ``data/<config>/`` is refused before anything reads it (verify, merge, push); merge
re-signs nothing that verify flags and replaces another build only with ``--force``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from cogen.errors import BuildError, PublishError
from cogen.families.cogitao.testing import TINY_SPEC as TINY_COGITAO
from cogen.folder.ownership import foreign_files, is_temporary, listed_shards, shard_path_problem
from cogen.hub import merge
from cogen.hub.publish import push
from cogen.pipeline import build
from cogen.pipeline.verify import failed, verify

#: Files a victim folder outside the dataset folder holds: a name cogen gives shards, manifests,
#: previews and its build state, a name of its own, and a hidden temporary-looking file.
VICTIM_FILES = ("train-00000-of-00001.parquet", "V-1.json", "V-1.png", "inputs.json", "lock", "mine.parquet", ".x.tmp")


@pytest.fixture(scope="module")
def spec(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("spec") / "tiny.yaml"
    path.write_text(TINY_COGITAO)
    return path


def _victim(root: Path) -> dict[str, str]:
    victim = root / "victim"
    victim.mkdir()
    for name in VICTIM_FILES:
        (victim / name).write_text(f"the user's {name}\n")
    return _digests(victim)


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize("link", ["data", "data/V-1", "manifests", "previews", ".cogen", ".cogen/keys"])
def test_a_link_among_the_places_cogen_writes_in_is_refused_and_its_target_untouched(spec, tmp_path, link):
    before = _victim(tmp_path)
    out = tmp_path / "out"
    (out / link).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(tmp_path / "victim", out / link)
    with pytest.raises(BuildError, match=rf"{out / link} is a symbolic link \(to .*victim\); cogen writes and deletes "
                                         rf"files in {link} and never follows a link out of the folder"):
        build(spec, out, workers=1)
    assert _digests(tmp_path / "victim") == before
    assert sorted(p.name for p in (tmp_path / "victim").iterdir()) == sorted(VICTIM_FILES)


@pytest.mark.slow
def test_the_cli_refuses_a_linked_config_folder_in_one_line(spec, tmp_path):
    import subprocess
    import sys

    before = _victim(tmp_path)
    (tmp_path / "out" / "data").mkdir(parents=True)
    os.symlink(tmp_path / "victim", tmp_path / "out" / "data" / "V-1")
    result = subprocess.run([sys.executable, "-m", "cogen", "build", "--config", str(spec), "--out",
                             str(tmp_path / "out"), "--workers", "1", "--no-progress"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "data/V-1 is a symbolic link" in lines[0], result.stderr
    assert _digests(tmp_path / "victim") == before


@pytest.mark.slow
def test_the_card_command_and_merge_refuse_linked_places_too(tiny_cogitao, tmp_path):
    from cogen.card import write_card

    before = _victim(tmp_path)
    folder = tmp_path / "copy"
    shutil.copytree(tiny_cogitao, folder)
    shutil.rmtree(folder / "previews")
    os.symlink(tmp_path / "victim", folder / "previews")
    with pytest.raises(BuildError, match="previews is a symbolic link"):
        write_card(folder)
    with pytest.raises(BuildError, match="previews is a symbolic link"):
        merge([tiny_cogitao], folder)
    assert _digests(tmp_path / "victim") == before


def test_a_rebuild_deletes_only_listed_shards_and_refuses_a_file_cogen_did_not_write(spec, tmp_path):
    out = tmp_path / "out"
    build(spec, out, workers=1)
    (out / "manifests" / "V-1.json").unlink()  # the config is built again: its folder is cleared of stale files
    stale = out / "data" / "V-1" / "train-00001-of-00002.parquet"  # a shard an earlier plan wrote and journaled
    shutil.copyfile(out / "data" / "V-1" / "train-00000-of-00001.parquet", stale)
    from cogen.folder import append_journal

    append_journal(out, "V-1", "an earlier build", stale.relative_to(out).as_posix(), {})
    (out / "data" / "V-1" / ".train-00000-of-00001.parquet.4242.tmp").write_text("a stopped write")
    user = out / "data" / "V-1" / ".x.tmp"
    user.write_text("the user's")
    with pytest.raises(BuildError, match=r"data/V-1/\.x\.tmp is not a file cogen wrote \(no manifest, plan or journal of "
                                         r"the folder lists it\), and cogen deletes only its own files"):
        build(spec, out, workers=1)
    assert user.read_text() == "the user's"
    assert not (out / ".cogen" / "inputs.json").exists()  # refused before the key pass, not after it
    user.unlink()
    build(spec, out, workers=1)
    assert not stale.exists() and not list(out.glob("data/V-1/.*.tmp"))
    assert not failed(verify(out))


def test_force_replaces_only_what_cogen_wrote(spec, tmp_path):
    """F9: user files under data/ survive ``--force``, which refuses and names them."""
    out = tmp_path / "out"
    build("c1", out, scale=0.001, workers=1, only=["C1-1"])
    results = out / "data" / "experiments" / "results.csv"
    results.parent.mkdir()
    results.write_text("precious,1\n")
    (out / "previews" / "mine.png").write_text("a picture of mine")
    for force in (False, True):
        with pytest.raises(BuildError, match=r"holds a build with other inputs \(.*\) and files cogen did not write: "
                                             r"data/experiments/results\.csv, previews/mine\.png\. cogen deletes only "
                                             "its own files, even with --force"):
            build(spec, out, workers=1, force=force)
    assert results.read_text() == "precious,1\n" and (out / "manifests" / "C1-1.json").is_file()
    results.unlink()
    (out / "previews" / "mine.png").unlink()
    (out / ".cogen" / "mine.txt").write_text("kept")
    build(spec, out, workers=1, force=True)
    assert sorted(p.name for p in (out / "manifests").iterdir()) == ["V-1.json"]
    assert (out / ".cogen" / "mine.txt").read_text() == "kept"
    assert not failed(verify(out))


def test_a_readme_quoting_the_marker_is_not_a_cogen_card(spec, tmp_path):
    """F8: only a card that starts with cogen's front matter and marker is cogen's to replace."""
    from cogen.card.card import CARD_MARKER, is_cogen_card

    out = tmp_path / "out"
    out.mkdir()
    notes = f"# How cogen cards look\nThey start with:\n{CARD_MARKER}\nMY NOTES\n"
    (out / "README.md").write_text(notes)
    with pytest.raises(BuildError, match="README.md was not written by cogen"):
        build(spec, out, workers=1)
    assert (out / "README.md").read_text() == notes
    assert not is_cogen_card(f"{CARD_MARKER}\nMY NOTES\n")
    build(spec, out, workers=1, force=True)
    assert is_cogen_card((out / "README.md").read_text())


@pytest.mark.parametrize("name", ["con", "NUL", "Com1", "lpt9.txt", "aux.x", "C1-1."])
def test_names_that_windows_cannot_hold_are_refused(name, tmp_path):
    from cogen.folder.names import name_problem

    assert name_problem(name) is not None
    spec = tmp_path / "spec.yaml"
    spec.write_text(TINY_COGITAO.replace("V-1:", f"{name!r}:"))
    with pytest.raises(Exception, match=r"cannot be used|line"):
        build(spec, tmp_path / "out", workers=1)
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").rglob("*.parquet"))


def test_cogen_names_and_temporaries():
    assert shard_path_problem("C3-1", "test", "data/C3-1/test-00000-of-00001.parquet") is None
    for path in ("data/C3-1/../../../outside_secret.txt", "data/C3-1/validation-00000-of-00001.parquet",
                 "data/C3-2/test-00000-of-00001.parquet", "/etc/passwd", "data/C3-1/test-00001-of-00001.parquet",
                 "data/C3-1/sub/test-00000-of-00001.parquet", 7):
        assert shard_path_problem("C3-1", "test", path) is not None, path
    assert is_temporary(".train-00000-of-00001.parquet.123.tmp") and is_temporary(".README.md.9.tmp")
    assert not is_temporary(".x.tmp") and not is_temporary(".notes.txt.12.tmp")


def _hostile(folder: Path, secret: Path) -> None:
    """The review's F18 manifest: legacy (no shard records), its test files extended by a path out of the folder."""
    path = folder / "manifests" / "V-1.json"
    manifest = json.loads(path.read_text())
    manifest.pop("manifest_format", None)
    for info in manifest["splits"].values():
        info.pop("shards", None)
    outside = os.path.relpath(secret, folder / "data" / "V-1")
    manifest["splits"]["test"]["files"].append(f"data/V-1/{outside}")
    path.write_text(json.dumps(manifest, indent=2))


def test_a_manifest_path_out_of_the_folder_is_refused_before_anything_reads_it(tiny_cogitao, tmp_path):
    """F18: merge, verify and push (even --no-verify) refuse the manifest, naming it; nothing is copied."""
    from cogen.card import write_card

    secret = tmp_path / "outside_secret.txt"
    secret.write_text("PRIVATE-KEY-MATERIAL")
    source = tmp_path / "src"
    shutil.copytree(tiny_cogitao, source)
    _hostile(source, secret)
    refused = r"manifests/V-1\.json: 'data/V-1/\.\./.*outside_secret\.txt' is not a shard path of split test"
    with pytest.raises(BuildError, match=refused):
        write_card(source)
    with pytest.raises(BuildError, match=refused):
        verify(source)
    with pytest.raises(BuildError, match=refused):
        merge([source], tmp_path / "dst")
    with pytest.raises((BuildError, PublishError), match=refused):
        push(source, "me/x", dry_run=True, verify=False)
    assert not list(tmp_path.glob("dst/data/**/outside_secret.txt"))


def test_merge_refuses_a_source_whose_card_does_not_list_its_manifest(tiny_cogitao, tmp_path):
    """F17: an edit that verify flags (a manifest changed after the card) is not re-signed by merge."""
    source = tmp_path / "src"
    shutil.copytree(tiny_cogitao, source)
    path = source / "manifests" / "V-1.json"
    path.write_text(path.read_text().replace('"seed": 5', '"seed": 2'))
    with pytest.raises(BuildError, match=r"its card does not match its manifests \(manifests/V-1\.json changed after "
                                         r"the card was written"):
        merge([source], tmp_path / "dst")
    (source / "README.md").unlink()
    with pytest.raises(BuildError, match=r"its card does not match its manifests \(README\.md is missing"):
        merge([source], tmp_path / "dst")
    assert not (tmp_path / "dst" / "manifests").exists()


def test_merge_replaces_another_build_only_with_force_and_syncs_what_it_copies(tiny_cogitao, spec, tmp_path,
                                                                              monkeypatch):
    """F16 and F19: a config of another seed is replaced only on purpose; every copied shard is flushed."""
    other = tmp_path / "seed6"
    shutil.copyfile(spec, tmp_path / "seed6.yaml")
    build(tmp_path / "seed6.yaml", other, workers=1, seed=6)
    into = tmp_path / "into"
    shutil.copytree(tiny_cogitao, into)
    before = {p.relative_to(into).as_posix(): p.read_bytes() for p in into.rglob("*") if p.is_file()}
    with pytest.raises(BuildError, match=r"config V-1 of .*into holds other data \(fingerprint \w+, seed 5, scale 1\.0\) "
                                         r"than the one of .*seed6 \(fingerprint \w+, seed 6, scale 1\.0\); pass --force"):
        merge([other], into)
    assert {p.relative_to(into).as_posix(): p.read_bytes() for p in into.rglob("*") if p.is_file()} == before
    synced: list[str] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(os.readlink(f"/proc/self/fd/{fd}")) or real_fsync(fd))
    report = merge([other], into, force=True)
    assert report.replaced == ["V-1"]
    shards = {str((into / f).resolve()) for f in listed_shards(into, "V-1")}
    assert shards and shards <= {str(Path(p).resolve()) for p in synced} | {
        str(Path(p.replace(".V-1.merging", "V-1")).resolve()) for p in synced}
    assert not failed(verify(into))


def test_foreign_files_names_only_what_cogen_did_not_write(tiny_cogitao, tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(tiny_cogitao, folder)
    assert foreign_files(folder) == []
    (folder / "data" / "V-1" / "notes.txt").write_text("mine")
    (folder / "data" / "mine").mkdir()
    (folder / "data" / "mine" / "a.csv").write_text("mine")
    (folder / "manifests" / "notes.json").write_text("{}")
    assert foreign_files(folder) == ["manifests/notes.json", "data/V-1/notes.txt", "data/mine/a.csv"]
