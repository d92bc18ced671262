"""COGITAO-specific checks of ``cogen verify``: leak-freedom, uniqueness, determinism."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from cogen.pipeline.cogitao import regenerate_table
from cogen.pipeline.verify import Check, determinism_check
from cogen.specs.schema import ID_SPLITS, OOD_SPLITS

__all__ = ["checks", "row_digests", "split_sequences"]


def checks(folder: Path, manifest: dict, shards_per_config: int) -> list[Check]:
    """Leak, uniqueness and determinism checks of one COGITAO config."""
    tables = {split: _read(folder, info["files"], ["input", "transformations"]) for split, info in manifest["splits"].items()}
    return [_leak_check(manifest, tables), _unique_check(manifest, tables),
            _determinism_check(folder, manifest, shards_per_config)]


def _read(folder: Path, files: list[str], columns: list[str]):
    import pyarrow as pa
    import pyarrow.parquet as pq

    return pa.concat_tables([pq.read_table(folder / f, columns=columns) for f in files])


def split_sequences(table) -> set[tuple[str, ...]]:
    """The distinct transformation sequences of a table."""
    return {tuple(seq) for seq in table.column("transformations").to_pylist()}


def _leak_check(manifest: dict, tables: dict) -> Check:
    shift = manifest["spec"].get("shift", "composition")
    ood = [s for s in OOD_SPLITS if s in tables]
    if not ood:
        return Check(manifest["config"], "held-out sequences", True, "no out-of-domain splits")
    seen_id = set().union(*(split_sequences(tables[s]) for s in ID_SPLITS if s in tables))
    seen_ood = set().union(*(split_sequences(tables[s]) for s in ood))
    if shift == "environment":
        return Check(manifest["config"], "held-out sequences", True,
                     f"environment shift: {len(seen_ood)} sequence(s) shared on purpose")
    leaked = sorted(seen_id & seen_ood)
    detail = f"{len(leaked)} out-of-domain sequence(s) also in domain, e.g. {list(leaked[0])}" if leaked else \
        f"{len(seen_id)} in-domain and {len(seen_ood)} out-of-domain sequences, disjoint"
    return Check(manifest["config"], "held-out sequences", not leaked, detail)


def row_digests(table) -> list[bytes]:
    """BLAKE2b of (grid shape, grid cells, sequence) per row, from the Arrow buffers."""
    grids = table.column("input").combine_chunks()
    outer = grids.offsets.to_numpy()
    inner = grids.values.offsets.to_numpy()
    cells = grids.values.values.to_numpy(zero_copy_only=False).astype(np.int8).tobytes()
    sequences = table.column("transformations").to_pylist()
    digests = []
    for i, sequence in enumerate(sequences):
        start, stop = inner[outer[i]], inner[outer[i + 1]]
        height = outer[i + 1] - outer[i]
        width = (stop - start) // height if height else 0
        digest = hashlib.blake2b(digest_size=16)
        digest.update(f"{height}x{width}|{'|'.join(sequence)}|".encode())
        digest.update(cells[start:stop])
        digests.append(digest.digest())
    return digests


def _unique_check(manifest: dict, tables: dict) -> Check:
    seen: dict[bytes, str] = {}
    repeats = []
    for split, table in tables.items():
        for i, digest in enumerate(row_digests(table)):
            if digest in seen:
                repeats.append(f"{split}[{i}] repeats {seen[digest]}")
            else:
                seen[digest] = f"{split}[{i}]"
    detail = f"{len(repeats)} repeated (input, sequence) pairs, e.g. {repeats[0]}" if repeats else \
        f"{len(seen)} distinct (input, sequence) pairs across {len(tables)} splits"
    return Check(manifest["config"], "unique (input, sequence)", not repeats, detail)


def _determinism_check(folder: Path, manifest: dict, shards_per_config: int) -> Check:
    from cogen.bank import load_bank

    if load_bank().sha256 != manifest["bank_sha256"]:
        return Check(manifest["config"], "determinism", False,
                     "built with another object bank than the installed one; install the cogen version "
                     f"of the manifest ({manifest['versions']['cogen']}) to regenerate it")
    return determinism_check(folder, manifest, shards_per_config, regenerate_table)
