"""cogen: fast, reproducible, leak-free benchmarks of compositional generalization on ARC-like grids.

``import cogen`` is deliberately light: it imports neither numba, torch, pyarrow nor datasets.
The heavy parts live in subpackages that are imported when used:

* :mod:`cogen.bank`     the object bank and its property table
* :mod:`cogen.engine`   the 28 COGITAO transformations (registry + Numba kernels)
* :mod:`cogen.specs`    YAML experiment specs, validated into frozen objects
* :mod:`cogen.pipeline` sharded, resumable, leak-free dataset builds (``cogen build``, ``cogen verify``)
* :mod:`cogen.folder`   the dataset-folder format and the one split reader
* :mod:`cogen.card`     the dataset card and its previews
* :mod:`cogen.hub`      merging dataset folders and ``push`` to the Hub
* :mod:`cogen.io`       loaders that turn a split into padded arrays and task-code tokens
* :mod:`cogen.carc`     Compositional-ARC episodes and the systematicity-aware split
* :mod:`cogen.sandbox` untrusted Python programs run confined by the kernel
* :mod:`cogen.stream`   endless, leak-free streams of samples for training without a build
* :mod:`cogen.metrics`  the papers' metrics, stubbornness and the error taxonomy
* :mod:`cogen.eval`     ``cogen eval``; :mod:`cogen.llm` prompts for in-context runs
* :mod:`cogen.family`  the registry of task families; each family's own code is a folder of
  :mod:`cogen.families` (COGITAO's sampler, Compositional-ARC's plug-ins, seed 003's functions and program score)
"""

from cogen._version import __version__
from cogen.errors import CogenError

__all__ = ["CogenError", "__version__"]
