"""COGITAO-specific checks of ``cogen verify``: leak-freedom, uniqueness, outputs re-derived, determinism.

Fed one decoded row group at a time (:class:`cogen.pipeline.verify.FamilyChecks`); nothing is
taken from the build: sequences and row keys (:mod:`cogen.families.cogitao._digest`, not the sampler's
key) are recomputed from the rows, outputs are replayed by the engine from the bank objects and
positions each row records (:mod:`cogen.engine._replay`), and shards are regenerated from the
manifest alone.
"""

from __future__ import annotations

import numpy as np

from cogen.families.cogitao.build import regenerate_table
from cogen.families.cogitao.schema import ID_SPLITS, OOD_SPLITS
from cogen.kit.checks import Check, ConfigData, Determinism

__all__ = ["CogitaoChecks", "checks", "rederive_outputs", "row_keys", "sequence_ids"]

_OUTCOMES = ("replayed", "input not drawn by its objects", "sequence cannot be replayed",
             "output differs from the engine's", "object id or position impossible", "grid shapes differ",
             "a frame differs from the engine's step", "frames do not start at the input",
             "an object frame differs from the engine's step", "object frames do not start at the placed objects",
             "object frames do not match the row's objects, steps or boxes")
_SHAPES_DIFFER, _FRAME_DIFFERS, _FIRST_FRAME_DIFFERS = 5, 6, 7
_OBJECT_FRAME_DIFFERS, _FIRST_OBJECT_FRAME_DIFFERS, _OBJECT_FRAMES_UNSOUND = 8, 9, 10


def checks(data: ConfigData) -> CogitaoChecks:
    """The checks of one COGITAO config (the family record's ``checks``)."""
    return CogitaoChecks(data)


def sequence_ids(table, known: dict[str, int]) -> np.ndarray:
    """Each row's transformation sequence as an id of ``known`` (names joined by ``|`` -> id; new
    sequences are added), without a Python loop over the rows."""
    import pyarrow.compute as pc

    joined = pc.binary_join(table.column("transformations"), "|")
    distinct = pc.unique(joined)
    for name in distinct.to_pylist():
        known.setdefault(name, len(known))
    local = pc.index_in(joined, value_set=distinct).to_numpy(zero_copy_only=False)
    return np.array([known[name] for name in distinct.to_pylist()], np.int64)[local]


def row_keys(table, sequences: np.ndarray) -> np.ndarray:
    """(rows, 2) uint64 key of each row's (input grid, sequence id) (see :mod:`cogen.families.cogitao._digest`)."""
    from cogen.families.cogitao._digest import grid_keys
    from cogen.kit.arrow import read_grids

    grids = read_grids(table.column("input"))
    keys = np.zeros((table.num_rows, 2), np.uint64)
    grid_keys(np.ascontiguousarray(grids.sizes[:, 0]), np.ascontiguousarray(grids.sizes[:, 1]),
              np.ascontiguousarray(sequences, np.int64), np.ascontiguousarray(grids.cells, np.int8),
              np.ascontiguousarray(grids.starts, np.int64), keys)
    return keys


