"""Compile a spec :class:`~cogen.specs.Domain` into the flat arrays the sampler kernels read."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from cogen import rng
from cogen.families.cogitao.schema import SPLITS, Domain

__all__ = ["DEFAULT_MAX_ATTEMPTS", "SIZE_PATIENCE_SHARE", "Program", "compile_domain", "stream_seed"]

#: Attempts one sample may take before the build gives up on the spec (never a hang).
DEFAULT_MAX_ATTEMPTS = 20_000
#: A sample that balances object sizes keeps its drawn sizes for this share of its attempt budget,
#: then draws new sizes (counted as a size redraw): some size draws cannot fit at all.
SIZE_PATIENCE_SHARE = 0.1
#: Most distinct precondition-bearing transformations one domain may use (2**k object pools).
MAX_PRECONDITIONED = 10


@dataclass(frozen=True)
class Program:
    """A domain as arrays: sequences, candidate object pools, ranges (see ``_sampler.generate``)."""

    sequences: np.ndarray          # int64 (n, 1 + depth): length, then tokens (-1 padded)
    pool: np.ndarray               # int64 tokens drawn from in pool mode
    token_bits: np.ndarray         # int64 per token: its precondition bit (0 = none)
    candidate_offsets: np.ndarray  # int64 (2**k + 1): CSR offsets of the pools, by precondition mask
    candidate_ids: np.ndarray      # int32 bank ids, each pool sorted by id (by height, then id, to balance sizes)
    band_offsets: np.ndarray       # int64 (2**k + 1): CSR offsets of each pool's height bands
    candidate_bands: np.ndarray    # int32 (b, 2): [start, stop) within its pool of each height band (none
                                   # unless sizes are balanced)
    params: np.ndarray             # int64 (14,): see _sampler.P_* and _sampler.DOMAIN_PARAMS
    capacity: tuple[int, int, int, int]  # max height, max width, max objects, max depth

    def arrays(self):
        """The :data:`cogen.families.cogitao.generate._sampler.ProgramArrays` the kernels take, each field by name."""
        from cogen.families.cogitao.generate._sampler import ProgramArrays

        return ProgramArrays(**{name: getattr(self, name) for name in ProgramArrays._fields})


def compile_domain(domain: Domain, bank, max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> Program:
    """Turn ``domain`` into a :class:`Program` over ``bank`` (a :class:`cogen.bank.Bank`)."""
    from cogen.engine import TRANSFORMS, resolve
    from cogen.families.cogitao.generate._sampler import DOMAIN_PARAMS
    from cogen.families.cogitao.spec import object_query

    seqs = domain.sequences
    listed = seqs.sequences if seqs.explicit else seqs.exclude
    depth = seqs.max_depth
    table = np.full((max(len(listed), 1), 1 + depth), -1, np.int64)  # a row of -1 matches no sequence
    for row, sequence in enumerate(listed):
        table[row, 0] = len(sequence)
        table[row, 1 : 1 + len(sequence)] = [resolve(name).token for name in sequence]
    guarded = [name for name in seqs.transforms() if resolve(name).preconditions]
    if len(guarded) > MAX_PRECONDITIONED:
        from cogen.errors import SpecError

        raise SpecError(f"a domain may use at most {MAX_PRECONDITIONED} transformations with preconditions")
    token_bits = np.zeros(max(t.token for t in TRANSFORMS.values()) + 1, np.int64)
    for bit, name in enumerate(guarded):
        token_bits[resolve(name).token] = 1 << bit
    by_size = "size" in domain.balance
    pools = []
    for mask in range(1 << len(guarded)):
        query = object_query(domain.objects, [name for bit, name in enumerate(guarded) if mask >> bit & 1])
        ids = np.asarray(bank.select(query) if query is not None else [], np.int32)
        pools.append(_by_height(ids, bank.shapes) if by_size else ids)
    offsets = np.zeros(len(pools) + 1, np.int64)
    offsets[1:] = np.cumsum([len(p) for p in pools])
    bands = [_bands(p, bank.shapes) if by_size else np.zeros((0, 2), np.int32) for p in pools]
    band_offsets = np.zeros(len(pools) + 1, np.int64)
    band_offsets[1:] = np.cumsum([len(b) for b in bands])
    grid, count = domain.grid, domain.objects.count
    params = DOMAIN_PARAMS.pack(
        explicit=int(seqs.explicit), depth_lo=seqs.depth.lo if seqs.depth else 0,
        depth_hi=seqs.depth.hi if seqs.depth else 0, h_lo=grid.height.lo, h_hi=grid.height.hi, w_lo=grid.width.lo,
        w_hi=grid.width.hi, n_lo=count.lo, n_hi=count.hi, max_attempts=max_attempts,
        keep_degenerate=int(domain.degenerate == "keep"), balance_count=int("count" in domain.balance),
        balance_size=int(by_size), size_patience=max(1, int(max_attempts * SIZE_PATIENCE_SHARE)))
    pool = np.array([resolve(name).token for name in seqs.pool], np.int64)
    return Program(table, pool, token_bits, offsets, np.concatenate(pools) if pools else np.zeros(0, np.int32),
                   band_offsets, np.concatenate(bands), params, (grid.height.hi, grid.width.hi, count.hi, depth))


def _by_height(ids: np.ndarray, shapes: np.ndarray) -> np.ndarray:
    """``ids`` ordered by object height (box rows), then id, so each height is one contiguous band."""
    return ids[np.lexsort((ids, shapes[ids, 0]))]


def _bands(ids: np.ndarray, shapes: np.ndarray) -> np.ndarray:
    """The [start, stop) positions of each height in a pool ordered by :func:`_by_height`."""
    heights = shapes[ids, 0]
    starts = np.flatnonzero(np.r_[True, heights[1:] != heights[:-1]]) if len(ids) else np.zeros(0, np.int64)
    return np.stack([starts, np.r_[starts[1:], len(ids)]], axis=1).astype(np.int32)


def stream_seed(seed: int, experiment: str, split: str) -> int:
    """The RNG stream of one split (:func:`cogen.rng.stream_seed` of the experiment name and the split)."""
    return rng.stream_seed(seed, experiment, SPLITS.index(split) if split in SPLITS else _word(split))


def _word(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")
