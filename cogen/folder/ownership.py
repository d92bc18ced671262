"""What in a dataset folder is cogen's: the places it writes in, the names it writes, the files it may delete.

cogen writes and deletes only its own files, and only inside the folder:

* **Places.** ``data/``, ``data/<config>/``, ``manifests/``, ``previews/`` and ``.cogen/`` (and what
  ``.cogen/`` holds) must be real folders, not symbolic links: a link would carry cogen's writes and
  deletions to wherever it points. :func:`check_places` refuses such a folder, naming the link,
  before anything is written (every writer calls it: :class:`~cogen.folder.FolderLock` and the card).
* **Names.** A shard is ``data/<config>/<split>-NNNNN-of-NNNNN.parquet`` (:func:`shard_path_problem`
  checks every path a manifest lists before anything reads it); a temporary is ``.<name>.<pid>.tmp``
  where ``<name>`` is one of cogen's own names (:func:`is_temporary`).
* **Deletion.** A file is deleted only when its name is cogen's and a manifest, a saved plan or a
  journal of the folder lists it (:func:`listed_shards`), or it is one of cogen's temporaries.
  Anything else is the user's: :func:`foreign_files` finds it, and a build refuses to go on rather
  than delete it (``--force`` included).
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

from cogen.errors import BuildError
from cogen.folder.layout import (
                                 CARD_FILE,
                                 DATA_DIR,
                                 MANIFEST_DIR,
                                 PREVIEW_DIR,
                                 STATE_DIR,
                                 journal_path,
                                 plan_path,
                                 record_path,
                                 scratch_path,
                                 split_pattern,
)
from cogen.folder.names import name_problem

__all__ = ["SHARD_NAME", "check_places", "foreign_files", "is_state_name", "is_temporary", "listed_shards",
           "manifest_path_problems",
           "shard_path_problem"]

#: A shard's file name: ``<split>-<index>-of-<count>.parquet`` (five digits or more each).
SHARD_NAME = re.compile(r"(?P<split>[A-Za-z0-9][A-Za-z0-9._-]*)-(?P<index>\d{5,})-of-(?P<count>\d{5,})\.parquet")
_TEMPORARY = re.compile(r"\.(?P<name>.+)\.\d+\.tmp")
#: Names cogen gives files (a temporary is one of them, hidden, with a pid and ``.tmp``).
_OWN_NAMES = (SHARD_NAME, re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\.(json|png|journal\.jsonl|plan\.json)"),
              re.compile(r"\d+-\d+\.npz"), re.compile(re.escape(CARD_FILE)))
#: Entries of ``.cogen/`` (beside journals and plans): the record of inputs, saved key passes, scratch.
_RECORD, _KEYS, _SCRATCH = record_path(".").name, "keys", scratch_path(".").name
#: Hidden folders a merge stages a config in (``data/.<config>.merging``, ``data/.<config>.replaced``).
_MERGE_STAGING = re.compile(r"\.(?P<config>[A-Za-z0-9][A-Za-z0-9._-]*)\.(merging|replaced)")


def check_places(folder: str | Path) -> None:
    """Refuse (:class:`BuildError`) a dataset folder where a place cogen writes in is a symbolic link.

    The places are ``data/`` and every folder in it, ``manifests/``, ``previews/``, ``.cogen/`` and
    every entry of ``.cogen/``. Paths are looked at without following links (``lstat``).
    """
    folder = Path(folder)
    places = [folder / name for name in (DATA_DIR, MANIFEST_DIR, PREVIEW_DIR, STATE_DIR)]
    for inner in (folder / DATA_DIR, folder / STATE_DIR):
        if inner.is_dir() and not inner.is_symlink():
            places += sorted(inner.iterdir())
    for place in places:
        if place.is_symlink():
            where = place.relative_to(folder).as_posix()
            raise BuildError(f"{place} is a symbolic link (to {os.readlink(place)}); cogen writes and deletes files in "
                             f"{where} and never follows a link out of the folder: replace the link by a real folder, "
                             "or choose another folder")


def shard_path_problem(config: str, split: str, relpath: object) -> str | None:
    """Why ``relpath`` cannot be a shard of ``split`` of ``config`` as a manifest lists it (None when it can):
    it must be ``data/<config>/<split>-NNNNN-of-NNNNN.parquet``, nothing else (no ``..``, no other folder)."""
    if not isinstance(relpath, str):
        return f"a shard path must be text, got {type(relpath).__name__}"
    folder, _, name = relpath.rpartition("/")
    match = SHARD_NAME.fullmatch(name)
    if folder != f"{DATA_DIR}/{config}" or match is None or match["split"] != split:
        return (f"{relpath[:120]!r} is not a shard path of split {split} (cogen names them "
                f"{DATA_DIR}/{config}/{split}-NNNNN-of-NNNNN.parquet)")
    if int(match["index"]) >= int(match["count"]):
        return f"{relpath[:120]!r} numbers a shard past its count"
    return None


def manifest_path_problems(manifest: dict) -> list[str]:
    """What is wrong with the paths a manifest lists: every split name a name, every file a shard path
    of its split (in ``files`` and in the shard records), and no split's ``data_files`` pattern of the
    card matching a file of another split (``load_dataset`` would read it twice)."""
    config, problems = manifest["config"], []
    listed: dict[str, list] = {}
    for split, info in manifest["splits"].items():
        problem = name_problem(split)
        if problem is not None:
            problems.append(f"split name {str(split)[:80]!r} cannot be used ({problem})")
            continue
        if not isinstance(info, dict) or not isinstance(info.get("files", []), list) or \
                not isinstance(info.get("shards", {}), dict):
            problems.append(f"split {split} has no list of files")
            continue
        listed[split] = [*info.get("files", []), *info.get("shards", {})]
        problems += [p for path in listed[split] if (p := shard_path_problem(config, split, path))]
    if not problems:
        for split in listed:
            pattern = split_pattern(config, split)
            problems += [f"{path} of split {other} also matches {pattern}, the card's files of split {split}"
                         for other, paths in listed.items() if other != split
                         for path in paths if fnmatch.fnmatchcase(path, pattern)]
    return problems


def is_temporary(name: str) -> bool:
    """True when ``name`` is a temporary cogen writes (``.<one of cogen's names>.<pid>.tmp``)."""
    match = _TEMPORARY.fullmatch(name)
    return match is not None and any(pattern.fullmatch(match["name"]) for pattern in _OWN_NAMES)


def is_state_name(name: str) -> bool:
    """True for a name cogen gives an entry of ``.cogen/`` other than the lock: the record of inputs,
    a journal, a saved plan, the saved key passes, the workers' scratch folder, a temporary."""
    return name in (_RECORD, _KEYS, _SCRATCH) or is_temporary(name) or \
        re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*\.(journal\.jsonl|plan\.json)", name) is not None


def listed_shards(folder: str | Path, config: str) -> set[str]:
    """Shard paths of ``config`` that the folder's manifest, saved plan or journal lists (any inputs):
    the files of ``data/<config>/`` that cogen wrote. Unreadable records list nothing."""
    folder = Path(folder)
    listed: set[str] = set()
    manifest = _json(folder / MANIFEST_DIR / f"{config}.json")
    if isinstance(manifest, dict) and isinstance(manifest.get("splits"), dict):
        for info in manifest["splits"].values():
            if isinstance(info, dict):
                listed.update(f for f in [*info.get("files", []), *info.get("shards", {})] if isinstance(f, str))
    plan = _json(plan_path(folder, config))
    if isinstance(plan, dict) and isinstance(plan.get("files"), dict):
        listed.update(f for files in plan["files"].values() if isinstance(files, list) for f in files
                      if isinstance(f, str))
    try:
        lines = journal_path(folder, config).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("file"), str):
            listed.add(entry["file"])
    return {path for path in listed if path.startswith(f"{DATA_DIR}/{config}/") and
            SHARD_NAME.fullmatch(path.rpartition("/")[2])}


