"""Errors of the baselines, in cogen's hierarchy so that the CLI prints them without a traceback."""

from __future__ import annotations

from cogen.errors import CogenError

__all__ = ["BaselineError", "DeviceError", "RunFolderError"]


class BaselineError(CogenError, ValueError):
    """A baseline run cannot start: unknown model or size, a dataset the model cannot train on."""


class DeviceError(BaselineError):
    """The requested device does not exist on this machine (``--device cuda`` without a GPU)."""


class RunFolderError(BaselineError):
    """A run folder already holds a run with a different configuration, or is not a run folder."""
