"""Compositional-ARC checks of ``cogen verify``: layout, held-out triplets, unique grammars, split
rule, rotation convention, re-derived outputs and determinism — recomputed from the files and the manifest, never
trusted from the build.

Fed one decoded row group at a time (:class:`cogen.pipeline.verify.FamilyChecks`): the grids are
checked and re-derived group by group (:mod:`cogen.carc._replay` applies each row's grammar with
the primitives), the small grammar columns are kept for the checks that need every row.
"""

from __future__ import annotations

import json

import numpy as np

from cogen.carc.episodes import EpisodeSampler
from cogen.carc.grammar import KINDS, ROTATION_TYPE_8, Variant, triplet_name
from cogen.carc.split import held_out_triplets
from cogen.families.carc.build import pool_rows, regenerate_table
from cogen.families.carc.spec import CarcConfig, setting_from_dict
from cogen.kit.checks import Check, ConfigData, Determinism
from cogen.rng import retry_numbers

__all__ = ["CarcChecks", "checks", "grammar_strings", "rederive_examples"]

_META = ["episode", "triplet", "transformations", "transformation_kwargs", "shape_indicator", "color_indicator",
         "neighbor_indicator", "neighbor_color", "query_roles", "rotation_type_8"]
#: Example grids and the column naming their kinds (None: level-2 examples, the raw pool's shots).
_EXAMPLES = (("study_inputs", "study_outputs", "study_roles"), ("query_inputs", "query_outputs", "query_roles"),
             ("shot_inputs", "shot_outputs", None))
_OUTCOMES = ("replayed", "input is not one object (and N)", "a primitive cannot apply", "output differs from the "
             "primitives'", "unknown example kind or transformation")


def checks(data: ConfigData) -> CarcChecks:
    """The checks of one Compositional-ARC config (the family record's ``checks``)."""
    return CarcChecks(data)


class CarcChecks:
    """Layout, triplet, grammar, split-rule, re-derivation and determinism checks of one config."""

    def __init__(self, data: ConfigData):
        self.data = data
        study, queries = _expected_counts(data.manifest)
        self.expected = {"study_inputs": study, "study_outputs": study, "query_inputs": queries,
                         "query_outputs": queries}
        self.layout: list[str] = []
        self.meta: dict[str, list] = {}
        self.outcomes = np.zeros(len(_OUTCOMES), np.int64)
        self.wrong: list[str] = []
        self.sampled = 0
        self.determinism = Determinism(data, regenerate_table)

    def add(self, split: str, file: str, start: int, table) -> None:
        """Take in one decoded row group of ``file`` (rows ``start...`` of ``split``)."""
        problems = [f"{file}: {name}: {problem}" for name, count in self.expected.items()
                    if (problem := _grid_problem(table.column(name), count))]
        self.layout += problems
        self.meta.setdefault(split, []).append(table.select(_META))
        rows = np.flatnonzero(self.data.rederive_mask(split, start, table.num_rows))
        if len(rows) and not problems:
            self.sampled += len(rows)
            sample = table if len(rows) == table.num_rows else table.take(rows)
            outcomes, owners = rederive_examples(sample, self.data.manifest["spec"].get("rotation", "paper"))
            self.outcomes += np.bincount(outcomes, minlength=len(_OUTCOMES))
            for i in np.flatnonzero(outcomes)[: max(0, 3 - len(self.wrong))]:
                self.wrong.append(f"{file} row {start + rows[owners[i]]}: {_OUTCOMES[outcomes[i]]}")
        self.determinism.add(split, file, start, table)

    def finish(self) -> list[Check]:
        """The seven checks."""
        import pyarrow as pa

        manifest = self.data.manifest
        tables = {split: pa.concat_tables(parts) for split, parts in self.meta.items()}
        return [self._layout_check(), _triplet_check(manifest, tables), _grammar_check(manifest, tables),
                _rows_check(manifest, tables), _rotation_check(manifest, tables), self._rederive_check(),
                self.determinism.check()]

    def _layout_check(self) -> Check:
        study, queries = self.expected["study_inputs"], self.expected["query_inputs"]
        detail = self.layout[0] if self.layout else \
            f"{study} study examples and {queries} queries of 10x10 grids in every row"
        return Check(self.data.config, "episode layout", not self.layout, detail)

    def _rederive_check(self) -> Check:
        total, bad = int(self.outcomes.sum()), int(self.outcomes[1:].sum())
        if bad:
            return Check(self.data.config, "re-derived outputs", False,
                         f"{bad} of {total:,} examples do not replay: " + "; ".join(self.wrong))
        rows = sum(len(t) for parts in self.meta.values() for t in parts)
        scope = "every example" if self.data.full or self.sampled == rows else \
            f"the {total:,} examples of a sample of {self.sampled:,} rows (`cogen verify --full`: every row)"
        return Check(self.data.config, "re-derived outputs", True,
                     f"{scope}: each output re-derived from its input with the row's grammar, all equal")


