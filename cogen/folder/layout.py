"""Where everything lives inside a dataset folder (a ``cogen build`` output, or a Hub repo).

::

    README.md                                      the dataset card (YAML header + body)
    data/<config>/<split>-00000-of-00002.parquet   the rows, in shards
    manifests/<config>.json                        how the config was made, and what it holds
    previews/<config>.png                          the card's preview image
    .cogen/                                        build state: the lock, finished shards of an unfinished build
    .cogen/scratch/                                files a running build's workers share (deleted when it ends)

A config appears in the card only once its manifest exists, and its manifest is written only
once every shard is complete.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

from cogen.errors import BuildError
from cogen.folder.names import check_name

__all__ = ["CARD_FILE", "CROISSANT_FILE", "DATA_DIR", "MANAGED_DIRS", "MANIFEST_DIR", "PREVIEW_DIR", "STATE_DIR", "config_dir",
           "inside", "journal_path", "lock_path", "manifest_path", "plan_path", "preview_path", "record_path",
           "relative", "scratch_path", "shard_relpath", "split_pattern"]

CARD_FILE = "README.md"
#: The Croissant metadata (with its responsible-AI fields) written beside the card.
CROISSANT_FILE = "croissant.json"
DATA_DIR = "data"
MANIFEST_DIR = "manifests"
PREVIEW_DIR = "previews"
#: Build state that is never published: the folder's lock and the journals of unfinished configs.
STATE_DIR = ".cogen"
#: Folders cogen owns entirely: a push deletes the remote files under them that the folder no longer has
#: (anything else in the repo is left alone).
MANAGED_DIRS = (f"{DATA_DIR}/", f"{MANIFEST_DIR}/", f"{PREVIEW_DIR}/")


def relative(relpath: str) -> str:
    """``relpath`` if it names a place inside a folder (relative, no ``..`` above its start), else a
    one-line :class:`~cogen.errors.BuildError`. Paths are compared as written, without following links."""
    normal = posixpath.normpath(str(relpath).replace(os.sep, "/"))
    if posixpath.isabs(normal) or normal in (".", "..") or normal.startswith("../"):
        raise BuildError(f"refusing to write {str(relpath)[:120]!r}: it is not a path inside the dataset folder")
    return normal


def inside(folder: str | Path, relpath: str) -> Path:
    """``folder / relpath``, checked to lie inside ``folder`` (:func:`relative`)."""
    return Path(folder) / relative(relpath)


def shard_relpath(config: str, split: str, index: int, count: int) -> str:
    """Path of shard ``index`` of ``count`` of a split, relative to the folder."""
    return f"{DATA_DIR}/{check_name(config)}/{check_name(split, 'split')}-{index:05d}-of-{count:05d}.parquet"


def split_pattern(config: str, split: str) -> str:
    """The glob of a split's shards, as the card's ``data_files`` lists it."""
    return f"{DATA_DIR}/{check_name(config)}/{split}-*.parquet"


def config_dir(folder: str | Path, config: str) -> Path:
    """The folder holding a config's shards."""
    return inside(folder, f"{DATA_DIR}/{check_name(config)}")


def manifest_path(folder: str | Path, config: str) -> Path:
    """Where the manifest of ``config`` lives."""
    return inside(folder, f"{MANIFEST_DIR}/{check_name(config)}.json")


def preview_path(folder: str | Path, config: str) -> Path:
    """Where the card's preview image of ``config`` lives."""
    return inside(folder, f"{PREVIEW_DIR}/{check_name(config)}.png")


def lock_path(folder: str | Path) -> Path:
    """The lock file a build holds while it writes into ``folder``."""
    return Path(folder) / STATE_DIR / "lock"


def scratch_path(folder: str | Path) -> Path:
    """The folder of files that a running build's workers share (such as a family's cache of generated episodes)."""
    return Path(folder) / STATE_DIR / "scratch"


def journal_path(folder: str | Path, config: str) -> Path:
    """The journal of ``config``'s shards finished so far (while its manifest is not written yet)."""
    return inside(folder, f"{STATE_DIR}/{check_name(config)}.journal.jsonl")


def plan_path(folder: str | Path, config: str) -> Path:
    """What an unfinished build planned for ``config`` (its manifest without the shard records), so a
    build stopped after its last shard writes the manifest without sampling again."""
    return inside(folder, f"{STATE_DIR}/{check_name(config)}.plan.json")


def record_path(folder: str | Path) -> Path:
    """The record of what the configs an unfinished build is writing are built from
    (:mod:`cogen.folder.inputs`); a finished config's manifest holds its own."""
    return Path(folder) / STATE_DIR / "inputs.json"