class CogitaoChecks:
    """Held-out sequences, unique (input, sequence) pairs, re-derived outputs and determinism of one config."""

    def __init__(self, data: ConfigData):
        from cogen.bank import load_bank

        self.data = data
        self.known: dict[str, int] = {}
        self.sequences: dict[str, set[int]] = {}
        self.keys: list[np.ndarray] = []
        self.places: list[tuple[str, int, int]] = []
        self.outcomes = np.zeros(len(_OUTCOMES), np.int64)
        self.wrong: list[str] = []
        self.determinism = Determinism(data, regenerate_table)
        bank = load_bank()
        self.bank = (bank.pixels, bank.offsets.astype(np.int64), bank.shapes.astype(np.int64))
        self.other_bank = bank.sha256 != data.manifest["bank_sha256"]
        self.frames = "frames" in data.manifest["spec"].get("output", ())
        self.object_frames = "object_frames" in data.manifest["spec"].get("output", ())

    def add(self, split: str, file: str, start: int, table) -> None:
        """Take in one decoded row group of ``file`` (rows ``start...`` of ``split``)."""
        sequences = sequence_ids(table, self.known)
        self.sequences.setdefault(split, set()).update(np.unique(sequences).tolist())
        self.keys.append(row_keys(table, sequences))
        self.places.append((split, start, table.num_rows))
        if self.other_bank:
            return
        rows = np.flatnonzero(self.data.rederive_mask(split, start, table.num_rows))
        if len(rows):
            self._rederive(file, start, table, rows)
        self.determinism.add(split, file, start, table)

    def _rederive(self, file: str, start: int, table, rows: np.ndarray) -> None:
        outcomes = rederive_outputs(table, self.bank, rows)
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
        names = {number: name for name, number in self.known.items()}
        leaked = sorted(names[number] for number in seen_id & seen_ood)
        detail = f"{len(leaked)} out-of-domain sequence(s) also in domain, e.g. {leaked[0].split('|')}" if leaked \
            else f"{len(seen_id)} in-domain and {len(seen_ood)} out-of-domain sequences, disjoint"
        return Check(self.data.config, "held-out sequences", not leaked, detail)

    def _unique_check(self) -> Check:
        keys = np.concatenate(self.keys) if self.keys else np.zeros((0, 2), np.uint64)
        order = np.lexsort((keys[:, 1], keys[:, 0]))
        ordered = keys[order]
        repeats = np.flatnonzero(np.all(ordered[1:] == ordered[:-1], axis=1))
        if len(repeats):
            first, again = sorted(order[repeats[0]: repeats[0] + 2])
            detail = (f"{len(repeats)} repeated (input, sequence) pairs, e.g. {self._place(again)} repeats "
                      f"{self._place(first)}")
        else:
            detail = f"{len(keys)} distinct (input, sequence) pairs across {len(self.sequences)} splits"
        return Check(self.data.config, "unique (input, sequence)", not len(repeats), detail)

    def _place(self, row: int) -> str:
        """``split[index]`` of the ``row``-th row taken in."""
        for split, start, count in self.places:
            if row < count:
                return f"{split}[{start + row}]"
            row -= count
        raise IndexError(row)

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
                     f"{scope}: inputs redrawn from their bank objects, outputs replayed by the engine"
                     + (", every frame re-derived step by step" if self.frames else "")
                     + (", every object frame re-derived step by step" if self.object_frames else "") + ", all equal")

    def _determinism_check(self) -> Check:
        return self.determinism.check(self._bank_fix() if self.other_bank else None)

    def _bank_fix(self) -> str:
        return ("built with another object bank than the installed one; install the cogen version of the manifest "
                f"({self.data.manifest['versions']['cogen']}) to replay or regenerate it")


