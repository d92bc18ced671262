"""What every family's prompt maker shares: the :class:`Prompt` record, grids as text, seeded draws.

Each family writes its own prompts (``prompts`` of its :class:`~cogen.families.Family` record,
``cogen/families/<name>/prompts.py``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

__all__ = ["SELECTIONS", "Prompt", "format_grid", "seeded"]

#: Example selections of ``cogen prompts``: cogen's rule or the paper's (each family's prompt maker says which it takes).
SELECTIONS = ("cogen", "paper")


@dataclass(frozen=True)
class Prompt:
    """One prompt: ``id`` is the prediction id its reply answers; ``meta`` says how it was made."""

    id: str
    prompt: str
    meta: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        """JSON-ready record."""
        return {"id": self.id, "prompt": self.prompt, **self.meta}


def format_grid(grid, one_row_per_line: bool = False) -> str:
    """A grid as a Python list of lists, on one line or one row per line."""
    rows = ["[" + ", ".join(str(int(v)) for v in row) + "]" for row in np.asarray(grid)]
    return "[" + (",\n ".join(rows) if one_row_per_line else ", ".join(rows)) + "]"


def seeded(seed: int, name: str) -> np.random.Generator:
    """A NumPy generator seeded by ``seed`` and a name (a sample id, a config and split)."""
    digest = hashlib.sha256(f"{seed}:{name}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))

