"""Build the object bank from scratch, deterministically, and write its files.

``build_bank()`` runs the sweep of :mod:`cogen.bank._recipes` through the Numba generator, keeps
the first occurrence of every distinct object (same shape *and* values), measures the objects and
computes the property table. ``write_bank()`` writes ``bank.bin``, ``properties.arrow``, a
generated ``README.md`` and ``manifest.json``. Same seed, same bytes, on every machine.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np

from cogen.bank import _recipes, _store
from cogen.bank.bank import Bank
from cogen.bank.properties import NUMERIC_COLUMNS, PROPERTIES, measure, property_columns

__all__ = ["BUILDER_VERSION", "METADATA_COLUMNS", "build_bank", "write_bank"]

log = logging.getLogger(__name__)

BUILDER_VERSION = "2"
"""Bumped whenever the sweep, the generator or a property definition changes the bank."""

METADATA_COLUMNS = ("family", "footprint", "connectivity", "symmetry", "color_pattern", "outline")
"""How each object was generated (``n/a`` where a field does not apply to its family)."""


def _first_unique(grids: np.ndarray, shapes: np.ndarray) -> np.ndarray:
    """Indices of the first occurrence of every distinct non-empty object (shape and values)."""
    seen, keep = set(), []
    for i, (rows, cols) in enumerate(shapes.tolist()):
        key = (rows, cols, grids[i, :rows, :cols].tobytes())
        if rows and key not in seen:
            seen.add(key)
            keep.append(i)
    return np.asarray(keep, np.int64)


def _pack(grids: np.ndarray, shapes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(pixels, offsets) of tight boxes stored at the top-left of ``grids``' slots."""
    offsets = np.zeros(len(shapes) + 1, np.int64)
    np.cumsum(shapes[:, 0] * shapes[:, 1], out=offsets[1:])
    pixels = np.concatenate([g[:r, :c].ravel() for g, (r, c) in zip(grids, shapes.tolist(), strict=True)])
    return pixels.astype(np.int8), offsets


def _metadata(recipes: np.ndarray) -> dict[str, np.ndarray]:
    """The build metadata columns of the kept recipes."""
    grown = recipes[:, 0] == _recipes.FAMILIES.index("grown")

    def names(vocabulary, codes, applies):
        return np.where(applies, np.asarray(vocabulary)[codes], _recipes.NOT_APPLICABLE)

    return {
        "family": np.asarray(_recipes.FAMILIES)[recipes[:, 0]],
        "footprint": names(_recipes.FOOTPRINTS, np.where(grown, 0, recipes[:, 1]), ~grown),
        "connectivity": names(_recipes.CONNECTIVITIES, np.where(grown, recipes[:, 1], 0), grown),
        "symmetry": names(_recipes.SYMMETRIES, recipes[:, 2], grown),
        "color_pattern": np.asarray(_recipes.COLOR_PATTERNS)[recipes[:, 4]],
        "outline": recipes[:, 3] == 1,
    }


def _table(recipes: np.ndarray, features: dict) -> dict[str, np.ndarray]:
    """Columns in table order: numeric, build metadata, boolean properties."""
    computed = property_columns(features)
    columns = {name: computed[name] for name in NUMERIC_COLUMNS}
    columns.update(_metadata(recipes))
    columns.update({name: computed[name] for name in PROPERTIES})
    return columns


def build_bank(seed: int = _recipes.BANK_SEED) -> Bank:
    """Generate, deduplicate and measure the bank in memory (a few seconds once compiled)."""
    from cogen.bank._generate import generate

    start = time.perf_counter()
    recipes = _recipes.sweep(seed)
    objects = generate(recipes)
    grids, shapes = objects.grids, objects.shapes
    keep = _first_unique(grids, shapes)
    log.info("generated %d objects from %d recipes in %.1f s", len(keep), len(recipes),
             time.perf_counter() - start)
    shapes = shapes[keep]
    pixels, offsets = _pack(grids[keep], shapes)
    columns = _table(recipes[keep], measure(pixels, offsets, shapes))
    meta = {"builder_version": BUILDER_VERSION, "seed": seed, "recipes": len(recipes),
            "property_names": list(PROPERTIES)}
    data = _store.encode_container(pixels, offsets, shapes, columns, meta)
    return Bank(pixels, offsets, shapes, columns, PROPERTIES, sha256=_store.sha256_hex(data), meta=meta)


def _container_bytes(bank: Bank) -> bytes:
    columns = {name: bank.column(name) for name in bank.column_names}
    return _store.encode_container(bank.pixels, bank.offsets, bank.shapes, columns, bank.meta)


def write_bank(bank: Bank, directory: str | Path) -> dict:
    """Write ``bank``'s files and manifest into ``directory``; returns the manifest."""
    from cogen.bank._readme import readme

    directory = Path(directory)
    columns = {name: bank.column(name) for name in bank.column_names}
    arrow_meta = {"builder_version": bank.meta["builder_version"], "seed": bank.meta["seed"]}
    files = {
        _store.BANK_FILE: _container_bytes(bank),
        _store.TABLE_FILE: _store.encode_arrow(bank.pixels, bank.offsets, columns, arrow_meta),
        _store.README_FILE: readme(bank).encode(),
    }
    manifest = {
        "format": "cogen object bank",
        "builder_version": bank.meta["builder_version"],
        "seed": bank.meta["seed"],
        "counts": {"objects": len(bank), "recipes": bank.meta["recipes"],
                   "properties": len(bank.property_names), "columns": len(bank.column_names)},
        "bank_sha256": _store.sha256_hex(files[_store.BANK_FILE]),
        "arrow_writer": _pyarrow_version(),
    }
    manifest = _store.write_files(directory, files, manifest)
    log.info("wrote %d objects to %s", len(bank), directory)
    return manifest


def _pyarrow_version() -> str:
    import pyarrow

    return f"pyarrow {pyarrow.__version__}"
