"""``cogen verify``: re-check a built folder — schema, counts, leak-freedom, determinism.

Nothing here trusts the build: counts are read from the Parquet files, disjointness is
recomputed from the rows with an independent hash (BLAKE2b, not the sampler's key), and
determinism is checked by regenerating shards from the manifest alone and comparing rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from cogen.families import family
from cogen.folder import CARD_FILE, arrow_schema, config_dir, folder_manifests

__all__ = ["Check", "determinism_check", "failed", "verify"]


@dataclass(frozen=True)
class Check:
    """One verified property of one config (or of the whole folder when ``config`` is empty)."""

    config: str
    name: str
    ok: bool
    detail: str = ""


def verify(folder: str | Path, shards_per_config: int = 2) -> list[Check]:
    """Run every check on the dataset folder ``folder``; regenerate up to ``shards_per_config`` shards each.

    Checks common to every family (the card, the files and their schema) come first; the
    family's own checks (:attr:`cogen.families.Family.checks`) run on configs whose files are sound.
    """
    folder = Path(folder)
    manifests = folder_manifests(folder)
    checks = [_card_check(folder, manifests)]
    for manifest in manifests.values():
        file_checks = _file_checks(folder, manifest)
        checks += file_checks
        if all(c.ok for c in file_checks):
            family_checks = family(manifest.get("family")).load("checks")
            checks += family_checks(folder, manifest, shards_per_config)
    return checks


def _card_check(folder: Path, manifests: dict) -> Check:
    readme = folder / CARD_FILE
    if not readme.is_file():
        return Check("", "card", False, f"{CARD_FILE} is missing; rerun `cogen build` or `cogen card`")
    text = readme.read_text(encoding="utf-8")
    try:
        header = yaml.safe_load(text.split("---", 2)[1])
    except (IndexError, yaml.YAMLError) as error:
        return Check("", "card", False, f"README.md has no readable YAML header ({error})")
    listed = {c["config_name"]: c for c in header.get("configs", [])}
    infos = {i["config_name"]: {s["name"]: s["num_examples"] for s in i["splits"]} for i in header.get("dataset_info", [])}
    problems = [f"{name} missing from configs" for name in manifests if name not in listed]
    problems += [f"{name} listed but not built" for name in listed if name not in manifests]
    problems += [f"{name} row counts differ" for name, m in manifests.items()
                 if infos.get(name) != {s: v["rows"] for s, v in m["splits"].items()}]
    defaults = [name for name, c in listed.items() if c.get("default")]
    if len(defaults) != 1:
        problems.append(f"{len(defaults)} default configs (need exactly one)")
    return Check("", "card", not problems, "; ".join(problems) or f"{len(listed)} configs, counts match")


def _file_checks(folder: Path, manifest: dict) -> list[Check]:
    import pyarrow.parquet as pq

    config = manifest["config"]
    expected = arrow_schema(manifest["columns"])
    shards = config_dir(folder, config)
    listed = {f for split in manifest["splits"].values() for f in split["files"]}
    present = {str(p.relative_to(folder).as_posix()) for p in shards.glob("*")} if shards.is_dir() else set()
    problems = [f"missing {f}" for f in sorted(listed - present)]
    problems += [f"unexpected {f}" for f in sorted(present - listed)]
    counts = []
    for split, info in manifest["splits"].items():
        rows = 0
        for file in info["files"]:
            if file not in present:
                continue
            schema = pq.read_schema(folder / file)
            if not schema.remove_metadata().equals(expected.remove_metadata()):
                problems.append(f"{file}: schema differs from the manifest's columns")
            if schema.metadata.get(b"huggingface") != expected.metadata[b"huggingface"]:
                problems.append(f"{file}: Hugging Face features metadata differs")
            rows += pq.read_metadata(folder / file).num_rows
        counts.append(f"{split} {rows}")
        if rows != info["rows"]:
            problems.append(f"{split}: {rows} rows in the files, {info['rows']} in the manifest")
    return [Check(config, "files and schema", not problems, "; ".join(problems) or ", ".join(counts))]


def determinism_check(folder: Path, manifest: dict, shards_per_config: int, regenerate) -> Check:
    """Regenerate up to ``shards_per_config`` shards (spread over the splits) from the manifest alone
    with ``regenerate(manifest, split, start, stop) -> pyarrow.Table`` and compare them row for row."""
    import numpy as np
    import pyarrow.parquet as pq

    from cogen.pipeline.shards import read_stamp

    shards = [(split, f) for split, info in manifest["splits"].items() for f in info["files"]]
    count = min(shards_per_config, len(shards))
    chosen = list(dict.fromkeys(shards[i] for i in np.linspace(0, len(shards) - 1, count, dtype=int))) if count else []
    for split, file in chosen:
        stored = pq.read_table(folder / file)
        stamp, _ = read_stamp(folder / file)
        fresh = regenerate(manifest, split, stamp["start"], stamp["stop"])
        if not fresh.equals(stored.replace_schema_metadata(None).cast(fresh.schema)):
            return Check(manifest["config"], "determinism", False, f"{file} differs when regenerated")
    return Check(manifest["config"], "determinism", True,
                 f"{len(chosen)} shard(s) regenerated byte for byte from the manifest")


def failed(checks: list[Check]) -> list[Check]:
    """The checks that did not pass."""
    return [c for c in checks if not c.ok]
