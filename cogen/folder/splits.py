"""Read one split of a dataset folder: a local ``cogen build`` folder, or a Hugging Face Hub repo.

Both hold ``manifests/<config>.json`` and the Parquet shards it lists; from the Hub they are
fetched with ``huggingface_hub.hf_hub_download`` (cached, so a second read is offline). This is
the one split reader of cogen: evaluation, prompts and the training loaders all use it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cogen.errors import DataError
from cogen.family import DEFAULT_FAMILY
from cogen.folder.layout import MANIFEST_DIR, manifest_path

__all__ = ["SplitData", "is_dataset_folder", "is_repo_id", "read_split", "split_files"]



@dataclass(frozen=True)
class SplitData:
    """One split: its manifest, its rows as an Arrow table, and where they came from."""

    manifest: dict
    table: object
    split: str
    source: str

    @property
    def family(self) -> str:
        """The family name of the config (a key of :data:`cogen.family.FAMILIES`)."""
        return self.manifest.get("family", DEFAULT_FAMILY)

    @property
    def config(self) -> str:
        """The config name (``C3-1``)."""
        return self.manifest["config"]


def is_dataset_folder(source) -> bool:
    """True when ``source`` is a local folder with manifests (a ``cogen build`` or ``cogen merge`` output)."""
    return isinstance(source, (str, Path)) and (Path(source).expanduser() / MANIFEST_DIR).is_dir()


def is_repo_id(source) -> bool:
    """True when ``source`` reads as a Hub repo id (``owner/name``, ``hf://datasets/owner/name``) and is no local path."""
    from cogen.folder.locate import hub_repo_id

    return isinstance(source, str) and hub_repo_id(source) is not None and not Path(source).expanduser().exists()


def read_split(source: str | Path, config: str | None, split: str,
               keep: Callable[[str], bool] | None = None) -> SplitData:
    """The rows of ``split`` of ``config`` from a dataset folder or a Hub dataset repo id.

    ``config`` may be ``None`` when the folder holds exactly one config; ``keep(column)`` limits
    the columns read (all by default).
    """
    manifest, files, where = split_files(source, config, split)
    return SplitData(manifest, _read_tables(files, _columns(manifest, keep)), split, where)


def _read_manifest(path: Path, config: str) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise DataError(f"{path}: cannot read the manifest of {config} ({error})") from None


def _split_files(manifest: dict, split: str, where: str) -> list[str]:
    splits = manifest.get("splits", {})
    if split not in splits:
        raise DataError(f"{where}: config {manifest.get('config')} has no split {split!r} "
                        f"(it has {', '.join(splits) or 'none'})")
    return list(splits[split]["files"])


def _only_config(folder: Path) -> str | None:
    known = sorted(p.stem for p in (folder / MANIFEST_DIR).glob("*.json"))
    return known[0] if len(known) == 1 else None


def _local_files(folder: Path, config: str | None, split: str | None) -> tuple[dict, list[Path], str]:
    config = config if config is not None else _only_config(folder)
    file = manifest_path(folder, str(config))
    if config is None or not file.is_file():
        known = sorted(p.stem for p in (folder / MANIFEST_DIR).glob("*.json"))
        raise DataError(f"{folder} has no config {config!r}; it has {', '.join(known) or 'no manifests'}")
    manifest = _read_manifest(file, config)
    names = [] if split is None else _split_files(manifest, split, str(folder))
    return manifest, [folder / name for name in names], str(folder)


def _hub_files(repo_id: str, config: str, split: str | None) -> tuple[dict, list[Path], str]:
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError

    def fetch(name: str) -> Path:
        try:
            return Path(hf_hub_download(repo_id=repo_id, filename=name, repo_type="dataset"))
        except (OSError, EntryNotFoundError, ValueError) as error:  # offline, network, auth, missing file
            raise DataError(f"{repo_id}: no local folder of that name, and cannot download {name} from the Hub "
                            f"dataset repo {repo_id} ({type(error).__name__}: {str(error).splitlines()[0]})") from None

    manifest = _read_manifest(fetch(f"{MANIFEST_DIR}/{config}.json"), config)
    names = [] if split is None else _split_files(manifest, split, repo_id)
    return manifest, [fetch(name) for name in names], f"hf://datasets/{repo_id}"


def split_files(source: str | Path, config: str | None, split: str | None) -> tuple[dict, list[Path], str]:
    """The manifest of ``config``, the local Parquet files of its ``split`` (downloaded from the Hub when
    ``source`` is a repo id; none when ``split`` is ``None``) and where they came from, unread: for readers
    that stream row groups instead of holding a split in memory (:func:`read_split` reads them whole)."""
    from cogen.folder.locate import locate_data

    location = locate_data(source)
    if isinstance(location, Path):
        return _local_files(location, config, split)
    if config is None:
        raise DataError(f"{source}: a Hub dataset repo; name the config to read (--config)")
    return _hub_files(location, config, split)


def _columns(manifest: dict, keep) -> list[str] | None:
    return None if keep is None else [name for name in manifest.get("columns", {}) if keep(name)]


def _read_tables(files: list[Path], columns):
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        tables = [pq.read_table(f, columns=columns) for f in files]
    except (OSError, pa.ArrowException) as error:
        raise DataError(f"cannot read the split's Parquet files ({error})") from None
    table = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
    return table.replace_schema_metadata(None)
