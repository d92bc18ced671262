"""COGITAO-specific checks of ``cogen verify``: leak-freedom, uniqueness, outputs re-derived, determinism.

Fed one decoded row group at a time (:class:`cogen.pipeline.verify.FamilyChecks`); nothing is
taken from the build: sequences and row digests (BLAKE2b, not the sampler's key) are recomputed
from the rows, outputs are replayed by the engine from the bank objects and positions each row
records (:mod:`cogen.engine._replay`), and shards are regenerated from the manifest alone.
"""

from __future__ import annotations

import hashlib

import numpy as np

from cogen.pipeline.cogitao import regenerate_table
from cogen.pipeline.verify import Check, ConfigData, Determinism
from cogen.specs.schema import ID_SPLITS, OOD_SPLITS

__all__ = ["CogitaoChecks", "checks", "row_digests", "sequence_strings"]

_OUTCOMES = ("replayed", "input not drawn by its objects", "sequence cannot be replayed",
             "output differs from the engine's", "object id or position impossible", "grid shapes differ")
_SHAPES_DIFFER = 5


def checks(data: ConfigData) -> CogitaoChecks:
    """The checks of one COGITAO config (the family record's ``checks``)."""
    return CogitaoChecks(data)


def sequence_strings(table) -> list[str]:
    """Each row's transformation sequence as one string, names joined by ``|``."""
    import pyarrow.compute as pc

    return pc.binary_join(table.column("transformations"), "|").to_pylist()


def row_digests(table) -> list[bytes]:
    """BLAKE2b of (grid shape, sequence, grid cells) per row, from the Arrow buffers."""
    from cogen.pipeline.arrow import read_grids

    grids = read_grids(table.column("input"))
    cells = grids.cells.astype(np.int8, copy=False).tobytes()
    stops = grids.starts + grids.sizes[:, 0] * grids.sizes[:, 1]
    heads = [f"{h}x{w}|{s}|".encode() for (h, w), s in zip(grids.sizes.tolist(), sequence_strings(table), strict=True)]
    return [hashlib.blake2b(head + cells[a:b], digest_size=16).digest()
            for head, a, b in zip(heads, grids.starts.tolist(), stops.tolist(), strict=True)]


