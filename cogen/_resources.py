"""Locate the data that ships with cogen: spec files, the object bank, the dataset-card template.

In a wheel they live in ``cogen/_data/``; in a source checkout (editable install) they are the
top-level ``split_specs/``, ``objects/`` and ``hub_card.md`` of the repository.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = _PACKAGE.parent


def resource_path(name: str) -> Path:
    """Path of a shipped resource (``"split_specs"``, ``"objects"`` or ``"hub_card.md"``)."""
    for candidate in (_PACKAGE / "_data" / name, _CHECKOUT / name):
        if candidate.exists():
            return candidate
    return _CHECKOUT / name


def specs_dir() -> Path:
    """Folder holding the packaged experiment specs."""
    return resource_path("split_specs")


def objects_dir() -> Path:
    """Folder holding the built object bank."""
    return resource_path("objects")
