"""The papers' metrics and failure analyses, on plain grids (NumPy at import; Numba kernels on first use).

* :mod:`cogen.metrics.grids`         validate predictions; stack grids of any sizes into one padded array
* :mod:`cogen.metrics.cogitao`       COGITAO: grid accuracy, per-pixel accuracy (true and padded),
  object per-pixel accuracy (and the paper's literal error formula), object reconstruction counts
* :mod:`cogen.metrics.stubborn`       COGITAO's stubbornness, re-applying in-domain sequences with the engine
* :mod:`cogen.metrics.carc`          Compositional-ARC: exact match, colour and shape accuracy (paper and
  code forms), the error taxonomy
* :mod:`cogen.metrics.objects`       8-connected components, colour-agnostic or same-colour

Every definition is spelled out in the module docstrings and in ``docs/evaluation.md``.
"""

from cogen.metrics.carc import (
                                ERROR_CATEGORIES,
                                CarcQuery,
                                CarcScores,
                                classify_error,
                                error_taxonomy,
                                queries_from_row,
                                score_queries,
                                taxonomy_counts,
)
from cogen.metrics.cogitao import (
                                GridScores,
                                equal_grids,
                                grid_accuracy,
                                object_counts,
                                object_pixel_accuracy,
                                object_pixel_error,
                                per_pixel_accuracy,
                                score_grids,
)
from cogen.metrics.grids import MAX_SIDE, PAD, GridStack, check_grid, stack_grids
from cogen.metrics.objects import components
from cogen.metrics.stubborn import Scene, StubbornnessResult, sequence_outputs, stubbornness

__all__ = [
    "ERROR_CATEGORIES",
    "MAX_SIDE",
    "PAD",
    "CarcQuery",
    "CarcScores",
    "GridScores",
    "GridStack",
    "Scene",
    "StubbornnessResult",
    "check_grid",
    "classify_error",
    "components",
    "equal_grids",
    "error_taxonomy",
    "grid_accuracy",
    "object_counts",
    "object_pixel_accuracy",
    "object_pixel_error",
    "per_pixel_accuracy",
    "queries_from_row",
    "score_grids",
    "score_queries",
    "sequence_outputs",
    "stack_grids",
    "stubbornness",
    "taxonomy_counts",
]
