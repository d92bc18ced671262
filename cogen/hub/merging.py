"""Merge several build folders into one Hub-ready folder (``cogen merge SRC... --into DST``).

A config is the unit of merging: its ``data/<config>/`` folder and ``manifests/<config>.json``
are copied from the source that holds it; configs already in the destination and absent from
the sources are kept. Conflicts are refused before anything is touched: the same config in two
sources with different contents, a source that is not a complete build folder, a source whose
files do not match its manifest or whose card does not match its manifests (a card that does
not list a manifest's SHA-256, or whose YAML header loads other files: an edit that
``cogen verify`` flags is never re-signed by a merge), a config of the destination built with
other inputs (unless ``force``: a folder holds what its owner chose), a file in the destination's
``data/<config>/`` that cogen did not write.

The destination never looks complete while it is being changed: its README goes first, each
config's manifest is removed before its files change and written back after them, and the
README (with the previews) is rewritten last from every manifest present. Copied shards reach the
disk (``fsync``) before the renames that put them in place.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from cogen.errors import BuildError, os_error_text
from cogen.folder import (
                          CARD_FILE,
                          DATA_DIR,
                          FolderLock,
                          append_journal,
                          clear_journal,
                          config_dir,
                          folder_manifests,
                          manifest_path,
                          read_manifests,
                          record_problem,
                          shard_records,
                          write_json_atomic,
)
from cogen.folder.atomic import sync_to_disk
from cogen.folder.ownership import is_temporary, listed_shards

__all__ = ["MergeReport", "merge"]

#: The key of journal lines a merge writes (no build reads them as its own).
_MERGE_KEY = "merge"


@dataclass
class MergeReport:
    """What a merge did: configs added, replaced and already up to date, and where each came from."""

    folder: Path
    added: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    sources: dict[str, Path] = field(default_factory=dict)
    seconds: float = 0.0


def _same_content(a: dict, b: dict) -> bool:
    """Two manifests describe the same bytes: same fingerprint, same files, same sizes."""
    def files(m: dict) -> dict:
        return {s: (v["files"], v["rows"], v["download_bytes"]) for s, v in m["splits"].items()}

    return a.get("fingerprint") == b.get("fingerprint") and files(a) == files(b)


def _file_problem(folder: Path, manifest: dict) -> str | None:
    """Why the files of a config do not match its manifest: their SHA-256 when the manifest records
    them, else (an older manifest) existence and sizes."""
    records = shard_records(manifest)
    for file, record in records.items():
        problem = record_problem(folder, file, record)
        if problem:
            return f"config {manifest['config']}: {problem}"
    for split, info in manifest["splits"].items():
        missing = [f for f in info["files"] if not (folder / f).is_file()]
        if missing:
            return f"config {manifest['config']} lacks {missing[0]}"
        size = sum((folder / f).stat().st_size for f in info["files"])
        if size != info["download_bytes"]:
            return (f"the {split} files of config {manifest['config']} hold {size} bytes, its manifest says "
                    f"{info['download_bytes']}")
    return None


def _plan(sources: list[Path]) -> dict[str, tuple[Path, dict]]:
    """config -> (source folder, manifest); refuses a config that two sources hold differently."""
    from cogen.pipeline.verify import card_problems

    chosen: dict[str, tuple[Path, dict]] = {}
    for source in dict.fromkeys(s.resolve() for s in sources):
        manifests = folder_manifests(source)
        for name, manifest in manifests.items():
            if name in chosen and not _same_content(chosen[name][1], manifest):
                other, first = chosen[name]
                raise BuildError(
                    f"config {name} is in {other} (fingerprint {str(first.get('fingerprint'))[:12]}) and in {source} "
                    f"(fingerprint {str(manifest.get('fingerprint'))[:12]}) with different contents; merge only one "
                    "of them, or rebuild them with the same spec, seed and --scale")
            chosen.setdefault(name, (source, manifest))
            problem = _file_problem(source, manifest)
            if problem:
                raise BuildError(f"{source}: {problem}; rebuild it before merging")
        problems = card_problems(source, manifests)
        if problems:
            raise BuildError(f"{source}: its card does not match its manifests ({problems[0]}); merge takes only whole, "
                             f"signed build folders: check it with `cogen verify {source}`")
    return chosen


def _copy(source: Path, target: Path, link: bool) -> None:
    if link:
        try:
            os.link(source, target)
            return
        except OSError:  # another file system: fall back to copying
            pass
    shutil.copyfile(source, target)


def _install_config(source: Path, folder: Path, manifest: dict, link: bool) -> None:
    """Copy one config's files into ``folder`` via a staging folder swapped in by renames."""
    name = manifest["config"]
    data = folder / DATA_DIR
    staging, old = data / f".{name}.merging", data / f".{name}.replaced"
    for leftover in (staging, old):
        shutil.rmtree(leftover, ignore_errors=True)
    staging.mkdir(parents=True)
    for info in manifest["splits"].values():
        for file in info["files"]:
            _copy(source / file, staging / Path(file).name, link)
    sync_to_disk(staging)  # the copies reach the disk before the rename shows them
    target = data / name
    if target.exists():
        target.rename(old)
    staging.rename(target)
    sync_to_disk(target)
    shutil.rmtree(old, ignore_errors=True)


