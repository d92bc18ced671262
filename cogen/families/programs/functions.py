"""String-to-grid functions (seed 003): 4 letters control disjoint groups of 4 cells of a 4x4 grid.

The input is a string of N = 4 characters; character ``i`` is one of two letters (U = 2):
position 0 is A/B, 1 is C/D, 2 is E/F, 3 is G/H. The output is a 4x4 grid of ``.`` and ``*``
(M = 16 cells). Character ``i`` controls the cells of its *group* (4 cells; the groups are
disjoint and cover the grid): the first letter writes the character's *pattern* on them (in
row-major order), the second letter writes its complement, so flipping a letter flips exactly
its cells. All d = 16 inputs, in lexicographic order, are the function's samples.

The settings decide the groups (spec programs.md, decision 1):

==================  =====================================================================
horizontal          character i -> row i
block               character i -> the i-th 2x2 quadrant, row-major (TL, TR, BL, BR)
vertical            character i -> column i
random              a uniform random partition of the 16 cells into 4 labelled groups of 4
random_index        character i -> row pi(i), pi a uniform permutation (identity allowed)
horizontal_random   two rows drawn uniformly; character r keeps row r for those two; the other
                    8 cells are split uniformly into groups of 4 for the other two characters
==================  =====================================================================

Patterns are uniform over the 16 four-cell patterns. A function is a pure function of
``(stream, index, retry)``: :func:`sample` draws any batch of them at once with NumPy (a
splitmix64 word stream per function from :mod:`cogen.rng`, permutations by sorting random keys).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["CELLS", "CHARACTERS", "INPUTS", "LETTERS", "SAMPLES", "SETTINGS", "SETTING_TITLES", "SIZE",
           "FunctionBatch", "grid_text", "input_bits", "sample", "stream_seed"]

#: Characters of an input string (N) and letters per character (U).
CHARACTERS, LETTERS_PER_CHARACTER = 4, 2
#: Side of the output grid and its number of cells (M).
SIZE, CELLS = 4, 16
#: The eight letters, two per character position.
LETTERS = "ABCDEFGH"
#: The settings, in the order of the paper's tables.
SETTINGS = ("horizontal", "block", "vertical", "random", "random_index", "horizontal_random")
#: How the paper names each setting.
SETTING_TITLES = {"horizontal": "Horizontal", "block": "Block", "vertical": "Vertical", "random": "Random",
                  "random_index": "Random Index (H)", "horizontal_random": "Horizontal+Random"}
#: Number of samples of a function (d = U ** N).
SAMPLES = LETTERS_PER_CHARACTER ** CHARACTERS


def _inputs() -> tuple[str, ...]:
    return tuple("".join(LETTERS[2 * i + ((k >> (CHARACTERS - 1 - i)) & 1)] for i in range(CHARACTERS))
                 for k in range(SAMPLES))


#: The 16 input strings in lexicographic order (position 0 most significant, A < B).
INPUTS = _inputs()


def input_bits() -> np.ndarray:
    """``(16, 4)`` uint8: for each input, 0 where character ``i`` is its first letter, 1 where the second."""
    k = np.arange(SAMPLES)[:, None]
    return ((k >> (CHARACTERS - 1 - np.arange(CHARACTERS))[None, :]) & 1).astype(np.uint8)


def grid_text(bits) -> str:
    """A 16-cell 0/1 vector (or 4x4 array) as 4 lines of ``.``/``*`` joined by newlines."""
    flat = np.asarray(bits).reshape(-1)
    return "\n".join("".join("*" if v else "." for v in flat[r * SIZE:(r + 1) * SIZE]) for r in range(SIZE))


def stream_seed(seed: int, config: str) -> int:
    """The word stream of a config's functions (:func:`cogen.rng.stream_seed` of the config name)."""
    from cogen import rng  # here, not at the top: the sandbox and the scorer import this module without Numba

    return rng.stream_seed(seed, f"programs:{config}")


@dataclass(frozen=True)
class FunctionBatch:
    """``n`` functions of one setting.

    ``groups[k, c]``: the character (0-3) controlling cell ``c`` (row-major) of function ``k``;
    ``patterns[k, i]``: what character ``i``'s first letter writes on its 4 cells, row-major
    (1 = ``*``); ``rows[k, i]``: the row character ``i`` controls, -1 when it controls no whole
    row (or the setting does not assign rows).
    """

    setting: str
    groups: np.ndarray
    patterns: np.ndarray
    rows: np.ndarray

    def __len__(self) -> int:
        return len(self.groups)

    def outputs(self) -> np.ndarray:
        """``(n, 16, 16)`` uint8: cell values (1 = ``*``) of every function on every input."""
        rank = np.cumsum(self.groups[:, :, None] == np.arange(CHARACTERS), axis=1)
        rank = np.take_along_axis(rank, self.groups[:, :, None].astype(np.int64), axis=2)[:, :, 0] - 1
        first = self.patterns[np.arange(len(self))[:, None], self.groups, rank]  # (n, 16): value under first letters
        flips = input_bits()[:, self.groups]  # (16, n, 16): bit of the controlling character, per input
        return (first[None, :, :] ^ flips).transpose(1, 0, 2).astype(np.uint8)

    def keys(self) -> np.ndarray:
        """``(n, 2)`` uint64 identity of each function: groups (2 bits a cell) and patterns (16 bits)."""
        shifts = np.arange(CELLS, dtype=np.uint64)
        groups = (self.groups.astype(np.uint64) << (2 * shifts)).sum(axis=1, dtype=np.uint64)
        patterns = (self.patterns.reshape(len(self), CELLS).astype(np.uint64) << shifts).sum(axis=1, dtype=np.uint64)
        return np.stack([groups, patterns], axis=1)


