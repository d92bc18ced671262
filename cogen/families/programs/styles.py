"""Programs of known structure that reproduce a function exactly: oracles for the scorer.

Each style writes a correct program ``def f(s: str) -> str`` for one function (its cell groups
and patterns) the way a model might, and its L(P⁺) follows from the counting rules:

==================  ==========================================================  =======
style               program                                                     L(P⁺)
==================  ==========================================================  =======
``letter_dicts``    one dict per character, its two letters -> its 4 cells        40
``conditionals``    ``part = "<4>" if s[i] == "A" else "<4>"`` per character      40
``if_else``         an ``if``/``else`` statement per character                    40
``pair_dicts``      two dicts keyed by pairs of characters, 8 cells each         80
``if_tree``         nested ``if``/``else`` on all four characters, 16 leaves     320
``enumeration``     one dict of all 16 samples                                    320
==================  ==========================================================  =======

Every style lies between L_s = 40 and L_z = 320 (the tests check this with Hypothesis on random
functions of every setting), and runs with E = 0. :func:`corrupt` injects a known number of
errors into an ``enumeration`` program.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from cogen.families.programs.functions import CHARACTERS, INPUTS, LETTERS, SIZE

__all__ = ["EXPECTED_LENGTH", "STYLES", "corrupt", "program"]


def _cells(groups: np.ndarray) -> list[list[int]]:
    """The cells (row-major indices) of each character's group."""
    return [np.flatnonzero(np.asarray(groups).reshape(-1) == i).tolist() for i in range(CHARACTERS)]


def _part(patterns, i: int, letter: int) -> str:
    """What letter ``letter`` (0 first, 1 second) of character ``i`` writes on its 4 cells."""
    return "".join("*" if bool(v) != bool(letter) else "." for v in np.asarray(patterns)[i])


def _assemble(groups) -> list[str]:
    """Lines that place four 4-cell parts on the grid and return it (no letters, no cell values)."""
    return [f"GROUPS = {_cells(groups)}",
            "",
            "",
            "def place(parts):",
            "    grid = [None] * 16",
            "    for cells, part in zip(GROUPS, parts):",
            "        for cell, value in zip(cells, part):",
            "            grid[cell] = value",
            "    return '\\n'.join(''.join(grid[r * 4:(r + 1) * 4]) for r in range(4))",
            ""]


def letter_dicts(groups, patterns) -> str:
    lines = _assemble(groups)
    for i in range(CHARACTERS):
        first, second = LETTERS[2 * i], LETTERS[2 * i + 1]
        lines.append(f"PART_{i} = {{{first!r}: {_part(patterns, i, 0)!r}, {second!r}: {_part(patterns, i, 1)!r}}}")
    lines += ["", "", "def f(s):", "    return place([PART_0[s[0]], PART_1[s[1]], PART_2[s[2]], PART_3[s[3]]])"]
    return "\n".join(lines) + "\n"


def conditionals(groups, patterns) -> str:
    lines = [*_assemble(groups), "", "def f(s):"]
    for i in range(CHARACTERS):
        lines.append(f"    part_{i} = {_part(patterns, i, 0)!r} if s[{i}] == {LETTERS[2 * i]!r} "
                     f"else {_part(patterns, i, 1)!r}")
    lines.append("    return place([part_0, part_1, part_2, part_3])")
    return "\n".join(lines) + "\n"


def if_else(groups, patterns) -> str:
    lines = [*_assemble(groups), "", "def f(s):", "    parts = []"]
    for i in range(CHARACTERS):
        lines += [f"    if s[{i}] == {LETTERS[2 * i]!r}:", f"        parts.append({_part(patterns, i, 0)!r})",
                  "    else:", f"        parts.append({_part(patterns, i, 1)!r})"]
    lines.append("    return place(parts)")
    return "\n".join(lines) + "\n"


def pair_dicts(groups, patterns) -> str:
    lines = _assemble(groups)
    for name, (a, b) in (("LEFT", (0, 1)), ("RIGHT", (2, 3))):
        entries = []
        for x in (0, 1):
            for y in (0, 1):
                key = (LETTERS[2 * a + x], LETTERS[2 * b + y])
                entries.append(f"{key!r}: {(_part(patterns, a, x), _part(patterns, b, y))!r}")
        lines.append(f"{name} = {{{', '.join(entries)}}}")
    lines += ["", "", "def f(s):", "    return place([*LEFT[(s[0], s[1])], *RIGHT[(s[2], s[3])]])"]
    return "\n".join(lines) + "\n"


def _grid(groups, patterns, text: str) -> str:
    bits = [text[i] != LETTERS[2 * i] for i in range(CHARACTERS)]
    cells = ["."] * (SIZE * SIZE)
    for i, group in enumerate(_cells(groups)):
        for cell, value in zip(group, _part(patterns, i, int(bits[i])), strict=True):
            cells[cell] = value
    return "\n".join("".join(cells[r * SIZE:(r + 1) * SIZE]) for r in range(SIZE))


def if_tree(groups, patterns) -> str:
    lines = ["def f(s):"]

    def branch(prefix: str, depth: int) -> None:
        indent = "    " * (depth + 1)
        if depth == CHARACTERS:
            lines.append(f"{indent}return {_grid(groups, patterns, prefix)!r}")
            return
        lines.append(f"{indent}if s[{depth}] == {LETTERS[2 * depth]!r}:")
        branch(prefix + LETTERS[2 * depth], depth + 1)
        lines.append(f"{indent}else:")
        branch(prefix + LETTERS[2 * depth + 1], depth + 1)

    branch("", 0)
    return "\n".join(lines) + "\n"


def enumeration(groups, patterns) -> str:
    entries = [f"    {text!r}: {_grid(groups, patterns, text)!r}," for text in INPUTS]
    return "\n".join(["TABLE = {", *entries, "}", "", "", "def f(s):", "    return TABLE[s]"]) + "\n"


#: Style name -> ``program(groups, patterns) -> source``.
STYLES: dict[str, Callable] = {"letter_dicts": letter_dicts, "conditionals": conditionals, "if_else": if_else,
                               "pair_dicts": pair_dicts, "if_tree": if_tree, "enumeration": enumeration}
#: L(P⁺) of each style (the counting rules give these exactly, whatever the function).
EXPECTED_LENGTH = {"letter_dicts": 40, "conditionals": 40, "if_else": 40, "pair_dicts": 80, "if_tree": 320,
                   "enumeration": 320}


def program(style: str, groups, patterns) -> str:
    """The source of a correct program of ``style`` for the function with these groups and patterns."""
    if style not in STYLES:
        from cogen.errors import UnknownNameError

        raise UnknownNameError("program style", style, STYLES)
    return STYLES[style](groups, patterns)


def corrupt(groups, patterns, wrong: Sequence[int]) -> str:
    """An ``enumeration`` program whose samples ``wrong`` (indices into the 16 inputs) have their
    first cell flipped: exactly ``len(set(wrong))`` errors."""
    wrong = set(wrong)
    entries = []
    for k, text in enumerate(INPUTS):
        grid = _grid(groups, patterns, text)
        if k in wrong:
            grid = ("*" if grid[0] == "." else ".") + grid[1:]
        entries.append(f"    {text!r}: {grid!r},")
    return "\n".join(["TABLE = {", *entries, "}", "", "", "def f(s):", "    return TABLE[s]"]) + "\n"