def _check_replacements(plan: dict[str, tuple[Path, dict]], folder: Path, existing: dict[str, dict],
                        force: bool) -> None:
    """Refuse, before anything changes, to replace a config of ``folder`` built with other inputs
    (another spec, seed, scale, generator or object bank: another fingerprint; unless ``force``) or one
    whose ``data/<config>/`` holds files cogen did not write (that no manifest or journal lists)."""
    for name, (source, manifest) in plan.items():
        unknown = sorted(p.relative_to(folder).as_posix() for p in _entries(config_dir(folder, name))
                         if p.relative_to(folder).as_posix() not in listed_shards(folder, name) and
                         not is_temporary(p.name))
        if unknown:
            raise BuildError(f"{folder}/{unknown[0]} is not a file cogen wrote (no manifest of {folder} lists it), and "
                             f"merging {name} would replace its folder: move it out of {DATA_DIR}/{name}/. Nothing "
                             "was changed")
        if name in existing and existing[name].get("fingerprint") != manifest.get("fingerprint") and not force:
            raise BuildError(f"config {name} of {folder} holds other data ({_described(existing[name])}) than the one of "
                             f"{source} ({_described(manifest)}); pass --force to replace it, or merge into another "
                             "folder. Nothing was changed")


def _journal_files(folder: Path, name: str, manifests: list[dict | None]) -> None:
    """Journal the shards of ``name`` before its manifest goes (the old ones and those copied in), so a
    merge stopped half way can be run again: what is in ``data/<name>/`` is then still listed as cogen's."""
    for manifest in manifests:
        if manifest is not None:
            records = shard_records(manifest)
            for info in manifest["splits"].values():
                for file in info["files"]:
                    append_journal(folder, name, _MERGE_KEY, file, records.get(file, {}))


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.iterdir()) if folder.is_dir() and not folder.is_symlink() else []


def _described(manifest: dict) -> str:
    inputs = manifest.get("inputs", {}) if isinstance(manifest.get("inputs"), dict) else {}
    return (f"fingerprint {str(manifest.get('fingerprint'))[:12]}, seed {manifest.get('seed', '?')}, "
            f"scale {inputs.get('scale', '?')}")


def merge(sources: list[str | Path], folder: str | Path, *, link: bool = False, force: bool = False) -> MergeReport:
    """Merge the configs of the build folders ``sources`` into the folder ``folder``.

    Configs of ``folder`` that no source holds are kept; a config that a source holds replaces the
    one in ``folder`` when ``force`` is given or its contents are the same (then it is left alone,
    or repaired if its files changed); a config built otherwise is refused without ``force``. ``link`` hard-links
    shard files instead of copying them (shards are never modified in place, only replaced).
    Raises :class:`cogen.errors.BuildError` on conflicting or incomplete sources, on a README.md in
    ``folder`` that cogen did not write (unless ``force``), or while a build writes into ``folder``,
    before any change.
    """
    started = time.perf_counter()
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise BuildError(f"{folder} exists and is not a folder; choose another --into")
    if not sources:
        raise BuildError("nothing to merge: name at least one build folder")
    plan = _plan([Path(s) for s in sources])
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BuildError(f"cannot create {folder}: {os_error_text(error)}") from None
    with FolderLock(folder, "merge"):
        return _merge_locked(plan, folder, link, force, started)


def _merge_locked(plan: dict[str, tuple[Path, dict]], folder: Path, link: bool, force: bool,
                  started: float) -> MergeReport:
    from cogen.card import check_card_owner, write_card
    from cogen.card.card import existing_card

    check_card_owner(folder, force)
    # the user's card regions: the destination's first, then each source's (none is dropped)
    previous = (existing_card(folder), *dict.fromkeys(existing_card(source) for source, _ in plan.values()))
    existing = read_manifests(folder)
    _check_replacements(plan, folder, existing, force)
    report = MergeReport(folder, sources={name: source for name, (source, _) in plan.items()})
    (folder / CARD_FILE).unlink(missing_ok=True)  # the folder is incomplete until the card is rewritten
    for name, (source, manifest) in plan.items():
        if name in existing and _same_content(existing[name], manifest) and not _file_problem(folder, manifest):
            report.unchanged.append(name)
            continue
        (report.replaced if name in existing else report.added).append(name)
        try:
            _journal_files(folder, name, [existing.get(name), manifest])
            manifest_path(folder, name).unlink(missing_ok=True)
            _install_config(source, folder, manifest, link)
        except OSError as error:
            raise BuildError(f"cannot copy config {name} into {folder}: {os_error_text(error)}") from None
        write_json_atomic(manifest_path(folder, name), manifest)
        clear_journal(folder, name)
    write_card(folder, force=True, previous=previous)
    report.seconds = time.perf_counter() - started
    return report
