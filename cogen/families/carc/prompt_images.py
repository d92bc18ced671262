"""The image of a Compositional-ARC text+image prompt: the study pairs and the query, drawn by cogen's renderer.

The paper's multimodal prompts (000: App. D.2, Figures 10 and 11) add one image that shows the
study examples and the final input. cogen draws it with the dataset-card renderer
(:mod:`cogen.card.preview`: the ARC palette, each input above its output with an arrow between
them): a band of the study pairs, then a band with the query input, whose output is left empty.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cogen.kit.card import PALETTE, Band, draw_bands, encode_png, write_png_atomic

__all__ = ["episode_image", "write_episode_image"]


def episode_image(study_inputs, study_outputs, query_input) -> bytes:
    """PNG bytes: the study pairs in a first band, the query input (nothing below it) in a second."""
    study = tuple((np.asarray(a, np.int8), np.asarray(b, np.int8))
                  for a, b in zip(study_inputs, study_outputs, strict=True))
    query = ((np.asarray(query_input, np.int8), np.zeros((0, 0), np.int8)),)  # an empty grid: the answer to find
    return encode_png(draw_bands([Band("study", study), Band("query", query)]), PALETTE)


def write_episode_image(folder, name: str, study_inputs, study_outputs, query_input) -> Path:
    """Write :func:`episode_image` to ``folder/<name>.png`` and return the path."""
    return write_png_atomic(Path(folder) / f"{name}.png", episode_image(study_inputs, study_outputs, query_input))