class CogitaoChecks:
    """Held-out sequences, unique (input, sequence) pairs, re-derived outputs and determinism of one config."""

    def __init__(self, data: ConfigData):
        from cogen.bank import load_bank

        self.data = data
        self.sequences: dict[str, set[str]] = {}
        self.seen: dict[bytes, str] = {}
        self.repeats: list[str] = []
        self.outcomes = np.zeros(len(_OUTCOMES), np.int64)
        self.wrong: list[str] = []
        self.determinism = Determinism(data, regenerate_table)
        bank = load_bank()
        self.bank = (bank.pixels, bank.offsets.astype(np.int64), bank.shapes.astype(np.int64))
        self.other_bank = bank.sha256 != data.manifest["bank_sha256"]

    def add(self, split: str, file: str, start: int, table) -> None:
        """Take in one decoded row group of ``file`` (rows ``start...`` of ``split``)."""
        self.sequences.setdefault(split, set()).update(sequence_strings(table))
        for i, digest in enumerate(row_digests(table)):
            if digest in self.seen:
                self.repeats.append(f"{split}[{start + i}] repeats {self.seen[digest]}")
            else:
                self.seen[digest] = f"{split}[{start + i}]"
        if self.other_bank:
            return
        rows = np.flatnonzero(self.data.rederive_mask(split, start, table.num_rows))
        if len(rows):
            self._rederive(file, start, table.take(rows), rows)
        self.determinism.add(split, file, start, table)

    def _rederive(self, file: str, start: int, table, rows: np.ndarray) -> None:
        outcomes = rederive_outputs(table, self.bank)
        self.outcomes += np.bincount(outcomes, minlength=len(_OUTCOMES))
        for i in np.flatnonzero(outcomes)[: max(0, 3 - len(self.wrong))]:
            self.wrong.append(f"{file} row {start + rows[i]}: {_OUTCOMES[outcomes[i]]}")

    def finish(self) -> list[Check]:
        """The four checks."""
        return [self._leak_check(), self._unique_check(), self._rederive_check(), self._determinism_check()]

    def _leak_check(self) -> Check:
        manifest = self.data.manifest
        shift = manifest["spec"].get("shift", "composition")
        ood = [s for s in OOD_SPLITS if s in self.sequences]
        if not ood:
            return Check(self.data.config, "held-out sequences", True, "no out-of-domain splits")
        seen_id = set().union(*(self.sequences[s] for s in ID_SPLITS if s in self.sequences))
        seen_ood = set().union(*(self.sequences[s] for s in ood))
        if shift == "environment":
            return Check(self.data.config, "held-out sequences", True,
                         f"environment shift: {len(seen_ood)} sequence(s) shared on purpose")
        leaked = sorted(seen_id & seen_ood)
        detail = f"{len(leaked)} out-of-domain sequence(s) also in domain, e.g. {leaked[0].split('|')}" if leaked \
            else f"{len(seen_id)} in-domain and {len(seen_ood)} out-of-domain sequences, disjoint"
        return Check(self.data.config, "held-out sequences", not leaked, detail)

    def _unique_check(self) -> Check:
        detail = f"{len(self.repeats)} repeated (input, sequence) pairs, e.g. {self.repeats[0]}" if self.repeats else \
            f"{len(self.seen)} distinct (input, sequence) pairs across {len(self.sequences)} splits"
        return Check(self.data.config, "unique (input, sequence)", not self.repeats, detail)

    def _rederive_check(self) -> Check:
        if self.other_bank:
            return Check(self.data.config, "re-derived outputs", False, self._bank_fix())
        total, bad = int(self.outcomes.sum()), int(self.outcomes[1:].sum())
        scope = "every row" if total == self.data.total_rows() else \
            f"a sample of {total:,} rows (`cogen verify --full`: every row)"
        if bad:
            return Check(self.data.config, "re-derived outputs", False,
                         f"{bad} of {total:,} rows do not replay: " + "; ".join(self.wrong))
        return Check(self.data.config, "re-derived outputs", True,
                     f"{scope}: inputs redrawn from their bank objects, outputs replayed by the engine, all equal")

    def _determinism_check(self) -> Check:
        return self.determinism.check(self._bank_fix() if self.other_bank else None)

    def _bank_fix(self) -> str:
        return ("built with another object bank than the installed one; install the cogen version of the manifest "
                f"({self.data.manifest['versions']['cogen']}) to replay or regenerate it")


def rederive_outputs(table, bank: tuple) -> np.ndarray:
    """Outcome code per row of ``table`` (0: replayed and equal; see ``_OUTCOMES``), with the engine."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from cogen.engine.scene import replay_scenes
    from cogen.pipeline.arrow import read_grids, read_lists
    from cogen.pipeline.cogitao import _names_by_token

    inputs, outputs = read_grids(table.column("input")), read_grids(table.column("output"))
    names, token_starts = read_lists(table.column("transformations"))
    tokens = pc.index_in(pa.array(names, pa.string()), value_set=pa.array(list(_names_by_token()), pa.string()))
    ids, object_starts = read_lists(table.column("object_ids"))
    pairs, pair_starts = read_lists(table.column("object_positions"))
    coordinates, pair_offsets = read_lists(pairs)
    counts = table.column("n_objects").to_numpy(zero_copy_only=False).astype(np.int64)
    sound = inputs.regular & outputs.regular & np.all(inputs.sizes == outputs.sizes, axis=1)
    sound &= (np.diff(object_starts) == counts) & (np.diff(pair_starts) == counts)
    outcomes = np.full(table.num_rows, _SHAPES_DIFFER, np.int64)
    rows = np.flatnonzero(sound)
    if len(rows) and np.all(np.diff(pair_offsets) == 2):
        outcomes[rows] = replay_scenes(rows, inputs.sizes, inputs.cells, inputs.starts, outputs.cells, outputs.starts,
                                       tokens.fill_null(-1).to_numpy(zero_copy_only=False), token_starts, ids,
                                       coordinates.reshape(-1, 2), object_starts, bank)
    return outcomes
