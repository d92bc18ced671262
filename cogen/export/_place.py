"""Where an export goes: a whole folder that appears at once, or not at all.

An export is written into a hidden temporary folder beside ``--out`` and renamed into place when
it is complete (:func:`cogen.folder.atomic_write`), so a failed or interrupted export (Ctrl-C)
leaves ``--out`` exactly as it was, and a finished one holds exactly the files its ``index.json``
lists: no stale task files of an earlier export beside the new ones. The files inside the
temporary folder are written directly: the folder's rename is what makes them appear.

A folder that holds anything is replaced only with ``force`` (``--force``), and no folder is replaced
that is the current folder (or one above it), the home folder, a dataset folder (or inside one), or
the data read (or above or inside it).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from cogen.errors import DataError

__all__ = ["check_target", "write_in_place"]

T = TypeVar("T")


def _protected(folder: Path) -> str | None:
    """Why ``folder`` (resolved) must never be replaced, or ``None``."""
    from cogen.folder import is_dataset_folder

    here = Path.cwd().resolve()
    if folder in (here, *here.parents):
        return "it is the current folder or one above it"
    if folder == Path.home().resolve():
        return "it is your home folder"
    if any(is_dataset_folder(path) for path in (folder, *folder.parents)):
        return "it is a dataset folder (`cogen build` output) or inside one"
    return None


def check_target(folder: Path, data, force: bool) -> None:
    """Refuse, before any work, an ``--out`` that cannot take the export (see the module docstring)."""
    if folder.exists() and not folder.is_dir():
        raise DataError(f"{folder} is a file; --out must be a folder to write the export into")
    resolved = folder.resolve()
    source = Path(data).expanduser()
    if source.exists() and _related(resolved, source.resolve()):
        raise DataError(f"--out {folder} holds the data being exported, or is inside it; choose a folder of its own")
    if not folder.is_dir():
        return
    if any(folder.iterdir()) and not force:
        raise DataError(f"--out {folder} is not empty; pass --force to replace everything in it with the export, "
                        "or choose a new folder")
    reason = _protected(resolved)  # an existing folder is replaced by the export, even an empty one
    if reason:
        raise DataError(f"an export will not replace {folder}: {reason}; give the export a folder of its own, "
                        "e.g. --out arc-export")


def _related(one: Path, other: Path) -> bool:
    """True when the two paths are the same or one holds the other."""
    return one == other or one in other.parents or other in one.parents


def write_in_place(folder: Path, write: Callable[[Path], T]) -> T:
    """``write(temporary)`` fills a temporary folder, which then takes the place of ``folder`` (an
    existing ``folder`` is moved aside and deleted only once the new one is in place)."""
    from cogen.folder import atomic_write

    folder = Path(os.path.abspath(folder))
    old = folder.with_name(f".{folder.name}.{os.getpid()}.old")
    moved = False

    def fill(temporary: Path) -> T:
        nonlocal moved
        result = write(temporary)
        if folder.exists():
            os.replace(folder, old)
            moved = True
        return result

    try:
        result = atomic_write(folder, fill)
    except BaseException:
        if moved and not folder.exists():
            os.replace(old, folder)  # interrupted between the two renames: put the old export back
        raise
    if moved:
        shutil.rmtree(old, ignore_errors=True)
    return result
