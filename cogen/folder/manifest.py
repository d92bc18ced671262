"""Per-config manifests: how a config was made and what it holds (``manifests/<config>.json``).

A manifest is written last, atomically, once every shard of its config is complete; the
dataset card is generated from the manifests, so a config appears in the card only when whole.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from cogen.errors import BuildError
from cogen.folder.atomic import atomic_write
from cogen.folder.layout import MANIFEST_DIR
from cogen.folder.names import name_problem
from cogen.folder.ownership import manifest_path_problems

__all__ = ["environment_versions", "folder_manifests", "natural_key", "read_manifests", "write_json_atomic"]


def write_json_atomic(path: Path, payload: dict) -> None:
    """Write JSON through a temporary file and a rename, so readers never see half a file.

    Raises :class:`BuildError` naming the file when it cannot be written (disk full, permissions).
    """
    text = json.dumps(payload, indent=2, sort_keys=False) + "\n"
    atomic_write(path, lambda temporary: temporary.write_text(text, encoding="utf-8"))


def read_manifests(folder: str | Path) -> dict[str, dict]:
    """Every manifest of a dataset folder, by config name (sorted by name; empty if there is none).

    A manifest whose config name or listed paths break cogen's rules (a path outside
    ``data/<config>/``, a file that is not a shard of its split) is refused here, before any
    command reads a file it lists (:func:`cogen.folder.ownership.manifest_path_problems`)."""
    directory = Path(folder) / MANIFEST_DIR
    manifests = {}
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else ():
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise BuildError(f"{path}: unreadable manifest ({error}); delete it and rebuild that config") from None
        if not isinstance(manifest, dict) or not isinstance(manifest.get("config"), str) or \
                not isinstance(manifest.get("splits"), dict):
            raise BuildError(f"{path}: not a cogen manifest (no config name or splits); delete it and rebuild "
                             "that config")
        problem = name_problem(manifest["config"])
        if problem is not None:
            raise BuildError(f"{path}: its config name {manifest['config'][:80]!r} cannot be used ({problem}); "
                             "delete the manifest and rebuild that config")
        if manifest["config"] != path.stem:
            raise BuildError(f"{path}: it is the manifest of config {manifest['config']!r}, not of {path.stem!r} as its "
                             "name says; delete it and rebuild that config")
        problems = manifest_path_problems(manifest)  # before anything reads a file it lists
        if problems:
            raise BuildError(f"{path}: {problems[0]}; delete the manifest and rebuild that config")
        manifests[manifest["config"]] = manifest
    return dict(sorted(manifests.items(), key=lambda item: natural_key(item[0])))


def folder_manifests(folder: str | Path) -> dict[str, dict]:
    """The manifests of dataset folder ``folder``; :class:`BuildError` when it is not one (or holds no finished config)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise BuildError(f"{folder} is not a folder; pass the --out folder of `cogen build` or `cogen merge`")
    manifests = read_manifests(folder)
    if not manifests:
        raise BuildError(f"{folder} holds no {MANIFEST_DIR}/*.json: it is not a cogen build folder "
                    "(or none of its configs finished building)")
    return manifests


def natural_key(name: str) -> tuple:
    """Sort key that puts ``C1-2`` before ``C1-10``."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


def environment_versions() -> dict[str, str]:
    """Versions of cogen and of the libraries that decide the bytes (recorded in every manifest)."""
    from importlib.metadata import version

    import numba
    import numpy
    import pyarrow

    from cogen import __version__

    return {"cogen": __version__, "numpy": numpy.__version__, "numba": numba.__version__, "pyarrow": pyarrow.__version__,
            "polars": version("polars")}