def foreign_files(folder: str | Path, configs: Iterable[str] = ()) -> list[str]:
    """Files under ``data/``, ``manifests/`` and ``previews/`` that cogen did not write, relative to the folder.

    cogen's are: shards that a manifest, plan or journal of the folder lists (:func:`listed_shards`;
    ``configs`` adds configs to look for beyond those of ``manifests/*.json``), readable cogen
    manifests, the previews of those configs, a merge's staging folders and cogen's temporaries.
    """
    folder = Path(folder)
    foreign: list[str] = []
    manifests = folder / MANIFEST_DIR
    names = set(configs)
    for path in sorted(manifests.iterdir()) if manifests.is_dir() else ():
        manifest = _json(path) if path.suffix == ".json" and path.is_file() else None
        if isinstance(manifest, dict) and manifest.get("config") == path.stem and name_problem(path.stem) is None:
            names.add(path.stem)
        elif not is_temporary(path.name):
            foreign.append(path.relative_to(folder).as_posix())
    data = folder / DATA_DIR
    for entry in sorted(data.iterdir()) if data.is_dir() else ():
        staging = _MERGE_STAGING.fullmatch(entry.name)
        if entry.is_dir() and (entry.name in names or _has_state(folder, entry.name)):
            listed = listed_shards(folder, entry.name)
            foreign += [p.relative_to(folder).as_posix() for p in _files(entry)
                        if p.relative_to(folder).as_posix() not in listed and not is_temporary(p.name)]
        elif not (staging and entry.is_dir() and staging["config"] in names) and not is_temporary(entry.name):
            foreign += [p.relative_to(folder).as_posix() for p in _files(entry)]
    previews = folder / PREVIEW_DIR
    for path in sorted(previews.iterdir()) if previews.is_dir() else ():
        if not (path.is_file() and path.suffix == ".png" and path.stem in names) and not is_temporary(path.name):
            foreign += [p.relative_to(folder).as_posix() for p in _files(path)]
    return foreign


def _has_state(folder: Path, config: str) -> bool:
    """A journal or a saved plan of ``config`` is in the folder's build state (an unfinished build of it)."""
    return name_problem(config) is None and (journal_path(folder, config).is_file() or
                                             plan_path(folder, config).is_file())


def _files(path: Path) -> list[Path]:
    """``path`` if it is a file (or anything but a folder), else every file under it (links not followed)."""
    if path.is_symlink() or not path.is_dir():
        return [path]
    found = []
    for root, folders, files in os.walk(path):
        found += [Path(root) / name for name in sorted(files)]
        found += [Path(root) / name for name in sorted(folders) if (Path(root) / name).is_symlink()]
    return sorted(found)


def _json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
