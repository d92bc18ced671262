"""One hierarchy for every error cogen raises on purpose.

Messages name the file, the field and the fix; the CLI prints them without a traceback.
"""

from __future__ import annotations

import difflib
import errno
import importlib
from collections.abc import Iterable
from types import ModuleType

__all__ = [
    "BankError",
    "BuildError",
    "BuildInterrupted",
    "CogenError",
    "DataError",
    "EvalError",
    "DISTRIBUTION",
    "GenerationError",
    "Interrupted",
    "MissingDependencyError",
    "PlacementError",
    "PublishError",
    "SpecError",
    "TransformError",
    "UnknownNameError",
    "close_matches",
    "install_hint",
    "optional_import",
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


class Interrupted(CogenError):
    """A command was stopped (Ctrl-C, SIGTERM, SIGHUP); the message says what was kept. Exit code 130."""


class BuildInterrupted(BuildError, Interrupted):
    """A build was stopped (Ctrl-C, SIGTERM, SIGHUP); the message says what finished and how to resume."""


class PublishError(CogenError):
    """Publishing to a Hugging Face Hub failed; nothing was half-published."""


class DataError(CogenError, ValueError):
    """A dataset split cannot be loaded or turned into arrays (missing column, grid larger than the padding)."""


class EvalError(CogenError):
    """A predictions file or dataset cannot be scored."""


class MissingDependencyError(CogenError, ImportError):
    """An optional dependency is not installed; the message names the extra that installs it."""


#: The name cogen is installed under (``pip install cogen-arc``); the import package and the command are ``cogen``.
#: (``cogen`` on PyPI is an unrelated 2009 package.)
DISTRIBUTION = "cogen-arc"

#: Optional top-level modules: (what it is, the extra of :data:`DISTRIBUTION` that installs it).
OPTIONAL_MODULES = {
    "torch": ("PyTorch", "baselines"),
    "PIL": ("Pillow", "rgb"),
    "dask": ("Dask", "dask"),
    "distributed": ("Dask distributed", "dask"),
    "s3fs": ("s3fs", "s3"),
}


def install_hint(extra: str | None = None) -> str:
    """The command that installs cogen with ``extra``: ``pip install 'cogen-arc[rgb]'``."""
    return f"pip install '{DISTRIBUTION}[{extra}]'" if extra else f"pip install {DISTRIBUTION}"


def optional_import(module: str, purpose: str) -> ModuleType:
    """Import the optional ``module`` (one of :data:`OPTIONAL_MODULES`, or a submodule of one), or raise a
    one-line :class:`MissingDependencyError` that says what needs it and which extra installs it.

    >>> optional_import("json", "a test").__name__
    'json'
    """
    try:
        return importlib.import_module(module)
    except ImportError as error:
        top = module.partition(".")[0]
        if top not in OPTIONAL_MODULES or (error.name and error.name.partition(".")[0] != top):
            raise  # not an optional dependency, or a broken install of one: the real error helps more
        title, extra = OPTIONAL_MODULES[top]
        raise MissingDependencyError(f"{purpose} needs {title}, which is not installed: {install_hint(extra)}"
                                     + (TORCH_CPU_NOTE if top == "torch" else "")) from None


#: How to get PyTorch without several GB of CUDA packages (PyPI's Linux wheel is the CUDA build).
TORCH_CPU_NOTE = " (CPU only: first pip install torch --index-url https://download.pytorch.org/whl/cpu)"


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
