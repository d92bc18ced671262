"""The Python face of the sampler kernels: one split's job, and its samples as padded arrays.

>>> from cogen.specs import load_spec
>>> experiment = load_spec("c1").experiment("C1-1")
>>> job = SplitJob.of(experiment.domain("train"), seed=0, experiment="C1-1", split="train")  # doctest: +SKIP
>>> rows = generate_rows(job, np.arange(100))                                                 # doctest: +SKIP
>>> rows["inputs"].shape, rows["ok"].all()                                                    # doctest: +SKIP

A sample is a pure function of ``(job.stream, index, retry)``: the same numbers give the same
bytes in any process, in any order.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from cogen.errors import GenerationError
from cogen.families.cogitao.generate import _sampler
from cogen.families.cogitao.generate._sampler import CAUSES
from cogen.families.cogitao.generate.program import DEFAULT_MAX_ATTEMPTS, Program, compile_domain, stream_seed
from cogen.families.cogitao.schema import Domain
from cogen.render import RenderSettings
from cogen.rng import retry_numbers

__all__ = ["CAUSES", "ROW_FIELDS", "SplitJob", "generate_rows", "rejection_fix", "rejection_text", "require_ok"]

#: Names of the arrays :func:`generate_rows` returns: the fields of the kernel's :data:`~cogen.families.cogitao.generate._sampler.Rows`.
ROW_FIELDS = _sampler.Rows._fields


@dataclass(frozen=True)
class SplitJob:
    """Everything that decides one split's samples: its domain, its RNG stream and regenerations."""

    domain: Domain
    stream: int
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    retries: tuple[tuple[int, int], ...] = ()
    #: Also return every intermediate frame (changes no other byte of the samples).
    frames: bool = False
    #: Also return every object's box and pixels at every step (changes no other byte of the samples).
    object_frames: bool = False
    #: How the shard writer draws the grids as images (``None``: no images); the sampler ignores it.
    render: RenderSettings | None = None

    @classmethod
    def of(cls, domain: Domain, seed: int, experiment: str, split: str, max_attempts: int = DEFAULT_MAX_ATTEMPTS,
           frames: bool = False, render: RenderSettings | None = None, object_frames: bool = False) -> SplitJob:
        """The job of ``split`` of ``experiment`` under ``seed`` (no regenerations)."""
        return cls(domain, int(stream_seed(seed, experiment, split)), max_attempts, frames=frames,
                   object_frames=object_frames, render=render)

    def retries_between(self, start: int, stop: int) -> np.ndarray:
        """The retry number of every index in ``[start, stop)`` (0 unless dedup regenerated it)."""
        return retry_numbers(self.retries, start, stop)


@lru_cache(maxsize=128)
def _program(domain: Domain, max_attempts: int) -> Program:
    from cogen.bank import load_bank

    return compile_domain(domain, load_bank(), max_attempts)


def _bank_arrays() -> tuple:
    from cogen.bank import load_bank

    bank = load_bank()
    return (bank.pixels, bank.offsets, bank.shapes.astype(np.int64))


def generate_rows(job: SplitJob, indices: np.ndarray, retries: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Generate the samples ``indices`` of a split (the pure sample function), as padded arrays.

    Returns the arrays named in :data:`ROW_FIELDS`: ``ok``, ``sizes`` (H, W), ``inputs`` and
    ``outputs`` (padded grids), ``sequences`` (tokens, -1 padded), ``n_objects``, ``object_ids``,
    ``positions``, 128-bit content ``keys``, rejection ``causes`` counts, ``size_redraws``
    (times a sample balancing object sizes drew new ones) and ``noop`` (its first valid attempt
    left the grid unchanged: the sample is, or under ``degenerate: keep`` would have been, a
    no-op) per sample, and ``frames`` ``(n, max depth + 1, Hmax, Wmax)``: the input and the grid
    after each step, exactly as the sampler validated them (0 padded; ``(0, ...)`` unless
    ``job.frames``). With ``job.object_frames``, every object's state at every step, as the sampler
    validated it: ``object_boxes`` ``(n, max objects, max depth + 1, 4)`` int16 (row, col, height,
    width) and the objects' tight pixels row-major in ``object_cells`` (int8; sample by sample, object
    by object, step by step), sample ``i``'s at ``object_cell_starts[i]:object_cell_starts[i + 1]``
    (empty otherwise).
    """
    program = _program(job.domain, job.max_attempts)
    indices = np.ascontiguousarray(indices, np.int64)
    retries = np.zeros(len(indices), np.int64) if retries is None else np.ascontiguousarray(retries, np.int64)
    rows = _sampler.generate(np.uint64(job.stream), indices, retries, program.arrays(), _bank_arrays(),
                             program.capacity, (bool(job.frames), bool(job.object_frames)))
    return rows._asdict()


def require_ok(rows: dict, config: str, split: str, start: int) -> None:
    """Raise :class:`GenerationError`, with rejection counts, if a sample found no valid grid."""
    if rows["ok"].all():
        return
    first = int(np.flatnonzero(~rows["ok"])[0])
    kept = int(rows["n_objects"][first])
    count = f" with its {kept} objects (kept through its retries by `balance: difficulty`)" if kept else ""
    causes = rows["causes"].sum(axis=0)
    raise GenerationError(f"{config} {split}: sample {first + start}{count} found no valid grid in "
                          f"{int(rows['causes'][~rows['ok']].sum(axis=1).max())} attempts; "
                          f"{rejection_text(causes)}; {rejection_fix(causes)}")


def rejection_fix(causes: np.ndarray) -> str:
    """What to change in the spec, judged from the main rejection cause of summed ``causes``."""
    if CAUSES[int(np.argmax(causes[1:])) + 1] == "degenerate":
        return ("the sequence leaves most grids unchanged: choose objects it changes, or set `degenerate: keep` "
                "to allow samples whose output equals their input")
    return "loosen the grid, object count or object filter"


def rejection_text(causes: np.ndarray) -> str:
    """"attempts 2000, accepted 0: out_of_grid 1200, overlap 800" from summed cause counts."""
    counts = dict(zip(CAUSES, map(int, causes), strict=True))
    rejected = ", ".join(f"{name} {n}" for name, n in counts.items() if name != "accepted" and n)
    return f"attempts {sum(counts.values())}, accepted {counts['accepted']}" + (f": {rejected}" if rejected else "")
