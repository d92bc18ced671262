"""Read one split of a built dataset: a local ``cogen build`` folder or a Hugging Face Hub repo.

Both hold ``manifests/<config>.json`` and the Parquet shards it lists; from the Hub they are
fetched with ``huggingface_hub.hf_hub_download`` (cached, so a second evaluation is offline).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from cogen.errors import EvalError

__all__ = ["SplitData", "load_split"]

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@dataclass(frozen=True)
class SplitData:
    """One split: its manifest, its rows as an Arrow table, and where they came from."""

    manifest: dict
    table: object
    split: str
    source: str

    @property
    def family(self) -> str:
        """``cogitao`` or ``carc``."""
        return self.manifest.get("family", "cogitao")

    @property
    def config(self) -> str:
        """The config name (``C3-1``)."""
        return self.manifest["config"]


def load_split(data: str | Path, config: str, split: str) -> SplitData:
    """The rows of ``split`` of ``config`` from a build folder or a Hub dataset repo id."""
    path = Path(data).expanduser()
    if path.is_dir():
        return _load_local(path, config, split)
    if isinstance(data, str) and _REPO_ID.match(data) and not path.exists():
        return _load_hub(data, config, split)
    raise EvalError(f"{data}: neither a dataset folder nor a Hub repo id (owner/name)")


def _read_manifest(path: Path, config: str) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise EvalError(f"{path}: cannot read the manifest of {config} ({error})") from None


def _split_files(manifest: dict, split: str, where: str) -> list[str]:
    splits = manifest.get("splits", {})
    if split not in splits:
        raise EvalError(f"{where}: config {manifest.get('config')} has no split {split!r} "
                        f"(it has {', '.join(splits) or 'none'})")
    return list(splits[split]["files"])


def _load_local(folder: Path, config: str, split: str) -> SplitData:
    manifest_file = folder / "manifests" / f"{config}.json"
    if not manifest_file.is_file():
        known = sorted(p.stem for p in (folder / "manifests").glob("*.json"))
        raise EvalError(f"{folder}: no config {config!r} (it has {', '.join(known) or 'no manifests'})")
    manifest = _read_manifest(manifest_file, config)
    files = [folder / name for name in _split_files(manifest, split, str(folder))]
    return SplitData(manifest, _read_tables(files), split, str(folder))


def _load_hub(repo_id: str, config: str, split: str) -> SplitData:
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError

    def fetch(name: str) -> Path:
        try:
            return Path(hf_hub_download(repo_id=repo_id, filename=name, repo_type="dataset"))
        except (OSError, EntryNotFoundError, ValueError) as error:  # offline, network, auth, missing file
            raise EvalError(f"{repo_id}: cannot download {name} ({type(error).__name__}: {error})") from None

    manifest = _read_manifest(fetch(f"manifests/{config}.json"), config)
    files = [fetch(name) for name in _split_files(manifest, split, repo_id)]
    return SplitData(manifest, _read_tables(files), split, f"hf://datasets/{repo_id}")


def _read_tables(files: list[Path]):
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        tables = [pq.read_table(f) for f in files]
    except (OSError, pa.ArrowException) as error:
        raise EvalError(f"cannot read the split's Parquet files ({error})") from None
    return pa.concat_tables(tables) if len(tables) > 1 else tables[0]
