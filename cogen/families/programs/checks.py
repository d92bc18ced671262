"""String-to-grid programs checks of ``cogen verify``, recomputed from the files, never trusted from the build:

* every function's defining law: the 16 inputs in lexicographic order; the cell groups disjoint and
  covering the grid, with the setting's geometry; the first letters write the patterns; flipping a
  letter flips exactly its cells; the numeric columns say what the text columns say;
* the functions of a config are distinct;
* determinism: shards regenerated from the manifest alone equal the stored ones.
"""

from __future__ import annotations

import numpy as np

from cogen.families.programs.build import ProgramsBuilder
from cogen.kit.checks import Check, ConfigData, FamilyChecks, UniqueKeys

__all__ = ["ProgramsChecks", "checks", "law_problems"]

_INPUTS = [a + b + c + d for a in "AB" for b in "CD" for c in "EF" for d in "GH"]  # written out, not imported
_BLOCK = np.array([[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3], [2, 2, 3, 3]])


def checks(data: ConfigData) -> ProgramsChecks:
    """The checks of one programs config (the family record's ``checks``)."""
    return ProgramsChecks(data)


class ProgramsChecks(FamilyChecks):
    """Law, distinctness and determinism checks of one programs config, fed decoded row groups."""

    builder = ProgramsBuilder

    def __init__(self, data: ConfigData):
        super().__init__(data)
        self.problems: list[str] = []
        self.functions = UniqueKeys("distinct functions", "functions")

    def take(self, split: str, file: str, start: int, table) -> None:
        """Check the laws of one decoded row group, and key its functions by their outputs."""
        self.problems += law_problems(table.to_pylist())
        self.functions.add(split, start, ["|".join(outputs) for outputs in table.column("outputs").to_pylist()])

    def results(self) -> list[Check]:
        """The law and distinctness checks."""
        law = self.check("function law", self.problems, f"{self.rows} functions: groups disjoint and covering, "
                                                        "flipping a letter flips exactly its cells")
        return [law, self.functions.check(self.config)]


def _bits(text: str) -> np.ndarray | None:
    lines = text.split("\n")
    if len(lines) != 4 or any(len(line) != 4 or set(line) - {".", "*"} for line in lines):
        return None
    return np.array([[c == "*" for c in line] for line in lines], np.uint8)


def _geometry_problem(setting: str, groups: np.ndarray, rows: list[int]) -> str | None:
    """Why ``groups`` (4x4 character per cell) does not have the setting's geometry (or None)."""
    whole_rows = {i: r for i in range(4) for r in range(4) if (groups[r] == i).all()}
    expected = {"horizontal": np.repeat(np.arange(4), 4).reshape(4, 4), "vertical": np.tile(np.arange(4), (4, 1)),
                "block": _BLOCK}.get(setting)
    if expected is not None:
        return None if (groups == expected).all() else f"groups are not the {setting} layout"
    if setting == "random_index":
        ok = len(whole_rows) == 4 and rows == [whole_rows[i] for i in range(4)]
        return None if ok else "a character does not control the whole row its character_rows entry names"
    if setting == "horizontal_random":
        kept = [i for i in range(4) if rows[i] >= 0]
        ok = len(kept) == 2 and all(rows[i] == i and whole_rows.get(i) == i for i in kept)
        return None if ok else "two characters must keep their own row (character r, row r), the others none"
    return None if setting == "random" else f"unknown setting {setting!r}"


def _row_problem(row: dict) -> str | None:
    if row["inputs"] != _INPUTS:
        return "the inputs are not the 16 strings in lexicographic order"
    groups = np.array(row["cell_groups"])
    if groups.shape != (4, 4) or sorted(np.bincount(groups.reshape(-1), minlength=4).tolist()) != [4, 4, 4, 4]:
        return "the cell groups are not 4 disjoint groups of 4 cells covering the grid"
    geometry = _geometry_problem(row["setting"], groups, row["character_rows"])
    if geometry:
        return geometry
    outputs = [_bits(text) for text in row["outputs"]]
    if len(outputs) != 16 or any(o is None for o in outputs):
        return "an output is not 4 lines of 4 '.'/'*'"
    outputs = np.stack(outputs)
    if not np.array_equal(outputs, np.array(row["sample_outputs"], np.uint8)):
        return "sample_outputs differ from outputs"
    bits = np.array([[("ACEG"[i] != s[i]) for i in range(4)] for s in _INPUTS], np.uint8)
    if not np.array_equal(np.array(row["sample_inputs"], np.uint8).reshape(16, 4), bits):
        return "sample_inputs differ from inputs"
    for i, pattern in enumerate(row["patterns"]):
        if "".join("*" if v else "." for v in outputs[0][groups == i]) != pattern:
            return f"the first letters do not write character {i}'s pattern"
    for i in range(4):
        flipped = np.arange(16) ^ (1 << (3 - i))
        if not ((outputs[flipped] ^ outputs) == (groups == i)).all():
            return f"flipping character {i} does not flip exactly its cells"
    return None


def law_problems(rows: list[dict]) -> list[str]:
    """``"<id>: <problem>"`` for every row that breaks its function's defining law."""
    return [f"{row['id']}: {problem}" for row in rows if (problem := _row_problem(row))]
