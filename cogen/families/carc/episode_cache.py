"""The episode cache of a Compositional-ARC build: the key pass's episodes, kept on disk for the shard writers.

Every config of a carc spec (the pool, its systematicity and 3-shot splits) holds the same pool
episodes, so the key pass, which generates each episode at retry 0 to read its grammar key, saves
them (one folder of ``.npy`` files per :data:`CHUNK` pool indices), and the shard writers map them
back (read-only memory maps: no copy, and nothing left on the heap when a file is done) instead of
generating every episode again for every config. An episode is a pure function of (spec, index,
retry), so the rows are the same bytes either way: an episode with a non-zero retry, or whose
file is missing or unreadable, is generated again, as without a cache.

The cache lives in ``.cogen/scratch/carc-episodes-<sampler digest>/`` of the output folder
(:func:`cogen.folder.scratch_path`), only when every worker shares the driver's disk; the driver
deletes the scratch folder when the build starts and when it ends. A chunk's folder is written under
a temporary name and renamed, so a folder with a final name is complete.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from cogen.carc.episodes import EpisodeBatch, EpisodeSampler
from cogen.errors import BuildError
from cogen.kit.build import atomic_write

__all__ = ["CHUNK", "SWITCH", "CachedEpisodes", "cache_folder", "chunks", "save_chunk"]

log = logging.getLogger(__name__)

#: Pool indices per cache chunk (about 5 KB an episode: 10 MB a chunk).
CHUNK = 2_000
#: Environment variable that turns the cache off when set to ``0`` (tests compare both ways).
SWITCH = "COGEN_CARC_EPISODE_CACHE"
#: The arrays of an :class:`~cogen.carc.episodes.EpisodeBatch` a file holds, beside ``indices``.
FIELDS = ("ok", "grids", "meta", "shapes", "keys", "causes")
#: Cache chunks a reader keeps mapped at once (a shard reads its sorted pool indices in order).
HELD = 2


def cache_folder(scratch: str | Path | None, sampler: EpisodeSampler, version: int) -> str | None:
    """The cache folder of ``sampler``'s pool under ``scratch`` (None: no cache: no scratch, or switched off).

    The name is a digest of everything that decides the episodes (the sampler and the generator
    version), so a file made for another spec is never read.
    """
    if scratch is None or os.environ.get(SWITCH, "1") == "0":
        return None
    digest = hashlib.sha256(f"{sampler!r}|{version}".encode()).hexdigest()[:20]
    return str(Path(scratch) / f"carc-episodes-{digest}")


def chunks(start: int, stop: int) -> Iterator[tuple[int, int]]:
    """``[start, stop)`` cut at the multiples of :data:`CHUNK`."""
    while start < stop:
        end = min(stop, (start // CHUNK + 1) * CHUNK)
        yield start, end
        start = end


def _name(start: int, stop: int) -> str:
    return f"{start:012d}-{stop:012d}"


def save_chunk(folder: str, batch: EpisodeBatch) -> None:
    """Save generated episodes ``batch`` (consecutive pool indices at retry 0); a failure only logs."""
    start, stop = int(batch.indices[0]), int(batch.indices[-1]) + 1

    def write(temporary: Path) -> None:
        temporary.mkdir()
        for name in ("indices", *FIELDS):
            np.save(temporary / f"{name}.npy", np.ascontiguousarray(getattr(batch, name)))

    try:
        atomic_write(Path(folder) / _name(start, stop), write)
    except BuildError as error:  # the writers will generate these episodes again
        log.debug("cannot cache episodes %d-%d in %s: %s", start, stop, folder, error)


class CachedEpisodes:
    """Pool episodes from a cache folder, generated again where the cache has none (a shard's reader)."""

    def __init__(self, sampler: EpisodeSampler, folder: str):
        self.sampler, self.folder = sampler, folder
        self._held: OrderedDict[int, dict | None] = OrderedDict()
        files = []
        try:
            for entry in os.scandir(folder):
                start, dash, stop = entry.name.partition("-")
                if dash and start.isdigit() and stop.isdigit():
                    files.append((int(start), int(stop)))
        except OSError:
            pass
        files.sort()
        self._starts = np.array([f[0] for f in files], np.int64)
        self._stops = np.array([f[1] for f in files], np.int64)

    def generate(self, indices: np.ndarray, retries: np.ndarray) -> EpisodeBatch:
        """What ``sampler.generate(indices, retries)`` gives, taking retry-0 episodes from the cache."""
        indices = np.ascontiguousarray(indices, np.int64)
        retries = np.ascontiguousarray(retries, np.int64)
        pieces: list[tuple[np.ndarray, dict[str, np.ndarray]]] = []
        found = np.zeros(len(indices), bool)
        candidates = np.flatnonzero(retries == 0)
        files = np.searchsorted(self._starts, indices[candidates], side="right") - 1
        for file in np.unique(files[files >= 0]):
            rows = candidates[files == file]
            rows = rows[indices[rows] < self._stops[file]]
            chunk = self._load(int(file)) if len(rows) else None
            if chunk is not None:
                offsets = indices[rows] - self._starts[file]
                if offsets[-1] - offsets[0] + 1 == len(offsets) and np.all(np.diff(offsets) == 1):
                    offsets = slice(int(offsets[0]), int(offsets[-1]) + 1)  # consecutive episodes: views, no copy
                pieces.append((rows, {name: chunk[name][offsets] for name in FIELDS}))
                found[rows] = True
        missing = np.flatnonzero(~found)
        if len(missing) == len(indices):
            return self.sampler.generate(indices, retries)
        if len(missing):
            batch = self.sampler.generate(indices[missing], retries[missing])
            pieces.append((missing, {name: getattr(batch, name) for name in FIELDS}))
        if len(pieces) == 1:  # one file holds them all, in order
            return EpisodeBatch(self.sampler, indices, retries, **pieces[0][1])
        arrays = {}
        for name in FIELDS:
            first = pieces[0][1][name]
            arrays[name] = np.empty((len(indices), *first.shape[1:]), first.dtype)
            for rows, part in pieces:
                arrays[name][rows] = part[name]
        return EpisodeBatch(self.sampler, indices, retries, **arrays)

    def _load(self, file: int) -> dict | None:
        """The arrays of cache chunk ``file``, memory-mapped read-only (None when it cannot be read or
        is not what its name says)."""
        if file in self._held:
            self._held.move_to_end(file)
            return self._held[file]
        start, stop = int(self._starts[file]), int(self._stops[file])
        chunk = None
        try:
            path = Path(self.folder) / _name(start, stop)
            arrays = {name: np.asarray(np.load(path / f"{name}.npy", mmap_mode="r", allow_pickle=False))
                      for name in ("indices", *FIELDS)}
            if np.array_equal(arrays["indices"], np.arange(start, stop)) and \
                    all(len(arrays[name]) == stop - start for name in FIELDS) and arrays["ok"].all():
                chunk = arrays
        except (OSError, ValueError, EOFError) as error:
            log.debug("cannot read cached episodes %d-%d in %s: %s", start, stop, self.folder, error)
        self._held[file] = chunk
        while len(self._held) > HELD:
            self._held.popitem(last=False)
        return chunk
