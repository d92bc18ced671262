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

from pathlib import Path

__all__ = ["CARD_FILE", "DATA_DIR", "MANAGED_DIRS", "MANIFEST_DIR", "PREVIEW_DIR", "STATE_DIR", "config_dir",
           "journal_path", "lock_path", "manifest_path", "preview_path", "scratch_path", "shard_relpath",
           "split_pattern"]

CARD_FILE = "README.md"
DATA_DIR = "data"
MANIFEST_DIR = "manifests"
PREVIEW_DIR = "previews"
#: Build state that is never published: the folder's lock and the journals of unfinished configs.
STATE_DIR = ".cogen"
#: Folders cogen owns entirely: a push deletes the remote files under them that the folder no longer has
#: (anything else in the repo is left alone).
MANAGED_DIRS = (f"{DATA_DIR}/", f"{MANIFEST_DIR}/", f"{PREVIEW_DIR}/")


def shard_relpath(config: str, split: str, index: int, count: int) -> str:
    """Path of shard ``index`` of ``count`` of a split, relative to the folder."""
    return f"{DATA_DIR}/{config}/{split}-{index:05d}-of-{count:05d}.parquet"


def split_pattern(config: str, split: str) -> str:
    """The glob of a split's shards, as the card's ``data_files`` lists it."""
    return f"{DATA_DIR}/{config}/{split}-*.parquet"


def config_dir(folder: str | Path, config: str) -> Path:
    """The folder holding a config's shards."""
    return Path(folder) / DATA_DIR / config


def manifest_path(folder: str | Path, config: str) -> Path:
    """Where the manifest of ``config`` lives."""
    return Path(folder) / MANIFEST_DIR / f"{config}.json"


def preview_path(folder: str | Path, config: str) -> Path:
    """Where the card's preview image of ``config`` lives."""
    return Path(folder) / PREVIEW_DIR / f"{config}.png"


def lock_path(folder: str | Path) -> Path:
    """The lock file a build holds while it writes into ``folder``."""
    return Path(folder) / STATE_DIR / "lock"


def scratch_path(folder: str | Path) -> Path:
    """The folder of files that a running build's workers share (such as a family's cache of generated episodes)."""
    return Path(folder) / STATE_DIR / "scratch"


def journal_path(folder: str | Path, config: str) -> Path:
    """The journal of ``config``'s shards finished so far (while its manifest is not written yet)."""
    return Path(folder) / STATE_DIR / f"{config}.journal.jsonl"
