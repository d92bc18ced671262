"""The static ("basic seq2seq") variant: one fixed grammar family (reference ``gen_static_data.py``).

Two shapes, two colours and two indicator objects, each with its own transformation; the 2 x 2 x 2
choices give 8 episodes (in ``itertools.product`` order of the shape, colour and neighbour
choices). Both shapes are forbidden for random objects, and objects take the five free colours.
The split shuffles the 8 episodes with the seed and holds out the last one: every example of the 7
others and the study examples of the held-out one become single-pair training rows, the held-out
episode's queries are the test rows, and validation repeats test (as the reference does).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from cogen.carc.grammar import Variant
from cogen.carc.layout import Layout, StaticSpec
from cogen.carc.split import static_split
from cogen.carc.table import RowData

__all__ = ["FREE_COLORS", "StaticEpisodes", "generate_static", "static_rows"]

#: The two shapes, as the reference's strings "00010212" (three in a row, one below the right end)
#: and "0110112021" (five cells) read as (row, col) digit pairs.
SHAPES = (((0, 0), (0, 1), (0, 2), (1, 2)), ((0, 1), (1, 0), (1, 1), (2, 0), (2, 1)))
SHAPE_ROLE = (Variant("grow", (("direction", "-y"),)), Variant("translation", (("direction", "y"), ("step_size", 1))))
COLOR_ROLE = ((2, Variant("rotation", (("rotation_type", 0),))), (6, Variant("mirror", (("direction", "x"),))))
#: (colour, cell, transformation) of the two one-cell indicator objects.
NEIGHBOR_ROLE = ((1, (8, 4), Variant("translation", (("direction", "x"), ("step_size", 1)))),
                 (3, (0, 7), Variant("grow", (("direction", "-x"),))))
FREE_COLORS = (4, 5, 7, 8, 9)
EPISODES = 8


def _words(cells) -> tuple[int, int]:
    mask = sum(1 << (10 * r + c) for r, c in cells)
    return mask >> 64, mask & ((1 << 64) - 1)


@dataclass
class StaticEpisodes:
    """The 8 static episodes: grids ``(episode, example, input/output, 10, 10)`` and their grammars."""

    layout: Layout
    grids: np.ndarray
    variants: list[tuple[Variant, Variant, Variant]]
    colors: np.ndarray
    neighbor_colors: np.ndarray
    shape_words: np.ndarray
    neighbor_words: np.ndarray
    causes: np.ndarray
    rotation: str = "paper"


def _grammars(rotation: str):
    from cogen.carc import _kernels as K

    choices = list(itertools.product(range(2), repeat=3))
    g = np.zeros((EPISODES, K.G_SIZE), np.int64)
    s_cells = np.zeros((EPISODES, 2, K.CAP), np.int64)
    masks = np.zeros((EPISODES, K.M_SIZE), np.uint64)
    forbidden = [_words(shape) for shape in SHAPES]
    variants = []
    for i, (a, b, c) in enumerate(choices):
        (color, color_variant), (ncolor, cell, neighbor_variant) = COLOR_ROLE[b], NEIGHBOR_ROLE[c]
        roles = (SHAPE_ROLE[a], color_variant, neighbor_variant)
        variants.append(roles)
        shape = np.array(SHAPES[a]).T
        s_cells[i, :, : shape.shape[1]] = shape
        g[i] = K.GRAMMAR.pack(roles=[p for v in roles for p in v.params(rotation)], color=color, ncolor=ncolor,
                              nshape=0, nrow=cell[0], ncol=cell[1], sn=shape.shape[1], sh=shape[0].max() + 1,
                              sw=shape[1].max() + 1, nforbid=2, nfree=len(FREE_COLORS), free=FREE_COLORS)
        masks[i] = K.MASKS.pack(shape=forbidden[a], ncells=_words([cell]), forbid=[*forbidden[0], *forbidden[1]])
    return g, s_cells, masks, variants


def generate_static(spec: StaticSpec, stream: int, rotation: str = "paper", keep_degenerate: bool = False,
                    shape_size: tuple[int, int] = (1, 9), queries: str = "reference") -> StaticEpisodes:
    """Generate the 8 static episodes from RNG ``stream`` (episode ``i`` uses state ``(stream, i, 0)``).

    With one fixed grammar per episode the reference's restarts only redraw positions, so the
    reference query mode needs no acceptance step here (the kernel skips it); it only lets study
    examples repeat, as the reference's do."""
    from cogen.carc import _kernels as K
    from cogen.carc.episodes import kernel_params
    from cogen.errors import GenerationError

    layout = Layout(spec.primitives, spec.compositions, spec.queries, 0)
    g, s_cells, masks, variants = _grammars(rotation)
    params = kernel_params(layout, queries, keep_degenerate, shape_size)
    episodes = K.generate_fixed(np.uint64(stream), g, s_cells, masks, params)
    if not episodes.ok.all():
        raise GenerationError(f"static episode {int(np.flatnonzero(~episodes.ok)[0])} could not be filled")
    grammar, words = K.GRAMMAR.unpack(g), K.MASKS.unpack(masks)
    return StaticEpisodes(layout, episodes.grids, variants, grammar["color"].copy(), grammar["ncolor"].copy(),
                          words["shape"].copy(), words["ncells"].copy(), episodes.causes, rotation)


def _kinds(layout: Layout) -> np.ndarray:
    counts = [layout.primitives] * 3 + [layout.compositions] * 3 + [layout.level2]
    return np.repeat(np.arange(7), counts)


def static_rows(episodes: StaticEpisodes, seed: int) -> dict[str, RowData]:
    """The train, validation and test rows of the static split: one example per row."""
    train, test = static_split(seed, EPISODES)
    kinds = _kinds(episodes.layout)
    n_study = int((kinds < 6).sum())
    held_out = [(e, x) for e in test for x in range(n_study, len(kinds))]
    examples = {
        "train": [(e, x) for e in train for x in range(len(kinds))] + [(e, x) for e in test for x in range(n_study)],
        "validation": held_out,
        "test": held_out,
    }
    return {split: _rows(episodes, np.array(pairs, np.int64).reshape(-1, 2), kinds)
            for split, pairs in examples.items()}


def _rows(episodes: StaticEpisodes, pairs: np.ndarray, kinds: np.ndarray) -> RowData:
    episode, example = pairs[:, 0], pairs[:, 1]
    kwargs = np.array([[v.kwargs_json for v in roles] for roles in episodes.variants], object)[episode]
    types = np.array([[v.code for v in roles] for roles in episodes.variants], np.int64)[episode]
    return RowData(
        episode=episode, study=np.zeros((len(pairs), 0, 2, 10, 10), np.int8),
        study_kinds=np.zeros((len(pairs), 0), np.int64),
        queries=episodes.grids[episode, example][:, None], query_kinds=kinds[example][:, None], types=types,
        kwargs=kwargs, shape_words=episodes.shape_words[episode], color=episodes.colors[episode],
        neighbor_words=episodes.neighbor_words[episode], neighbor_color=episodes.neighbor_colors[episode],
        rotation=episodes.rotation)
