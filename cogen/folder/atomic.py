"""Write a file (or a folder) whole or not at all: under a hidden temporary name, then one rename.

Every file cogen leaves in a dataset folder goes through :func:`atomic_write`, so a reader (or a
resumed build) never sees half a file under its final name, and a failed write leaves no
temporary behind.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from cogen.errors import BuildError, os_error_text

__all__ = ["atomic_write", "temporary_name"]

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
        os.replace(temporary, path)
    except OSError as error:
        raise BuildError(f"cannot write {path}: {os_error_text(error)}") from None
    finally:
        _remove(temporary)
    return result


def _remove(temporary: Path) -> None:
    try:
        if temporary.is_dir() and not temporary.is_symlink():
            shutil.rmtree(temporary, ignore_errors=True)
        else:
            temporary.unlink(missing_ok=True)
    except OSError:
        pass
