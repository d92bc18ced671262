"""Write a file (or a folder) whole or not at all: under a hidden temporary name, then one rename.

Every file cogen leaves in a dataset folder goes through :func:`atomic_write`, so a reader (or a
resumed build) never sees half a file under its final name, and a failed write leaves no
temporary behind. The bytes reach the disk (``fsync``) before the rename and the rename after it,
so a power cut leaves the old file or the new one, never an empty file under the final name.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from cogen.errors import BuildError, os_error_text

__all__ = ["atomic_write", "sync_to_disk", "temporary_name"]

T = TypeVar("T")


def temporary_name(path: Path) -> Path:
    """The hidden name ``path`` is written under before its rename (unique to this process)."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def atomic_write(path: str | Path, write: Callable[[Path], T]) -> T:
    """Make ``path`` by ``write(temporary)`` then a rename; returns what ``write`` returned.

    ``write`` may make a file or a folder at the temporary path. On any :class:`OSError` the
    temporary is removed and a :class:`~cogen.errors.BuildError` names ``path`` and the cause.
    """
    path = Path(path)
    temporary = temporary_name(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        result = write(temporary)
        _sync(temporary)
        os.replace(temporary, path)
        _sync_folder(path.parent)
    except OSError as error:
        raise BuildError(f"cannot write {path}: {os_error_text(error)}") from None
    finally:
        _remove(temporary)
    return result


def sync_to_disk(path: str | Path) -> None:
    """Flush a file, or every file of a folder and the folder, to the disk (before a rename makes it
    visible), then the folder that holds it; raises :class:`OSError` as the system does."""
    path = Path(path)
    _sync(path)
    _sync_folder(path.parent)


def _sync(path: Path) -> None:
    """Flush a written file (or every file of a written folder, and the folder) to the disk."""
    if path.is_dir() and not path.is_symlink():
        for child in sorted(path.rglob("*")):
            if child.is_file():
                _sync_one(child)
    _sync_one(path)


def _sync_folder(folder: Path) -> None:
    """Flush a folder's entries (a rename in it) to the disk, where the system allows it."""
    try:
        _sync_one(folder)
    except OSError:  # some file systems cannot sync a folder; the rename itself is atomic
        pass


def _sync_one(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove(temporary: Path) -> None:
    try:
        if temporary.is_dir() and not temporary.is_symlink():
            shutil.rmtree(temporary, ignore_errors=True)
        else:
            temporary.unlink(missing_ok=True)
    except OSError:
        pass