def rederive_outputs(table, bank: tuple, rows: np.ndarray | None = None) -> np.ndarray:
    """Outcome code of each of ``rows`` of ``table`` (default all; 0: replayed and equal; see
    ``_OUTCOMES``), with the engine."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from cogen.engine.scene import replay_scenes
    from cogen.families.cogitao.build import _names_by_token
    from cogen.kit.arrow import read_grids, read_lists

    inputs, outputs = read_grids(table.column("input")), read_grids(table.column("output"))
    names, token_starts = read_lists(table.column("transformations"))
    tokens = pc.index_in(pa.array(names, pa.string()), value_set=pa.array(list(_names_by_token()), pa.string()))
    ids, object_starts = read_lists(table.column("object_ids"))
    pairs, pair_starts = read_lists(table.column("object_positions"))
    coordinates, pair_offsets = read_lists(pairs)
    counts = table.column("n_objects").to_numpy(zero_copy_only=False).astype(np.int64)
    rows = np.arange(table.num_rows) if rows is None else np.asarray(rows, np.int64)
    sound = inputs.regular & outputs.regular & np.all(inputs.sizes == outputs.sizes, axis=1)
    sound &= (np.diff(object_starts) == counts) & (np.diff(pair_starts) == counts)
    outcomes = np.full(len(rows), _SHAPES_DIFFER, np.int64)
    replayable = np.flatnonzero(sound[rows])
    if len(replayable) and np.all(np.diff(pair_offsets) == 2):
        outcomes[replayable] = replay_scenes(
            rows[replayable], inputs.sizes, inputs.cells, inputs.starts, outputs.cells, outputs.starts,
            tokens.fill_null(-1).to_numpy(zero_copy_only=False), token_starts, ids, coordinates.reshape(-1, 2),
            object_starts, bank)
    if "frames" in table.column_names:
        _rederive_frames(table, bank, rows, outcomes, (inputs.sizes, tokens, token_starts, ids, coordinates,
                                                      object_starts))
    if "object_boxes" in table.column_names:
        _rederive_object_frames(table, bank, rows, outcomes, (inputs.sizes, tokens, token_starts, ids, coordinates,
                                                             object_starts))
    return outcomes


def _rederive_frames(table, bank: tuple, rows: np.ndarray, outcomes: np.ndarray, scene: tuple) -> None:
    """Mark in ``outcomes`` the replayed rows whose stored frames are not, step by step, the engine's
    (frame 0 the input, frame t + 1 the engine's step t from frame t; the last frame is then the output)."""
    from cogen.engine.scene import replay_frames
    from cogen.families.cogitao.frames import read_frames

    sizes, tokens, token_starts, ids, coordinates, object_starts = scene
    frames, frame_offsets = read_frames(table.column("frames"))
    owner = np.repeat(np.arange(table.num_rows), np.diff(frame_offsets))
    sound = np.ones(table.num_rows, bool)
    np.logical_and.at(sound, owner, frames.regular & np.all(frames.sizes == sizes[owner], axis=1))
    checked = _sound_rows(outcomes, rows, sound, _SHAPES_DIFFER)
    if not len(checked):
        return
    status = replay_frames(rows[checked], sizes, tokens.fill_null(-1).to_numpy(zero_copy_only=False), token_starts,
                           ids, coordinates.reshape(-1, 2), object_starts, frames.cells, frames.starts,
                           frame_offsets, bank)
    codes = np.array([0, _FIRST_FRAME_DIFFERS, _FRAME_DIFFERS, _FRAME_DIFFERS, _FRAME_DIFFERS], np.int64)
    outcomes[checked] = codes[status]


def _sound_rows(outcomes: np.ndarray, rows: np.ndarray, sound: np.ndarray, code: int) -> np.ndarray:
    """Positions in ``rows`` still replayed (outcome 0) whose stored columns are ``sound`` (by table
    row); the others still replayed get ``code``."""
    checked = np.flatnonzero(outcomes == 0)
    outcomes[checked[~sound[rows[checked]]]] = code
    return checked[sound[rows[checked]]]


def _rederive_object_frames(table, bank: tuple, rows: np.ndarray, outcomes: np.ndarray, scene: tuple) -> None:
    """Mark in ``outcomes`` the replayed rows whose stored object frames are not, step by step, the engine's
    (step 0 the objects placed from the bank, step t + 1 the engine's step t of step t's objects; rendering
    them gives the input, the frames and the output, which are checked against the same engine)."""
    from cogen.engine.scene import replay_objects
    from cogen.families.cogitao.frames import read_object_frames

    sizes, tokens, token_starts, ids, coordinates, object_starts = scene
    stored = read_object_frames(table.column("object_boxes"), table.column("object_grids"))
    depths = np.diff(token_starts)
    sound = stored.sound & (np.diff(stored.objects) == np.diff(object_starts))
    if sound.any():
        owner = np.repeat(np.arange(table.num_rows), np.diff(stored.objects))
        steps_ok = np.ones(table.num_rows, bool)
        np.logical_and.at(steps_ok, owner, np.diff(stored.steps) == depths[owner] + 1)
        sound &= steps_ok
    checked = _sound_rows(outcomes, rows, sound, _OBJECT_FRAMES_UNSOUND)
    if not len(checked):
        return
    status = replay_objects(rows[checked], sizes, tokens.fill_null(-1).to_numpy(zero_copy_only=False), token_starts,
                            ids, coordinates.reshape(-1, 2), object_starts,
                            (stored.objects, stored.steps, stored.boxes, stored.cells, stored.starts), bank)
    codes = np.array([0, _FIRST_OBJECT_FRAME_DIFFERS, _OBJECT_FRAME_DIFFERS, _OBJECT_FRAME_DIFFERS,
                      _OBJECT_FRAME_DIFFERS], np.int64)
    outcomes[checked] = codes[status]