def _expected_counts(manifest: dict) -> tuple[int, int]:
    spec, kind = manifest["spec"], manifest["kind"]
    if kind == "static":
        return 0, 1
    layout = spec["layout"]
    study = layout["shots"] if kind == "3shot" else 3 * (layout["primitives"] + layout["compositions"])
    return study, layout["queries"]


def _grid_problem(column, per_row: int) -> str | None:
    """Why a ``list<list<list<int8>>>`` column is not ``per_row`` 10x10 grids of 0..9 per row (or None)."""
    grids = column.combine_chunks()
    if np.any(np.diff(grids.offsets.to_numpy()) != per_row):
        return f"not {per_row} grids in every row"
    rows = grids.values
    if np.any(np.diff(rows.offsets.to_numpy()) != 10) or np.any(np.diff(rows.values.offsets.to_numpy()) != 10):
        return "a grid is not 10x10"
    cells = rows.values.values.to_numpy(zero_copy_only=False)
    if cells.size and (cells.min() < 0 or cells.max() > 9):
        return "a cell is outside 0..9"
    return None


def _triplet_check(manifest: dict, tables: dict) -> Check:
    if manifest["kind"] not in ("systematicity", "3shot"):
        return Check(manifest["config"], "held-out triplets", True, f"{manifest['kind']} config: no held-out triplets")
    held, train = held_out_triplets(manifest["split_seed"], manifest["spec"]["split"]["held_out"])
    held_names, train_names = {triplet_name(t) for t in held}, {triplet_name(t) for t in train}
    seen = {split: set(table.column("triplet").to_pylist()) for split, table in tables.items()}
    evaluation = set().union(*(seen[s] for s in seen if s != "train"))
    problems = []
    if [list(t) for t in held] != manifest.get("held_out_triplets"):
        problems.append(f"the manifest's held-out triplets differ from seed {manifest['split_seed']}'s")
    if seen.get("train", set()) & evaluation:
        problems.append(f"triplets in train and evaluation: {sorted(seen['train'] & evaluation)}")
    if not evaluation <= held_names or not seen.get("train", set()) <= train_names:
        problems.append("a split holds a triplet of the other side")
    detail = "; ".join(problems) or \
        f"held out {sorted(held_names)}; train uses {len(seen.get('train', ()))} other triplets"
    return Check(manifest["config"], "held-out triplets", not problems, detail)


def grammar_strings(table) -> list[str]:
    """One canonical string per row naming its grammar: role types and kwargs, S, C, N's shape and colour
    (N's position is not part of a grammar, as in the reference's hash)."""
    columns = [table.column(name).to_pylist() for name in
               ("transformations", "transformation_kwargs", "shape_indicator", "color_indicator",
                "neighbor_indicator", "neighbor_color")]
    strings = []
    for types, kwargs, shape, color, neighbor, neighbor_color in zip(*columns, strict=True):
        r0, c0 = min(r for r, _ in neighbor), min(c for _, c in neighbor)
        n_shape = sorted((r - r0, c - c0) for r, c in neighbor)
        strings.append(f"{types}|{kwargs}|{sorted(map(tuple, shape))}|{color}|{n_shape}|{neighbor_color}")
    return strings


def _grammar_check(manifest: dict, tables: dict) -> Check:
    episodes = {split: table.column("episode").to_pylist() for split, table in tables.items()}
    grammars = {split: grammar_strings(table) for split, table in tables.items()}
    if manifest["kind"] == "static":
        pairs = {(e, g) for split in tables for e, g in zip(episodes[split], grammars[split], strict=True)}
        ok = len({e for e, _ in pairs}) == len({g for _, g in pairs}) == len(pairs)
        return Check(manifest["config"], "unique grammars", ok, f"{len(pairs)} episodes, one grammar each")
    seen: dict[str, str] = {}
    repeats = []
    for split in tables:
        for i, grammar in enumerate(grammars[split]):
            if grammar in seen:
                repeats.append(f"{split}[{i}] repeats the grammar of {seen[grammar]}")
            seen[grammar] = f"{split}[{i}]"
    all_episodes = [e for split in tables for e in episodes[split]]
    if len(set(all_episodes)) != len(all_episodes):
        repeats.append("an episode appears twice")
    detail = repeats[0] if repeats else f"{len(seen)} distinct grammars in {len(all_episodes)} episodes"
    return Check(manifest["config"], "unique grammars", not repeats, detail)


def _rows_check(manifest: dict, tables: dict) -> Check:
    """Each split holds exactly the episodes the split rule picks, in pool order."""
    if manifest["kind"] == "static":
        held = set(tables["test"].column("episode").to_pylist())
        leaked = [episode for episode, roles in zip(tables["train"].column("episode").to_pylist(),
                                                    tables["train"].column("query_roles").to_pylist(), strict=True)
                  if episode in held and roles[0] == KINDS[-1]]
        detail = f"{len(leaked)} held-out queries in train (episodes {sorted(set(leaked))})" if leaked else \
            f"held-out episode {sorted(held)}'s queries only in test"
        return Check(manifest["config"], "split rule", not leaked, detail)
    setting = setting_from_dict(manifest["spec"])
    retries = retry_numbers(manifest.get("pool_regenerated", []), 0, setting.episodes)
    expected = pool_rows(setting, EpisodeSampler.from_setting(setting), retries,
                         CarcConfig(manifest["config"], manifest["kind"], manifest.get("split_seed")))
    wrong = [split for split, table in tables.items()
             if not np.array_equal(table.column("episode").to_numpy(), expected.get(split, np.zeros(0)))]
    detail = f"splits {wrong} differ from the split rule" if wrong else \
        ", ".join(f"{s} {len(e)}" for s, e in expected.items()) + " episodes, as the split rule picks"
    return Check(manifest["config"], "split rule", not wrong, detail)


