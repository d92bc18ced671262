"""The engine-facing object bank: packed arrays, the property table, queries.

Loading needs NumPy only (no Numba, no pyarrow), reads one file and checks its SHA-256 against the
manifest; banks are cached per folder and file state, so repeated ``load_bank()`` calls are free.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from cogen.bank import _store
from cogen.bank.query import Where, select_mask
from cogen.errors import BankError, UnknownNameError

__all__ = ["Bank", "load_bank"]

log = logging.getLogger(__name__)


def _frozen(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view


class Bank:
    """Objects (tight int8 boxes, 0 = background) packed into one flat buffer, with their table.

    Object ``i`` is ``pixels[offsets[i]:offsets[i + 1]].reshape(shapes[i])``. Every array the
    bank hands out is read-only. ``sha256`` identifies the bank (digest of its ``bank.bin``).
    """

    def __init__(self, pixels: np.ndarray, offsets: np.ndarray, shapes: np.ndarray,
                 columns: Mapping[str, np.ndarray], property_names: Sequence[str],
                 sha256: str, meta: Mapping | None = None, path: Path | None = None):
        self._pixels, self._offsets, self._shapes = _frozen(pixels), _frozen(offsets), _frozen(shapes)
        self._columns = {name: _frozen(np.asarray(values)) for name, values in columns.items()}
        self._property_names = tuple(property_names)
        self.sha256 = sha256
        self.meta = dict(meta or {})
        self.path = path

    def __len__(self) -> int:
        return len(self._shapes)

    def __repr__(self) -> str:
        where = f" from {self.path}" if self.path else ""
        return f"<Bank of {len(self)} objects{where}, sha256 {self.sha256[:12]}>"

    @property
    def pixels(self) -> np.ndarray:
        """All objects' pixels, row-major, concatenated (int8)."""
        return self._pixels

    @property
    def offsets(self) -> np.ndarray:
        """int64 array of n + 1 positions: object i spans ``pixels[offsets[i]:offsets[i + 1]]``."""
        return self._offsets

    @property
    def shapes(self) -> np.ndarray:
        """int64 array (n, 2) of every object's (rows, cols)."""
        return self._shapes

    @property
    def property_names(self) -> tuple[str, ...]:
        """Names of the boolean properties (the reference's 73 first)."""
        return self._property_names

    @property
    def column_names(self) -> tuple[str, ...]:
        """Every column: numeric, build metadata, then the boolean properties."""
        return tuple(self._columns)

    def object(self, i: int) -> np.ndarray:
        """Object ``i`` as a read-only int8 array of its (rows, cols)."""
        if not 0 <= i < len(self):
            raise BankError(f"object id {i} is out of range: the bank holds ids 0..{len(self) - 1}")
        rows, cols = self._shapes[i]
        return self._pixels[self._offsets[i]:self._offsets[i + 1]].reshape(rows, cols)

    def column(self, name: str) -> np.ndarray:
        """A column by name (read-only): numeric, metadata (strings) or boolean property."""
        try:
            return self._columns[name]
        except KeyError:
            raise UnknownNameError("bank column", name, self._columns) from None

    def select(self, where: Where) -> np.ndarray:
        """Sorted int32 ids of the objects meeting every condition of ``where``.

        ``where`` maps a column name to ``True``/``False`` (boolean property), an inclusive
        ``(lo, hi)`` range (numeric column; ``None`` leaves an end open), an int (equality), or
        a string (metadata value). Example::

            bank.select({"is_shape_fully_connected": True, "rows": (1, 5), "cols": (1, 5)})
        """
        return np.flatnonzero(select_mask(self._columns, len(self), where)).astype(np.int32)

    def pack(self, ids: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(pixels, offsets, shapes) holding just the objects ``ids``, in that order."""
        ids = np.asarray(ids, np.int64).ravel()
        if ids.size and (ids.min() < 0 or ids.max() >= len(self)):
            raise BankError(f"object ids must lie in 0..{len(self) - 1}")
        starts = self._offsets[ids]
        lengths = self._offsets[ids + 1] - starts
        offsets = np.zeros(len(ids) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        gather = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1])
        return self._pixels[gather], offsets, self._shapes[ids].copy()


_CACHE: dict[tuple, Bank] = {}


def _file_state(directory: Path) -> tuple:
    state = [str(directory)]
    for name in (_store.MANIFEST_FILE, _store.BANK_FILE):
        try:
            stat = (directory / name).stat()
            state += [stat.st_mtime_ns, stat.st_size]
        except OSError:
            state += [None, None]
    return tuple(state)


def load_bank(path: str | Path | None = None) -> Bank:
    """The object bank in folder ``path`` (default: the one shipped with cogen), cached.

    Raises :class:`cogen.errors.BankError` naming the file and the rebuild command when a file
    is missing, truncated, of the wrong layout or does not match its manifest checksum.
    """
    from cogen._resources import objects_dir

    directory = Path(path) if path is not None else objects_dir()
    directory = directory.resolve()
    key = _file_state(directory)
    if key not in _CACHE:
        _CACHE[key] = _read_bank(directory)
    return _CACHE[key]


def _read_bank(directory: Path) -> Bank:
    manifest = _store.read_manifest(directory)
    expected = manifest["files"][_store.BANK_FILE]["sha256"]
    arrays, columns, meta = _store.read_container(directory / _store.BANK_FILE, expected)
    names = meta.get("property_names", [n for n, v in columns.items() if v.dtype == bool])
    log.debug("loaded %d objects from %s", len(arrays["shapes"]), directory)
    return Bank(arrays["pixels"], arrays["offsets"], arrays["shapes"], columns, names,
                sha256=expected, meta=meta, path=directory)
