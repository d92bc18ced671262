"""What a folder's configs were built from, so that a folder holds one build.

A build is a pure function of its *inputs*: the spec (its fingerprint), the seed, the scale, the
rows per shard, the generator and file-format versions, the versions of the libraries that decide
the bytes, and cogen's own code (:func:`code_digest`). Every manifest records the inputs of its
config under ``"inputs"``; while a build runs, ``.cogen/inputs.json`` records those of the configs
it is writing (:func:`write_record`), so an interrupted build is held to them too.

``cogen build`` compares the inputs of every config it would make with the folder's
(:func:`folder_inputs`, :func:`differences`) and refuses a folder that holds another build, saying
what differs, unless ``--force`` replaces the folder's content. The journal of an unfinished config
is keyed by :func:`inputs_key`, so a shard written under other inputs is never kept.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path

from cogen.folder.atomic import atomic_write
from cogen.folder.layout import DATA_DIR, MANIFEST_DIR, record_path
from cogen.folder.names import name_problem

__all__ = ["CODE_EXCLUDED", "code_digest", "differences", "folder_inputs", "inputs_key", "legacy_inputs",
           "read_record", "write_record"]

#: Parts of cogen that read or publish data but never decide a shard's bytes (left out of :func:`code_digest`).
CODE_EXCLUDED = ("cli", "card", "hub", "eval", "llm", "metrics", "stream", "io", "export")
_FAMILY_EXCLUDED = ("checks.py", "evaluate.py", "prompts.py", "card.py", "export_mlc.py", "prompt_images.py")
#: The order in which differences are named (the fingerprint last: it differs whenever the spec does).
_LABELS = (
    ("family", "family"), ("setting", "setting"), ("seed", "seed"), ("scale", "scale"),
    ("rows_per_shard", "rows per shard"), ("generator_version", "generator version"),
    ("bank_sha256", "object bank"), ("code", "cogen's code"),
)
_LABELLED = {key for key, _ in _LABELS}


@cache
def code_digest() -> str:
    """SHA-256 of the source of every cogen module that can decide a shard's bytes (all but
    :data:`CODE_EXCLUDED` and the families' checks, evaluators, prompts and card text)."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package).parts
        if parts[0] in CODE_EXCLUDED or (parts[0] == "families" and parts[-1] in _FAMILY_EXCLUDED):
            continue
        digest.update("/".join(parts).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def inputs_key(inputs: dict) -> str:
    """A short digest of a config's inputs (the journal's key: a shard journaled under other inputs is not kept)."""
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:32]


def legacy_inputs(manifest: dict) -> dict:
    """The inputs a manifest written before ``"inputs"`` existed still tells (others are unknown)."""
    known = {key: manifest[key] for key in ("fingerprint", "family", "setting", "seed", "rows_per_shard",
                                             "generator_version", "bank_sha256", "parquet_format") if key in manifest}
    if isinstance(manifest.get("versions"), dict):
        known["versions"] = manifest["versions"]
    return known


def folder_inputs(folder: str | Path) -> dict[str, dict]:
    """Config -> recorded inputs of every config the folder holds or is building: from its manifests
    (an unreadable one counts with unknown inputs), the record of an unfinished build, and any
    ``data/<config>/`` folder (unknown inputs when nothing records it)."""
    folder = Path(folder)
    found: dict[str, dict] = {}
    data = folder / DATA_DIR
    for path in sorted(data.iterdir()) if data.is_dir() else ():
        if path.is_dir() and name_problem(path.name) is None:
            found[path.name] = {}
    manifests = folder / MANIFEST_DIR
    for path in sorted(manifests.glob("*.json")) if manifests.is_dir() else ():
        if name_problem(path.stem) is None:
            found[path.stem] = _manifest_inputs(path)
    found.update(read_record(folder))
    return found


def _manifest_inputs(path: Path) -> dict:
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    if not isinstance(manifest, dict):
        return {}
    inputs = manifest.get("inputs")
    return inputs if isinstance(inputs, dict) else legacy_inputs(manifest)


def read_record(folder: str | Path) -> dict[str, dict]:
    """Config -> inputs of the configs an unfinished build was writing (empty when there is none)."""
    try:
        record = json.loads(record_path(folder).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    configs = record.get("configs") if isinstance(record, dict) else None
    if not isinstance(configs, dict):
        return {}
    return {name: inputs for name, inputs in configs.items()
            if name_problem(name) is None and isinstance(inputs, dict)}


def write_record(folder: str | Path, inputs: dict[str, dict]) -> None:
    """Record (before any shard is written) the inputs of the configs a build is about to write,
    next to those an earlier unfinished build recorded."""
    configs = {**read_record(folder), **inputs}
    text = json.dumps({"configs": configs}, indent=2, sort_keys=True) + "\n"
    atomic_write(record_path(folder), lambda temporary: temporary.write_text(text, encoding="utf-8"))


def differences(recorded: dict[str, dict], wanted: dict[str, dict]) -> list[str]:
    """What differs between the inputs a folder records and those of a build (``wanted``: every
    config of its spec), one phrase per difference, naming the configs; empty when they agree."""
    phrases: dict[str, list[str]] = {}
    for name, old in recorded.items():
        if name not in wanted:
            phrases.setdefault("configs that this spec does not make", []).append(name)
            continue
        for phrase in _config_differences(old, wanted[name]):
            phrases.setdefault(phrase, []).append(name)
    return [f"{phrase} ({_names(configs)})" for phrase, configs in phrases.items()]


def _config_differences(old: dict, new: dict) -> list[str]:
    found = [f"{label} {_short(old[key])} in the folder, {_short(new[key])} now"
             for key, label in _LABELS if key in old and key in new and old[key] != new[key]]
    old_versions, new_versions = old.get("versions", {}), new.get("versions", {})
    if isinstance(old_versions, dict) and isinstance(new_versions, dict):
        found += [f"{name} {old_versions[name]} in the folder, {new_versions[name]} now"
                  for name in sorted(old_versions.keys() & new_versions.keys())
                  if old_versions[name] != new_versions[name]]
    others = sorted(key for key in old.keys() & new.keys() - {*_LABELLED, "versions", "fingerprint"}
                    if old[key] != new[key])  # the file format (parquet_format, parquet_cdc), the spec's version, ...
    found += [f"{key} {_short(old[key])} in the folder, {_short(new[key])} now" for key in others]
    if not found and old.get("fingerprint", new.get("fingerprint")) != new.get("fingerprint"):
        found.append("the spec's values differ")
    return found


def _short(value) -> str:
    text = str(value)
    return text[:12] + "..." if len(text) == 64 and all(c in "0123456789abcdef" for c in text) else text


def _names(configs: list[str]) -> str:
    return ", ".join(configs[:6]) + (f" and {len(configs) - 6} more" if len(configs) > 6 else "")
