"""Generate Compositional-ARC episodes: the Python face of the kernels in ``_kernels``.

>>> from cogen.specs import load_spec
>>> sampler = EpisodeSampler.from_setting(load_spec("carc"))
>>> batch = sampler.generate(range(100))      # episodes 0..99 of the pool
>>> batch.queries.shape                       # (episode, query, input/output, 10, 10)
(100, 10, 2, 10, 10)

An episode is a pure function of (spec, index, retry), so any episode can be regenerated alone
and the number of workers never changes the bytes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from cogen import rng
from cogen.carc.grammar import KINDS, QUERY_MODES, ROLES, TRANSFORMATIONS, Variant, triplet_name
from cogen.carc.layout import Layout
from cogen.errors import GenerationError

if TYPE_CHECKING:
    from cogen.families.carc.spec import CarcSetting

__all__ = ["MAX_DRAWS", "MAX_GRAMMARS", "REFERENCE_QUERIES", "EpisodeBatch", "EpisodeSampler",
           "kernel_params", "mask_cells", "stream_seed", "triplet_codes"]

#: Grammars tried per episode before giving up (the reference never gives up). The paper's specs
#: need about 18 on average in the reference query mode (at most a few hundred) and 1.7 in the
#: distinct mode, so 10,000 only ever stops hopeless specs.
MAX_GRAMMARS = 10_000
#: Object draws per block of examples (the reference's ``max_tries``).
MAX_DRAWS = 500
#: Queries the reference generates per episode (``gen_data.py --num_queries``); its restart rule
#: needs all of them distinct, so the reference query mode weighs grammars with this many draws.
REFERENCE_QUERIES = 14


def kernel_params(layout: Layout, queries: str, keep_degenerate: bool, shape_size: tuple[int, int]) -> np.ndarray:
    """The kernels' ``params`` vector (see ``_kernels.P_*``), every slot by name."""
    from cogen.carc._kernels import PARAMS

    if queries not in QUERY_MODES:
        raise ValueError(f"queries must be one of {', '.join(QUERY_MODES)}, not {queries!r}")
    return PARAMS.pack(keep_degenerate=int(keep_degenerate), primitives=layout.primitives,
                       compositions=layout.compositions, level2=layout.level2, max_grammars=MAX_GRAMMARS,
                       max_draws=MAX_DRAWS, min_size=shape_size[0], max_size=shape_size[1],
                       weigh_queries=int(queries == "reference"), query_draws=max(REFERENCE_QUERIES, layout.level2),
                       distinct_study=int(queries == "distinct"))


def stream_seed(seed: int, name: str) -> int:
    """The RNG stream of a setting's episode pool (:func:`cogen.rng.stream_seed` of the setting name)."""
    return rng.stream_seed(seed, f"carc:{name}")


