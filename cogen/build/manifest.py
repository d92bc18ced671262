"""Per-config manifests: how a config was made and what it holds (``manifests/<config>.json``).

A manifest is written last, atomically, once every shard of its config is complete; the
dataset card is generated from the manifests, so a config appears in the card only when whole.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["MANIFEST_DIR", "environment_versions", "manifest_path", "read_manifests", "write_json_atomic"]

MANIFEST_DIR = "manifests"


def manifest_path(out_dir: Path, config: str) -> Path:
    """Where the manifest of ``config`` lives."""
    return Path(out_dir) / MANIFEST_DIR / f"{config}.json"


def write_json_atomic(path: Path, payload: dict) -> None:
    """Write JSON through a temporary file and a rename, so readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(payload, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    os.replace(temporary, path)


def read_manifests(out_dir: Path) -> dict[str, dict]:
    """Every manifest of a build folder, by config name (sorted by name)."""
    folder = Path(out_dir) / MANIFEST_DIR
    manifests = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            from cogen.errors import BuildError

            raise BuildError(f"{path}: unreadable manifest ({error}); delete it and rebuild that config") from None
        manifests[manifest["config"]] = manifest
    return dict(sorted(manifests.items(), key=lambda item: natural_key(item[0])))


def natural_key(name: str) -> tuple:
    """Sort key that puts ``C1-2`` before ``C1-10``."""
    import re

    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


def environment_versions() -> dict[str, str]:
    """Versions of cogen and of the libraries that decide the bytes (recorded in every manifest)."""
    import numba
    import numpy
    import pyarrow

    from cogen import __version__

    return {"cogen": __version__, "numpy": numpy.__version__, "numba": numba.__version__, "pyarrow": pyarrow.__version__}
