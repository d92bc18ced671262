"""The object bank: ~23,000 distinct objects (tight boxes up to 15x15) and their property table.

Engine-facing API (loading needs NumPy only)::

    from cogen.bank import load_bank
    bank = load_bank()                       # cached; default folder = the shipped objects/
    bank.select({"is_shape_fully_connected": True, "rows": (1, 5), "cols": (1, 5)})
    pixels, offsets, shapes = bank.pack(ids) # packed arrays for Numba kernels

Building (``build_bank``, ``write_bank``) compiles Numba kernels and is imported on first use.
"""

from __future__ import annotations

from cogen.bank.bank import Bank, load_bank
from cogen.bank.pools import POOLS, SYMMETRIC_SINGLE_COLOUR, Pool, mirror_noop_share, pool_sizes
from cogen.bank.properties import NUMERIC_COLUMNS, PROPERTIES, Property, object_properties
from cogen.bank.query import parse_where

__all__ = [
    "NUMERIC_COLUMNS",
    "POOLS",
    "PROPERTIES",
    "SYMMETRIC_SINGLE_COLOUR",
    "Bank",
    "Pool",
    "Property",
    "build_bank",
    "check_rebuilt",
    "load_bank",
    "mirror_noop_share",
    "object_properties",
    "parse_where",
    "pool_sizes",
    "verify_bank",
    "write_bank",
]


def __getattr__(name: str):
    """Import the builder lazily: it pulls in Numba, which loading a bank never needs."""
    if name in ("build_bank", "write_bank"):
        from cogen.bank import build

        return getattr(build, name)
    raise AttributeError(f"module 'cogen.bank' has no attribute {name!r}")


def verify_bank(path=None) -> dict:
    """Check every file of the bank folder ``path`` against its manifest checksum.

    Returns the manifest; raises :class:`cogen.errors.BankError` naming the first bad file.
    """
    from pathlib import Path

    from cogen._resources import objects_dir
    from cogen.bank._store import verify_files

    return verify_files(Path(path) if path is not None else objects_dir())


def check_rebuilt(path=None) -> str | None:
    """Compare the bank folder ``path`` (default: the shipped one) with the bank ``cogen objects build``
    makes from scratch: None when its objects and property table are that bank's, byte for byte,
    else what differs. A bank whose files were changed and its manifest re-signed passes
    :func:`verify_bank`, but not this (it costs a bank build: a few seconds once compiled)."""
    from cogen.bank.build import build_bank

    installed = load_bank(path)
    fresh = build_bank()
    if installed.sha256 == fresh.sha256:
        return None
    return (f"the installed object bank (SHA-256 {installed.sha256[:12]}...) is not the one `cogen objects build` makes "
            f"({fresh.sha256[:12]}...): its files were changed; rebuild it with `cogen objects build` or reinstall cogen")
