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


def packaged_specs() -> dict[str, Path]:
    """Spec files shipped with cogen, by name: the path under ``split_specs/`` without ``.yaml``
    (``"c1"`` -> ``.../split_specs/c1.yaml``, ``"as_run/c1"`` -> ``.../split_specs/as_run/c1.yaml``)."""
    root = specs_dir()
    paths = sorted(root.rglob("*.yaml"), key=lambda path: (len(path.relative_to(root).parts), str(path)))
    return {path.relative_to(root).with_suffix("").as_posix(): path for path in paths}


def objects_dir() -> Path:
    """Folder holding the built object bank."""
    return resource_path("objects")
