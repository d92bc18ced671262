"""The one check every publishing command starts with: is this a finished build folder?"""

from __future__ import annotations

from pathlib import Path

from cogen.build.manifest import read_manifests
from cogen.errors import BuildError, CogenError

__all__ = ["folder_manifests"]


def folder_manifests(folder: str | Path, error: type[CogenError] = BuildError) -> dict[str, dict]:
    """The manifests of build folder ``folder``; raises ``error`` when it is not one (or holds no finished config)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise error(f"{folder} is not a folder; pass the --out folder of `cogen build` or `cogen merge`")
    manifests = read_manifests(folder)
    if not manifests:
        raise error(f"{folder} holds no manifests/*.json: it is not a cogen build folder "
                    "(or none of its configs finished building)")
    return manifests