@dataclass(frozen=True)
class EpisodeSampler:
    """Everything that decides a pool's episodes, in a small picklable object."""

    stream: int
    variants: tuple[Variant, ...]
    rotation: str = "paper"
    keep_degenerate: bool = False
    layout: Layout = Layout()
    shape_size: tuple[int, int] = (1, 9)
    queries: str = "reference"

    @classmethod
    def from_setting(cls, setting: CarcSetting) -> EpisodeSampler:
        """The sampler of ``setting``'s episode pool."""
        return cls(stream_seed(setting.seed, setting.name), tuple(setting.variants()), setting.rotation,
                   setting.degenerate == "keep", setting.layout, tuple(setting.shape_size), setting.queries)

    @cached_property
    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(variants, type_start, params)`` as the kernels take them."""
        variants = np.array([v.params(self.rotation) for v in self.variants], np.int64).reshape(-1, 3)
        codes = [v.code for v in self.variants]
        type_start = np.searchsorted(codes, np.arange(len(TRANSFORMATIONS) + 1)).astype(np.int64)
        return variants, type_start, kernel_params(self.layout, self.queries, self.keep_degenerate, self.shape_size)

    def generate(self, indices: Iterable[int], retries: Iterable[int] | None = None) -> EpisodeBatch:
        """Episodes ``indices`` of the pool (``retries[i]``-th regeneration of each; 0 by default)."""
        from cogen.carc import _kernels as K

        indices, retries = _index_arrays(indices, retries)
        variants, type_start, params = self.arrays
        episodes = K.generate(np.uint64(self.stream), indices, retries, variants, type_start, params)
        return EpisodeBatch(self, indices, retries, **episodes._asdict())

    def heads(self, indices: Iterable[int], retries: Iterable[int] | None = None) -> np.ndarray:
        """Role types (columns 0-2) and variant numbers (3-5) of episodes ``indices``, without generating them."""
        from cogen.carc import _kernels as K

        indices, retries = _index_arrays(indices, retries)
        return K.heads(np.uint64(self.stream), indices, retries, self.arrays[1])

    def triplet_names(self) -> list[str]:
        """Name of every triplet code ``sum(1 << type)`` (index = code; unused codes are empty)."""
        names = [""] * (1 << len(TRANSFORMATIONS))
        for code in range(len(names)):
            types = [t for i, t in enumerate(TRANSFORMATIONS) if code >> i & 1]
            if len(types) == 3:
                names[code] = triplet_name(types)
        return names


def _index_arrays(indices, retries) -> tuple[np.ndarray, np.ndarray]:
    indices = np.ascontiguousarray(np.fromiter(indices, np.int64) if not isinstance(indices, np.ndarray) else indices,
                                   np.int64)
    if retries is None:
        return indices, np.zeros(len(indices), np.int64)
    retries = np.ascontiguousarray(np.fromiter(retries, np.int64) if not isinstance(retries, np.ndarray) else retries,
                                   np.int64)
    if retries.shape != indices.shape:
        raise ValueError(f"{len(retries)} retries for {len(indices)} episodes")
    return indices, retries


def triplet_codes(types: np.ndarray) -> np.ndarray:
    """``sum(1 << type)`` of each row of role types: equal codes mean equal (unordered) triplets."""
    return (np.int64(1) << np.asarray(types, np.int64)).sum(axis=1)


@dataclass
class EpisodeBatch:
    """Generated episodes as arrays; grids are ``(episode, example, input/output, 10, 10)`` int8."""

    sampler: EpisodeSampler
    indices: np.ndarray
    retries: np.ndarray
    ok: np.ndarray
    grids: np.ndarray
    meta: np.ndarray
    shapes: np.ndarray
    keys: np.ndarray
    causes: np.ndarray

    def __len__(self) -> int:
        return len(self.indices)

    def require_ok(self) -> EpisodeBatch:
        """``self``, or a :class:`GenerationError` naming the first episode that found no grammar."""
        if not self.ok.all():
            from cogen.carc._kernels import CAUSES

            first = int(np.flatnonzero(~self.ok)[0])
            counts = ", ".join(f"{name} {int(n)}" for name, n in zip(CAUSES, self.causes[first], strict=True) if n)
            roles = ", ".join(f"{role}: {self.sampler.variants[v].label}"
                              for role, v in zip(ROLES, self.variant_numbers[first], strict=True))
            raise GenerationError(f"episode {int(self.indices[first])} ({roles}) found no valid grammar in "
                                  f"{int(self.causes[first].sum())} attempts ({counts}); widen shape_size or "
                                  "the transformation parameters")
        return self

    @property
    def n_study(self) -> int:
        """Study examples per episode (primitives, then level-1 compositions)."""
        layout = self.sampler.layout
        return 3 * (layout.primitives + layout.compositions)

    @property
    def study(self) -> np.ndarray:
        """The systematic study examples, in the reference's order (see :attr:`study_roles`)."""
        return self.grids[:, : self.n_study]

    @property
    def queries(self) -> np.ndarray:
        """The level-2 queries."""
        return self.grids[:, self.n_study: self.n_study + self.sampler.layout.queries]

    @property
    def shots(self) -> np.ndarray:
        """The level-2 examples of the 3-shot variant."""
        return self.grids[:, self.n_study + self.sampler.layout.queries:]

    @property
    def study_roles(self) -> list[str]:
        """Kind of each study example (the same for every episode)."""
        layout = self.sampler.layout
        counts = [layout.primitives] * 3 + [layout.compositions] * 3
        return [kind for kind, count in zip(KINDS[:6], counts, strict=True) for _ in range(count)]  # study kinds only

    @cached_property
    def fields(self) -> dict[str, np.ndarray]:
        """The metadata columns by name (``types``, ``variants``, ``color``, ``ncolor``, ``nshape``, ``nrow``,
        ``ncol``, ``grammars``; see ``_kernels.META_*``)."""
        from cogen.carc._kernels import META

        return META.unpack(self.meta)

    @property
    def types(self) -> np.ndarray:
        """Type code of the shape, colour and neighbour roles, per episode."""
        return self.fields["types"]

    @property
    def variant_numbers(self) -> np.ndarray:
        """Index in ``sampler.variants`` of each role's variant, per episode."""
        return self.fields["variants"]

    @property
    def triplets(self) -> list[str]:
        """The episodes' triplet names (``translation+rotation+grow``)."""
        names = self.sampler.triplet_names()
        return [names[code] for code in triplet_codes(self.types)]

    def shape_cells(self) -> tuple[np.ndarray, np.ndarray]:
        """S of each episode as (row, col) cells from the top-left: ``(counts, cells)``."""
        return mask_cells(self.shapes[:, 0:2])

    def neighbor_cells(self) -> tuple[np.ndarray, np.ndarray]:
        """N of each episode as (row, col) grid cells: ``(counts, cells)``."""
        return mask_cells(self.shapes[:, 2:4])

    def describe(self, i: int) -> dict:
        """The grammar of episode ``i`` in words: roles, S, C, N."""
        fields = self.fields
        variants = [self.sampler.variants[v] for v in self.variant_numbers[i]]
        s_counts, s_cells = mask_cells(self.shapes[i: i + 1, 0:2])
        n_counts, n_cells = mask_cells(self.shapes[i: i + 1, 2:4])
        return {
            "episode": int(self.indices[i]), "retry": int(self.retries[i]), "triplet": self.triplets[i],
            "roles": {role: {"type": v.name, "kwargs": dict(v.kwargs)} for role, v in zip(ROLES, variants, strict=True)},
            "shape": s_cells.tolist(), "color": int(fields["color"][i]),
            "neighbor": {"cells": n_cells.tolist(), "color": int(fields["ncolor"][i]),
                         "position": [int(fields["nrow"][i]), int(fields["ncol"][i])]},
        }


def mask_cells(words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Decode 100-bit cell masks (rows of ``(hi, lo)`` uint64 words) into cell counts and (row, col) cells.

    Cells come row by row, left to right; ``cells[counts[:i].sum():][:counts[i]]`` belong to row ``i``.
    """
    words = np.ascontiguousarray(words, np.uint64).reshape(-1, 2)
    little = words[:, ::-1].astype("<u8")  # lo word first: bit k of the result is cell k
    bits = np.unpackbits(np.ascontiguousarray(little).view(np.uint8).reshape(len(words), 16), axis=1,
                         bitorder="little")
    rows, cells = np.nonzero(bits)
    counts = np.bincount(rows, minlength=len(words)).astype(np.int64)
    return counts, np.stack([cells // 10, cells % 10], axis=1).astype(np.int8)