# ---------------------------------------------------------------- sampling
_WORDS = 32  # random words per function: 16 cell keys, 4 row keys, 8 cell keys, 1 pattern word (+ spare)


def _words(stream: int, indices: np.ndarray, retries: np.ndarray) -> np.ndarray:
    """``(n, 32)`` uint64 random words of each (index, retry) of the stream."""
    from cogen import rng

    return rng.splitmix_words(rng.index_states(stream, indices, retries), _WORDS)


def _fixed(n: int, cell_to_character) -> np.ndarray:
    cells = np.arange(CELLS)
    return np.tile(np.asarray(cell_to_character(cells // SIZE, cells % SIZE), np.int8), (n, 1))


def _random_index(words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rows = np.argsort(words[:, 16:20], axis=1, kind="stable").astype(np.int8)  # character i -> row pi(i)
    groups = np.argsort(rows, axis=1, kind="stable").astype(np.int8)            # row r -> its character
    return np.repeat(groups, SIZE, axis=1), rows


def _horizontal_random(words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = len(words)
    kept = np.sort(np.argsort(words[:, 16:20], axis=1, kind="stable")[:, :2], axis=1)    # rows (= characters)
    is_kept = np.zeros((n, CHARACTERS), bool)
    is_kept[np.arange(n)[:, None], kept] = True
    others = np.sort(np.argsort(is_kept, axis=1, kind="stable")[:, :2], axis=1)          # the two other characters
    groups = np.repeat(np.where(is_kept, np.arange(CHARACTERS), -1), SIZE, axis=1).astype(np.int8)
    free = np.argsort(groups >= 0, axis=1, kind="stable")[:, :8]                          # their 8 cells, row-major
    order = np.argsort(words[:, 20:28], axis=1, kind="stable")                            # a uniform split 4 + 4
    owners = np.where(order < 4, others[:, :1], others[:, 1:]).astype(np.int8)
    groups[np.arange(n)[:, None], free] = owners
    rows = np.where(is_kept, np.arange(CHARACTERS), -1).astype(np.int8)
    return groups, rows


def _horizontal(words):
    n = len(words)
    return _fixed(n, lambda r, c: r), np.tile(np.arange(CHARACTERS, dtype=np.int8), (n, 1))


def _vertical(words):
    return _fixed(len(words), lambda r, c: c), _no_rows(len(words))


def _block(words):
    return _fixed(len(words), lambda r, c: (r // 2) * 2 + c // 2), _no_rows(len(words))


def _random(words):
    n = len(words)
    permutation = np.argsort(words[:, :CELLS], axis=1, kind="stable")
    groups = np.empty((n, CELLS), np.int8)
    groups[np.arange(n)[:, None], permutation] = np.repeat(np.arange(CHARACTERS, dtype=np.int8), SIZE)
    return groups, _no_rows(n)


def _no_rows(n: int) -> np.ndarray:
    return np.full((n, CHARACTERS), -1, np.int8)


#: setting -> words -> (groups, rows); one entry per setting, in :data:`SETTINGS` order.
_GROUPS = {"horizontal": _horizontal, "block": _block, "vertical": _vertical, "random": _random,
           "random_index": _random_index, "horizontal_random": _horizontal_random}


def sample(setting: str, stream: int, indices, retries=None) -> FunctionBatch:
    """The functions ``indices`` (regenerated ``retries`` times, default 0) of ``setting`` in ``stream``."""
    indices = np.asarray(indices, np.int64).reshape(-1)
    retries = np.zeros(len(indices), np.int64) if retries is None else np.asarray(retries, np.int64).reshape(-1)
    if setting not in _GROUPS:
        from cogen.errors import UnknownNameError

        raise UnknownNameError("setting", setting, SETTINGS)
    words = _words(stream, indices, retries)
    groups, rows = _GROUPS[setting](words)
    bits = (words[:, 28:29] >> np.arange(CELLS, dtype=np.uint64)[None, :]) & np.uint64(1)
    return FunctionBatch(setting, groups, bits.astype(np.uint8).reshape(len(indices), CHARACTERS, SIZE), rows)
