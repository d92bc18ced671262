"""cogen: fast, reproducible, leak-free benchmarks of compositional generalization on ARC-like grids.

``import cogen`` is deliberately light: it imports neither numba, torch, pyarrow nor datasets.
The heavy parts live in subpackages that are imported when used:

* :mod:`cogen.bank`     the object bank and its property table
* :mod:`cogen.engine`   the 28 COGITAO transformations (registry + Numba kernels)
* :mod:`cogen.specs`    YAML experiment specs, validated into frozen objects
* :mod:`cogen.generate` the seeded rejection sampler
* :mod:`cogen.pipeline`    sharded, resumable, leak-free dataset builds
* :mod:`cogen.hub`      Hub-ready folders, dataset cards, previews and ``push``
* :mod:`cogen.io`       loaders that turn a split into padded arrays and task-code tokens
* :mod:`cogen.carc`     Compositional-ARC episodes and the systematicity-aware split
* :mod:`cogen.metrics`  the papers' metrics, stubbornness and the error taxonomy
"""

from cogen._version import __version__
from cogen.errors import CogenError

__all__ = ["CogenError", "__version__"]
