"""Compositional-ARC episodes and the systematicity-aware triplet split (Compositional-ARC paper).

An episode's *visual grammar* maps an object's shape (S), its colour (C) and the presence of an
indicator object (N) to three transformations; study examples show the primitives and their
level-1 compositions, queries ask for the level-2 composition shape -> colour -> neighbour.

* :mod:`cogen.carc.episodes`  :class:`EpisodeSampler`: episodes as a pure function of (spec, index, retry)
* :mod:`cogen.carc.split`     the reference's triplet split (seeds 1860-1890 reproduce the paper's Table 7)
* :mod:`cogen.carc.layout`    how many examples of each kind an episode holds
* :mod:`cogen.carc.static`    the static fixed-grammar variant
* :mod:`cogen.carc.table`     the rows of a config and their Arrow columns
* :mod:`cogen.carc.mlc`       the MLC model's 2x2-patch token layout (NumPy only)

This package is the family's domain and imports nothing above it: its spec reader is
:mod:`cogen.families.carc.spec`, its part of ``cogen build`` and ``cogen verify`` is
:mod:`cogen.families.carc.build` and :mod:`cogen.families.carc.checks`. Importing it loads neither
Numba nor pyarrow; the kernels load on first use.
"""

from cogen.carc.grammar import KINDS, ROLES, TRANSFORMATIONS, Variant
from cogen.carc.layout import Layout, StaticSpec
from cogen.carc.split import all_triplets, held_out_triplets, split_rows

__all__ = ["KINDS", "ROLES", "TRANSFORMATIONS", "Layout", "StaticSpec", "Variant", "all_triplets", "held_out_triplets",
           "split_rows"]