def rederive_examples(table, rotation: str = "paper") -> tuple[np.ndarray, np.ndarray]:
    """Outcome code of every study example and query of ``table`` (0: re-derived and equal; see
    ``_OUTCOMES``) and the row each belongs to; the grids must be 10x10 (the layout check)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from cogen.carc._replay import replay

    params, neighbors, ncolors = _row_grammars(table, rotation)
    status, owners = [], []
    for grid_in, grid_out, roles in _EXAMPLES:
        if grid_in not in table.column_names:
            continue
        counts = np.diff(table.column(grid_in).combine_chunks().offsets.to_numpy())
        if not counts.sum():
            continue
        rows = np.repeat(np.arange(table.num_rows), counts)
        if roles is None:
            kinds = np.full(len(rows), len(KINDS) - 1, np.int64)
        else:
            names = pa.array(table.column(roles).combine_chunks().flatten())
            kinds = pc.index_in(names, value_set=pa.array(KINDS)).fill_null(-1).to_numpy(zero_copy_only=False)
        outcome = np.zeros(len(rows), np.int64)
        replay(_grids(table.column(grid_in)), _grids(table.column(grid_out)), np.ascontiguousarray(kinds, np.int64),
               rows, params, neighbors, ncolors, outcome)
        status.append(outcome)
        owners.append(rows)
    if not status:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(status), np.concatenate(owners)


def _grids(column) -> np.ndarray:
    """A ``list<list<list<int8>>>`` column of 10x10 grids as one (m, 10, 10) array."""
    cells = column.combine_chunks().flatten().flatten().flatten()
    return np.ascontiguousarray(cells.to_numpy(zero_copy_only=False), np.int8).reshape(-1, 10, 10)


def _row_grammars(table, rotation: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: the (type, a, b) of each role as the kernels take them (type -1 when unreadable),
    N's cells as a 10x10 mask, N's colour."""
    names = table.column("transformations").combine_chunks().flatten().to_pylist()
    kwargs = table.column("transformation_kwargs").combine_chunks().flatten().to_pylist()
    known: dict[tuple, tuple[int, int, int]] = {}
    params = [known[key] if (key := (name, text)) in known else known.setdefault(key, _params(name, text, rotation))
              for name, text in zip(names, kwargs, strict=True)]
    params_array = np.array(params, np.int64).reshape(-1, 9) if len(params) == 3 * table.num_rows else \
        np.full((table.num_rows, 9), -1, np.int64)
    masks, unreadable = _neighbor_masks(table.column("neighbor_indicator"), table.num_rows)
    params_array[unreadable, 0] = -1
    ncolors = table.column("neighbor_color").to_numpy(zero_copy_only=False).astype(np.int64)
    return np.ascontiguousarray(params_array), masks, ncolors


def _neighbor_masks(column, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """N's cells of every row as a 10x10 mask, and the rows whose cells are not (row, col) pairs on the grid."""
    from cogen.kit.arrow import read_lists

    pairs, starts = read_lists(column)
    coordinates, pair_offsets = read_lists(pairs)
    masks, unreadable = np.zeros((rows, 10, 10), np.bool_), np.zeros(rows, bool)
    if np.any(np.diff(pair_offsets) != 2):
        unreadable[:] = True
        return masks, unreadable
    cells = coordinates.astype(np.int64).reshape(-1, 2)
    owners = np.repeat(np.arange(rows), np.diff(starts))
    inside = np.all((cells >= 0) & (cells < 10), axis=1)
    masks[owners[inside], cells[inside, 0], cells[inside, 1]] = True
    unreadable[owners[~inside]] = True
    return masks, unreadable


def _params(name, text, rotation: str) -> tuple[int, int, int]:
    try:
        return Variant(name, tuple(json.loads(text).items())).params(rotation)
    except (ValueError, KeyError, TypeError, AttributeError):
        return -1, 0, 0
def _rotation_check(manifest: dict, tables: dict) -> Check:
    """Every row says what ``rotation_type`` 8 does, as the spec's rotation mode decides."""
    expected = ROTATION_TYPE_8[manifest["spec"]["rotation"]]
    seen = set().union(*(set(table.column("rotation_type_8").to_pylist()) for table in tables.values()))
    wrong = sorted(seen - {expected})
    detail = f"rows say rotation_type 8 is {wrong}, the spec {expected}" if wrong else \
        f"rotation_type 8 is {expected} (rotation: {manifest['spec']['rotation']})"
    return Check(manifest["config"], "rotation convention", not wrong, detail)

