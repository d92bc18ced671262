"""Where a build's files land: a local folder, or any ``fsspec`` URL (``s3://``, ``gs://``, ``memory://``).

A :class:`LocalStore` is a folder on the driver's disk, always by its absolute path (a relative
``--out`` means the same folder to every worker that shares the disk). A :class:`RemoteStore` is
an object-store prefix: workers upload their shards to it themselves, and the driver keeps the
build's state (lock, journal, manifests, card, previews) in a local *state folder*, fetches what
it needs to draw previews, and uploads the manifests, previews and card last, so the card never
lists a config whose shards are not all there. The lock only guards against a second build from
the same machine (an object store has no lock); run one build per URL at a time.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from cogen.errors import BuildError, os_error_text
from cogen.folder import CARD_FILE, CROISSANT_FILE, DATA_DIR, MANIFEST_DIR, PREVIEW_DIR, config_dir, record_problem
from cogen.folder.atomic import atomic_write
from cogen.folder.layout import inside, relative

__all__ = ["LocalStore", "RemoteStore", "download_folder", "is_url", "open_store", "put_file"]


def is_url(out: str | Path) -> bool:
    """True when ``out`` names a remote fsspec location (``scheme://...``, except ``file://``)."""
    text = str(out)
    return "://" in text and not text.startswith("file://")


def _filesystem(url: str, storage_options: dict | None):
    try:
        import fsspec
    except ImportError:
        raise BuildError(f"writing to {url} needs fsspec: pip install fsspec") from None
    if url.startswith("s3://"):
        from cogen.errors import optional_import

        optional_import("s3fs", f"{url}")
    try:
        fs, path = fsspec.core.url_to_fs(url, **(storage_options or {}))
    except (ImportError, ValueError) as error:
        scheme = url.split("://", 1)[0]
        raise BuildError(f"cannot open {url}: {error} (for {scheme}:// install its fsspec package, e.g. s3fs or "
                         "gcsfs, and pass its settings as storage options)") from None
    return fs, path


def put_file(url: str, data: bytes, storage_options: dict | None = None) -> None:
    """Write ``data`` as the object ``url`` (an object store writes a whole object or nothing)."""
    fs, path = _filesystem(url, storage_options)
    try:
        fs.pipe_file(path, data)
    except OSError as error:
        raise BuildError(f"cannot write {url}: {os_error_text(error)}") from None


class LocalStore:
    """A dataset folder on the driver's disk (``state`` is the folder itself)."""

    remote = False

    def __init__(self, folder: str | Path):
        self.folder = Path(folder).expanduser().resolve()
        self.state = self.folder
        self.url = str(self.folder)

    def files(self, config: str) -> set[str]:
        """Relative paths of the files in ``data/<config>/``."""
        shards = config_dir(self.folder, config)
        return {p.relative_to(self.folder).as_posix() for p in shards.iterdir()} if shards.is_dir() else set()

    def problem(self, relpath: str, record: dict) -> str | None:
        """Why the file is not the one ``record`` describes (None when it is)."""
        return record_problem(self.folder, relpath, record)

    def footer(self, relpath: str) -> tuple[dict | None, dict[str, int]]:
        """The ``cogen`` stamp and statistics in a shard's footer (None stamp when absent or unreadable)."""
        from cogen.pipeline.parquet import read_stamp

        return read_stamp(self.folder / relpath)

    def write(self, relpath: str, data: bytes) -> None:
        """Write a shard whose bytes a worker returned, through a temporary name (readers never see half)."""
        atomic_write(inside(self.folder, relpath), lambda temporary: temporary.write_bytes(data))

    def metadata(self, relpath: str):
        import pyarrow.parquet as pq

        return pq.read_metadata(self.folder / relpath)

    def remove(self, relpath: str) -> None:
        inside(self.folder, relpath).unlink(missing_ok=True)


class RemoteStore:
    """A dataset folder at an fsspec URL, with the build's state in a local folder."""

    remote = True

    def __init__(self, url: str, storage_options: dict | None = None, state: str | Path | None = None):
        self.url = url.rstrip("/")
        self.storage_options = dict(storage_options or {})
        self.fs, self.root = _filesystem(self.url, self.storage_options)
        self.state = Path(state).expanduser().resolve() if state else _default_state(self.url)

    def _path(self, relpath: str) -> str:
        return f"{self.root}/{relative(relpath)}"

    def files(self, config: str) -> set[str]:
        try:
            names = self.fs.ls(self._path(f"{DATA_DIR}/{config}"), detail=False, refresh=True)
        except FileNotFoundError:
            return set()
        return {f"{DATA_DIR}/{config}/{name.rstrip('/').rsplit('/', 1)[-1]}" for name in names}

    def problem(self, relpath: str, record: dict) -> str | None:
        """Size and footer stamp are compared (no download); ``cogen verify`` hashes every byte."""
        try:
            size = self.fs.size(self._path(relpath))
        except FileNotFoundError:
            return f"{relpath}: missing"
        except OSError as error:
            return f"{relpath}: cannot be read ({os_error_text(error)})"
        if size != record["bytes"]:
            return f"{relpath}: {size:,} bytes, the manifest recorded {record['bytes']:,} (the file changed after the build)"
        return None

    def footer(self, relpath: str) -> tuple[dict | None, dict[str, int]]:
        """The ``cogen`` stamp and statistics in a remote shard's footer (None stamp when absent or unreadable)."""
        import json

        try:
            metadata = self.metadata(relpath).metadata or {}
            return json.loads(metadata[b"cogen"]), json.loads(metadata.get(b"cogen_stats", b"{}"))
        except Exception:  # a foreign, damaged or missing file is not a finished shard
            return None, {}

    def metadata(self, relpath: str):
        import pyarrow.parquet as pq

        with self.fs.open(self._path(relpath), "rb") as handle:
            return pq.read_metadata(handle)

    def remove(self, relpath: str) -> None:
        try:
            self.fs.rm_file(self._path(relpath))
        except FileNotFoundError:
            pass

    def fetch(self, relpath: str) -> None:
        """Copy one remote file into the state folder (the card's previews read the first shard of a split)."""
        target = inside(self.state, relpath)
        target.parent.mkdir(parents=True, exist_ok=True)
        self.fs.get_file(self._path(relpath), str(target))

    def pull_metadata(self) -> None:
        """Bring the remote card and manifests into the state folder, so a resumed build trusts what is there."""
        for relpath in [CARD_FILE, *self._listing(MANIFEST_DIR)]:
            try:
                self.fetch(relpath)
            except FileNotFoundError:
                pass

    def remote_card(self) -> str | None:
        try:
            return self.fs.cat_file(self._path(CARD_FILE)).decode("utf-8", "replace")
        except FileNotFoundError:
            return None

    def push_metadata(self) -> None:
        """Upload manifests and previews, then ``croissant.json`` and the card (last: it lists the configs that
        are whole)."""
        wanted = set()
        for folder in (MANIFEST_DIR, PREVIEW_DIR):
            for path in sorted((self.state / folder).glob("*")) if (self.state / folder).is_dir() else ():
                relpath = f"{folder}/{path.name}"
                wanted.add(relpath)
                self.fs.pipe_file(self._path(relpath), path.read_bytes())
        for relpath in self._listing(MANIFEST_DIR) + self._listing(PREVIEW_DIR):
            if relpath not in wanted:
                self.remove(relpath)
        if (self.state / CROISSANT_FILE).is_file():
            self.fs.pipe_file(self._path(CROISSANT_FILE), (self.state / CROISSANT_FILE).read_bytes())
        self.fs.pipe_file(self._path(CARD_FILE), (self.state / CARD_FILE).read_bytes())

    def clear(self) -> None:
        """Delete every file cogen keeps at the URL (shards, manifests, previews, card, croissant.json): ``--force``."""
        for folder in (DATA_DIR, MANIFEST_DIR, PREVIEW_DIR):
            try:
                self.fs.rm(self._path(folder), recursive=True)
            except FileNotFoundError:
                pass
        self.remove(CROISSANT_FILE)
        self.remove(CARD_FILE)

    def _listing(self, folder: str) -> list[str]:
        try:
            names = self.fs.ls(self._path(folder), detail=False, refresh=True)
        except FileNotFoundError:
            return []
        return [f"{folder}/{name.rstrip('/').rsplit('/', 1)[-1]}" for name in names]


def _default_state(url: str) -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "cogen" / "remote-builds" / hashlib.sha256(url.encode()).hexdigest()[:16]


def open_store(out: str | Path, storage_options: dict | None = None,
               state: str | Path | None = None) -> LocalStore | RemoteStore:
    """The store of ``--out``: a :class:`RemoteStore` for a URL, else a :class:`LocalStore`."""
    if is_url(out):
        return RemoteStore(str(out), storage_options, state)
    if storage_options:
        raise BuildError("storage options only go with a remote --out URL (s3://, gs://, ...)")
    text = str(out)
    return LocalStore(text[len("file://"):] if text.startswith("file://") else text)


def download_folder(url: str, folder: str | Path, storage_options: dict | None = None) -> None:
    """Copy the dataset folder at ``url`` (card, manifests, shards, previews) into the local ``folder``."""
    fs, root = _filesystem(url, storage_options)
    root = root.rstrip("/")
    try:
        paths = fs.find(root)
    except OSError as error:
        raise BuildError(f"cannot list {url}: {os_error_text(error)}") from None
    if not paths:
        raise BuildError(f"{url} holds no files: it is not a cogen build folder")
    for path in paths:
        target = Path(folder) / path[len(root):].lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        fs.get_file(path, str(target))
