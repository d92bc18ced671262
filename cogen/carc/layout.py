"""How many examples of each kind an episode holds: the layout of pool episodes and of the static variant.

These are the episode-shape parameters the kernels take; :mod:`cogen.families.carc.spec` reads them
from a spec file.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Layout", "StaticSpec"]


@dataclass(frozen=True)
class Layout:
    """Examples per episode: study examples per primitive kind and per level-1 kind, level-2 queries
    and level-2 shots (the 3-shot variant's study examples)."""

    primitives: int = 2
    compositions: int = 2
    queries: int = 10
    shots: int = 3

    @property
    def level2(self) -> int:
        """Level-2 examples generated per episode (queries, then shots)."""
        return self.queries + self.shots


@dataclass(frozen=True)
class StaticSpec:
    """The static fixed-grammar variant (reference ``gen_static_data.py``): 8 episodes, one pair per row."""

    seed: int = 1860
    primitives: int = 4
    compositions: int = 4
    queries: int = 14
