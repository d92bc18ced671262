"""Compositional-ARC episodes and the systematicity-aware triplet split (Compositional-ARC paper).

An episode's *visual grammar* maps an object's shape (S), its colour (C) and the presence of an
indicator object (N) to three transformations; study examples show the primitives and their
level-1 compositions, queries ask for the level-2 composition shape -> colour -> neighbour.

* :mod:`cogen.carc.episodes`  :class:`EpisodeSampler`: episodes as a pure function of (spec, index, retry)
* :mod:`cogen.carc.split`     the reference's triplet split (seeds 1860-1890 reproduce the paper's Table 7)
* :mod:`cogen.carc.spec`      ``family: carc`` spec files (``split_specs/carc.yaml``, ``carc_extended.yaml``)
* :mod:`cogen.carc.build`     the family's part of ``cogen build``; :mod:`cogen.carc.verify` its checks
* :mod:`cogen.carc.mlc`       the MLC model's 2x2-patch token layout (NumPy only)

Importing this package loads neither Numba nor pyarrow; the kernels load on first use.
"""

from cogen.carc.grammar import KINDS, ROLES, TRANSFORMATIONS, Variant
from cogen.carc.spec import CarcSetting, Layout
from cogen.carc.split import all_triplets, held_out_triplets, split_rows

__all__ = ["KINDS", "ROLES", "TRANSFORMATIONS", "CarcSetting", "Layout", "Variant", "all_triplets",
           "held_out_triplets", "split_rows"]
