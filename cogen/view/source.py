"""Where ``cogen view`` reads a dataset from: a local ``cogen build`` folder, or a Hub dataset repo.

Both hold ``manifests/<config>.json`` and the Parquet shards each manifest lists. A local folder
is read in place; a Hub repo's manifests are downloaded when the viewer starts and each shard
only when a page needs it (``huggingface_hub.hf_hub_download``, cached). Every name read from a
manifest is checked to stay inside the folder before it is opened.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath

from cogen.errors import DataError
from cogen.folder import MANIFEST_DIR, STATE_DIR, natural_key

__all__ = ["FolderSource", "HubSource", "open_source", "safe_relpath"]


def safe_relpath(name: str) -> str | None:
    """``name`` as a clean relative POSIX path, or None when it could leave its folder.

    Refused: absolute paths, ``..`` and ``.`` segments, empty segments, backslashes, NUL and
    other control characters, and anything under the unpublished build state (``.cogen/``).
    """
    if not name or "\\" in name or any(ord(ch) < 32 for ch in name) or name.startswith("/"):
        return None
    parts = name.split("/")
    if any(part in ("", ".", "..") for part in parts) or parts[0] == STATE_DIR or ":" in parts[0]:
        return None
    return str(PurePosixPath(*parts))


class FolderSource:
    """A local dataset folder (``cogen build`` output)."""

    def __init__(self, folder: str | Path):
        self.root = Path(folder).expanduser().resolve()
        self.name = self.root.name
        if not (self.root / MANIFEST_DIR).is_dir():
            raise DataError(f"{folder}: not a dataset folder (no {MANIFEST_DIR}/); build one with `cogen build`")

    def configs(self) -> list[str]:
        """The configs whose manifest is in the folder, in natural order."""
        return sorted((p.stem for p in (self.root / MANIFEST_DIR).glob("*.json")), key=natural_key)

    def manifest(self, config: str) -> dict:
        """The manifest of ``config``."""
        return _read_json(self.path(f"{MANIFEST_DIR}/{config}.json"), config)

    def path(self, name: str) -> Path:
        """The local path of a file named relative to the folder (never outside it)."""
        clean = safe_relpath(name)
        target = (self.root / clean).resolve() if clean else None
        if target is None or not target.is_relative_to(self.root):
            raise DataError(f"{self.root}: refusing the path {name!r}, which leaves the dataset folder")
        return target


class HubSource:
    """A Hub dataset repo: manifests listed and fetched at start, shards fetched on demand (cached)."""

    def __init__(self, repo_id: str):
        from huggingface_hub import HfApi

        self.repo_id, self.name = repo_id, repo_id
        try:
            files = HfApi().list_repo_files(repo_id, repo_type="dataset")
        except Exception as error:  # offline, auth, missing repo: one line, not a traceback
            raise DataError(f"{repo_id}: no local folder of that name, and cannot list the Hub dataset repo {repo_id} "
                            f"({type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''})") from None
        prefix = f"{MANIFEST_DIR}/"
        self._configs = sorted((name[len(prefix):-5] for name in files
                                if name.startswith(prefix) and name.endswith(".json") and "/" not in name[len(prefix):]),
                               key=natural_key)
        if not self._configs:
            raise DataError(f"{repo_id}: no {MANIFEST_DIR}/*.json in the repo; is it a cogen dataset?")

    def configs(self) -> list[str]:
        """The configs the repo has a manifest for."""
        return list(self._configs)

    def manifest(self, config: str) -> dict:
        """The manifest of ``config`` (downloaded once, then read from the cache)."""
        return _read_json(self.path(f"{MANIFEST_DIR}/{config}.json"), config)

    def path(self, name: str) -> Path:
        """The cached local copy of one file of the repo (downloaded on first use)."""
        from huggingface_hub import hf_hub_download

        clean = safe_relpath(name)
        if clean is None:
            raise DataError(f"{self.repo_id}: refusing the path {name!r}")
        try:
            return Path(hf_hub_download(repo_id=self.repo_id, filename=clean, repo_type="dataset"))
        except Exception as error:  # network, auth, missing file
            raise DataError(f"{self.repo_id}: cannot download {clean} ({type(error).__name__}: {error})") from None


def _read_json(path: Path, config: str) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise DataError(f"{path}: cannot read the manifest of {config} ({error})") from None


def open_source(source: str | Path) -> FolderSource | HubSource:
    """A local dataset folder, or a Hub repo id, told apart at once (:func:`cogen.folder.locate.locate_data`)."""
    from cogen.folder.locate import locate_data

    location = locate_data(source)
    return FolderSource(location) if isinstance(location, Path) else HubSource(location)
