"""Flat vectors with named slots: the parameter, grammar, mask and metadata vectors that kernels index.

A kernel reads slot ``NAME`` of a vector as ``vector[P_NAME]``, a plain module constant that Numba
compiles in. Python builds and reads the same vector *by name* through a :class:`Slots` made from
those very constants (``Slots.of(globals(), "P_", ...)`` beside them), so no list of values is ever
paired with a list of indices by position, and a constant added to the layout is a slot at once:

>>> import numpy as np
>>> P_LO, P_HI, P_SIZE = 0, 1, 2
>>> PARAMS = Slots.of({"P_LO": P_LO, "P_HI": P_HI}, "P_", P_SIZE, np.int64, complete=True)
>>> PARAMS.pack(hi=9, lo=3).tolist()
[3, 9]
>>> PARAMS.unpack(np.array([[3, 9]]))["hi"].tolist()
[9]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

__all__ = ["Slots"]


@dataclass(frozen=True)
class Slots:
    """The named slots of a vector of ``size`` entries of ``dtype``; slot ``name`` starts at ``starts[name]``
    and runs to the next slot's start (the last one to ``size``). With ``complete``, :meth:`pack` needs
    every slot (a parameter vector), otherwise an omitted slot stays zero (a vector a kernel fills)."""

    starts: Mapping[str, int]
    size: int
    dtype: type
    complete: bool = False

    @classmethod
    def of(cls, constants: Mapping[str, object], prefix: str, size: int, dtype, complete: bool = False) -> Slots:
        """The slots named by the integer ``constants`` ``<prefix><NAME>`` (a module's ``globals()``): slot
        ``name`` (``NAME`` in lower case) starts at that constant. ``<prefix>SIZE`` is the size, not a slot."""
        starts = {name[len(prefix):].lower(): value for name, value in constants.items()
                  if name.startswith(prefix) and name != f"{prefix}SIZE" and isinstance(value, int)}
        ordered = sorted(starts.values())
        if len(set(ordered)) != len(ordered) or not ordered or ordered[0] != 0 or ordered[-1] >= size:
            raise ValueError(f"{prefix}* constants {starts} are not distinct starts of a {size}-entry vector")
        return cls(dict(sorted(starts.items(), key=lambda item: item[1])), size, dtype, complete)

    def slot(self, name: str) -> slice:
        """The entries of slot ``name``."""
        if name not in self.starts:
            raise KeyError(f"no slot {name!r}; the slots are {', '.join(self.starts)}")
        later = [start for start in self.starts.values() if start > self.starts[name]]
        return slice(self.starts[name], min(later, default=self.size))

    def width(self, name: str) -> int:
        """Number of entries of slot ``name``."""
        part = self.slot(name)
        return part.stop - part.start

    def pack(self, **values) -> np.ndarray:
        """A new vector with each slot set by name: a number for a one-entry slot, up to ``width`` numbers
        for a wider one (the rest zero)."""
        missing = [name for name in self.starts if name not in values]
        if self.complete and missing:
            raise TypeError(f"slots without a value: {', '.join(missing)}")
        vector = np.zeros(self.size, self.dtype)
        for name, value in values.items():
            part = self.slot(name)
            entries = np.atleast_1d(np.asarray(value, self.dtype))
            if len(entries) > part.stop - part.start:
                raise ValueError(f"slot {name!r} holds {part.stop - part.start} entries, not {len(entries)}")
            vector[part.start: part.start + len(entries)] = entries
        return vector

    def unpack(self, vectors: np.ndarray) -> dict[str, np.ndarray]:
        """Every slot of ``vectors`` (its last axis is a vector) by name: a one-entry slot without that axis."""
        return {name: vectors[..., part.start] if part.stop - part.start == 1 else vectors[..., part]
                for name, part in ((name, self.slot(name)) for name in self.starts)}
