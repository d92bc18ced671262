"""Compositional-ARC checks of ``cogen verify``: layout, held-out triplets, unique grammars, split
rule, rotation convention and determinism — recomputed from the files and the manifest, never
trusted from the build."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cogen.carc.episodes import EpisodeSampler
from cogen.carc.grammar import KINDS, ROTATION_TYPE_8, triplet_name
from cogen.carc.split import held_out_triplets
from cogen.pipeline.carc import pool_rows, regenerate_table
from cogen.pipeline.verify import Check, determinism_check
from cogen.specs.carc import CarcConfig, setting_from_dict

__all__ = ["checks", "grammar_strings"]

_META = ["episode", "triplet", "transformations", "transformation_kwargs", "shape_indicator", "color_indicator",
         "neighbor_indicator", "neighbor_color", "query_roles", "rotation_type_8"]


def checks(folder: Path, manifest: dict, shards_per_config: int) -> list[Check]:
    """Layout, triplet, grammar, split-rule, rotation and determinism checks of one Compositional-ARC config."""
    tables = {split: _read(folder, info["files"], _META) for split, info in manifest["splits"].items()}
    return [_layout_check(folder, manifest), _triplet_check(manifest, tables), _grammar_check(manifest, tables),
            _rows_check(manifest, tables), _rotation_check(manifest, tables),
            _determinism_check(folder, manifest, shards_per_config)]


def _read(folder: Path, files: list[str], columns: list[str]):
    import pyarrow as pa
    import pyarrow.parquet as pq

    return pa.concat_tables([pq.read_table(folder / f, columns=columns) for f in files])


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


def _layout_check(folder: Path, manifest: dict) -> Check:
    """Every row holds the expected 10x10 grids: leaf counts from the Parquet footers for all row
    groups, and the decoded grids of each split's first row group."""
    import pyarrow.parquet as pq

    study, queries = _expected_counts(manifest)
    expected = {"study_inputs": study, "study_outputs": study, "query_inputs": queries, "query_outputs": queries}
    problems = []
    for info in manifest["splits"].values():
        for position, file in enumerate(info["files"]):
            parquet = pq.ParquetFile(folder / file)
            problems += [f"{file}: {problem}" for problem in _leaf_count_problems(parquet.metadata, expected)]
            if position == 0 and parquet.num_row_groups:
                table = parquet.read_row_group(0, columns=list(expected))
                problems += [f"{file}: {name}: {problem}" for name, count in expected.items()
                             if (problem := _grid_problem(table.column(name), count))]
    detail = problems[0] if problems else f"{study} study examples and {queries} queries of 10x10 grids per row"
    return Check(manifest["config"], "episode layout", not problems, detail)


def _leaf_count_problems(metadata, expected: dict[str, int]) -> list[str]:
    """Row groups whose grid columns do not hold ``rows * count * 100`` cells (an empty list counts 1)."""
    problems = []
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for i in range(row_group.num_columns):
            name = row_group.column(i).path_in_schema.split(".")[0]
            if name in expected and row_group.column(i).num_values != row_group.num_rows * max(100 * expected[name], 1):
                problems.append(f"row group {group}: {name} holds {row_group.column(i).num_values} cells for "
                                f"{row_group.num_rows} rows of {expected[name]} grids")
    return problems


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
    for types, kwargs, shape, color, neighbor, neighbor_color in zip(*columns, strict=False):
        r0, c0 = min(r for r, _ in neighbor), min(c for _, c in neighbor)
        n_shape = sorted((r - r0, c - c0) for r, c in neighbor)
        strings.append(f"{types}|{kwargs}|{sorted(map(tuple, shape))}|{color}|{n_shape}|{neighbor_color}")
    return strings


def _grammar_check(manifest: dict, tables: dict) -> Check:
    episodes = {split: table.column("episode").to_pylist() for split, table in tables.items()}
    grammars = {split: grammar_strings(table) for split, table in tables.items()}
    if manifest["kind"] == "static":
        pairs = {(e, g) for split in tables for e, g in zip(episodes[split], grammars[split], strict=False)}
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
        detail = f"{len(leaked)} held-out queries in train" if leaked else \
            f"held-out episode {sorted(held)}'s queries only in test"
        return Check(manifest["config"], "split rule", not leaked, detail)
    setting = setting_from_dict(manifest["spec"])
    retries = np.zeros(setting.episodes, np.int64)
    for index, retry in manifest.get("pool_regenerated", []):
        retries[index] = retry
    expected = pool_rows(setting, EpisodeSampler.from_setting(setting), retries,
                         CarcConfig(manifest["config"], manifest["kind"], manifest.get("split_seed")))
    wrong = [split for split, table in tables.items()
             if not np.array_equal(table.column("episode").to_numpy(), expected.get(split, np.zeros(0)))]
    detail = f"splits {wrong} differ from the split rule" if wrong else \
        ", ".join(f"{s} {len(e)}" for s, e in expected.items()) + " episodes, as the split rule picks"
    return Check(manifest["config"], "split rule", not wrong, detail)


def _rotation_check(manifest: dict, tables: dict) -> Check:
    """Every row says what ``rotation_type`` 8 does, as the spec's rotation mode decides."""
    expected = ROTATION_TYPE_8[manifest["spec"]["rotation"]]
    seen = set().union(*(set(table.column("rotation_type_8").to_pylist()) for table in tables.values()))
    wrong = sorted(seen - {expected})
    detail = f"rows say rotation_type 8 is {wrong}, the spec {expected}" if wrong else \
        f"rotation_type 8 is {expected} (rotation: {manifest['spec']['rotation']})"
    return Check(manifest["config"], "rotation convention", not wrong, detail)


def _determinism_check(folder: Path, manifest: dict, shards_per_config: int) -> Check:
    return determinism_check(folder, manifest, shards_per_config, regenerate_table)