"""One hierarchy for every error cogen raises on purpose.

Messages name the file, the field and the fix; the CLI prints them without a traceback.
"""

from __future__ import annotations

import difflib
import errno
from collections.abc import Iterable

__all__ = [
    "BankError",
    "BuildError",
    "BuildInterrupted",
    "CogenError",
    "DataError",
    "EvalError",
    "GenerationError",
    "PlacementError",
    "PublishError",
    "SpecError",
    "TransformError",
    "UnknownNameError",
    "close_matches",
    "os_error_text",
]


class CogenError(Exception):
    """Base class of every error cogen raises on purpose."""


class SpecError(CogenError, ValueError):
    """An experiment spec (YAML file or Python object) is invalid.

    ``where`` locates the problem ("split_specs/c1.yaml, line 12, field experiments.C1-1.grid").
    """

    def __init__(self, message: str, where: str | None = None, fix: str | None = None):
        self.where, self.fix = where, fix
        text = f"{where}: {message}" if where else message
        if fix:
            text = f"{text}\n  fix: {fix}"
        super().__init__(text)


class UnknownNameError(SpecError, KeyError):
    """A transformation, property or config name that does not exist; lists close matches."""

    def __init__(self, kind: str, name: str, known: Iterable[str], where: str | None = None):
        self.kind, self.name = kind, name
        self.suggestions = close_matches(name, known)
        hint = f"did you mean {', '.join(map(repr, self.suggestions))}?" if self.suggestions else None
        super().__init__(f"unknown {kind} {name!r}", where=where, fix=hint)

    def __str__(self) -> str:  # KeyError would otherwise quote the whole message
        return self.args[0]


class BankError(CogenError):
    """The object bank is missing, corrupt or asked for something it does not hold."""


class TransformError(CogenError):
    """A transformation was called with arguments it cannot take."""


class PlacementError(CogenError):
    """Objects cannot be placed on the requested grid."""


class GenerationError(CogenError):
    """Rejection sampling cannot reach the requested sample count (reports counts by cause)."""


class BuildError(CogenError):
    """A dataset build cannot proceed (output folder, shards, manifests)."""


class BuildInterrupted(BuildError):
    """A build was stopped (Ctrl-C, SIGTERM, SIGHUP); the message says what finished and how to resume."""


class PublishError(CogenError):
    """Publishing to a Hugging Face Hub failed; nothing was half-published."""


class DataError(CogenError, ValueError):
    """A dataset split cannot be loaded or turned into arrays (missing column, grid larger than the padding)."""


class EvalError(CogenError):
    """A predictions file or dataset cannot be scored."""


def close_matches(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` names from ``known`` that look like ``name`` (for 'did you mean' hints)."""
    return difflib.get_close_matches(str(name), [str(k) for k in known], n=n, cutoff=0.5)


#: What to do about the operating-system errors a user can fix, by errno.
_OS_FIXES = {
    errno.ENOSPC: "the disk is full; free some space and run the command again",
    errno.EDQUOT: "the disk quota is exceeded; free some space and run the command again",
    errno.EROFS: "the file system is read-only; choose a writable location",
    errno.EACCES: "permission denied; choose a location you may write to, or change its permissions",
    errno.EPERM: "operation not permitted; choose a location you may write to, or change its permissions",
    errno.EISDIR: "it is a folder; give a file name",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.ENOENT: "no such file or folder",
    errno.EEXIST: "it already exists",
}


def os_error_text(error: OSError) -> str:
    """What went wrong with a file operation and how to fix it, in one phrase (no path).

    >>> os_error_text(OSError(errno.ENOSPC, "No space left on device"))
    'the disk is full; free some space and run the command again (No space left on device)'
    """
    reason = error.strerror or str(error) or type(error).__name__
    fix = _OS_FIXES.get(error.errno)
    return f"{fix} ({reason})" if fix else reason
