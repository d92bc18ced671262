"""Names and parameters of Compositional-ARC's visual grammars (pure Python, no Numba).

A *variant* is one transformation type with fixed keyword arguments, named as in the reference
code (``translation`` with ``direction: x, step_size: 1`` moves one cell to the right). An
episode's grammar gives one variant to each indicator role: shape (S), colour (C) and neighbour
(the indicator object N).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["KINDS", "KWARGS", "QUERY_MODES", "ROLES", "ROTATION_MODES", "ROTATION_TYPE_8", "TRANSFORMATIONS", "Variant",
           "expand_variants", "rotation_mode", "triplet_name"]

#: The five transformation types, in the reference's YAML order (the split shuffles triplets in this order).
TRANSFORMATIONS = ("translation", "mirror", "rotation", "set_color", "grow")
#: Keyword arguments of each type, in the reference's order, and the values a spec may list.
KWARGS: dict[str, dict[str, tuple]] = {
    "translation": {"direction": ("x", "y"), "step_size": tuple(s for s in range(-9, 10) if s)},
    "mirror": {"direction": ("x", "y")},
    "rotation": {"rotation_type": (0, 1, 8)},
    "set_color": {"new_color": (1, 2, 3, 4, 5, 6, 7, 8, 9)},
    "grow": {"direction": ("-x", "+x", "-y", "+y")},
}
#: The indicator roles, in composition order (shape, then colour, then neighbour).
ROLES = ("shape", "color", "neighbor")
#: Example kinds: the six study kinds in the reference's order, then the level-2 kind.
KINDS = ("shape", "color", "neighbor", "shape+color", "shape+neighbor", "color+neighbor", "shape+color+neighbor")
#: ``paper``: rotation_type 8 turns counter-clockwise, as the paper says; ``reference``: 8 is
#: clockwise like 0, as the public code does.
ROTATION_MODES = ("paper", "reference")
#: What ``rotation_type: 8`` does in each rotation mode (rows and exports say it in these words).
ROTATION_TYPE_8 = {"paper": "counter-clockwise", "reference": "clockwise"}
#: How an episode's grammar and examples are drawn. ``reference``: with the public generator's
#: distribution, whose restart unless 14 independently drawn query positions are all distinct
#: favours small shapes S and roomy indicator positions; study examples may repeat, as there.
#: ``distinct``: level-2 positions drawn without replacement from every valid one and study
#: examples that never repeat (cogen's first generator, byte for byte).
QUERY_MODES = ("reference", "distinct")

_GROW = {"-x": (-1, 0), "+x": (1, 0), "-y": (0, -1), "+y": (0, 1)}


@dataclass(frozen=True)
class Variant:
    """One transformation type with fixed keyword arguments (``kwargs`` in the reference's order)."""

    name: str
    kwargs: tuple[tuple[str, Any], ...]

    @property
    def code(self) -> int:
        """Index of the type in :data:`TRANSFORMATIONS` (the kernels' type code)."""
        return TRANSFORMATIONS.index(self.name)

    def params(self, rotation: str = "paper") -> tuple[int, int, int]:
        """``(type code, a, b)`` as the kernels take it.

        translation: (drow, dcol) — ``x`` moves columns (right for +), ``y`` rows (down for +);
        mirror: 0 flips rows (``x``, upside down), 1 flips columns (``y``); rotation: 0 clockwise,
        1 counter-clockwise; set_color: the new colour; grow: the (drow, dcol) of the copy.
        """
        kw = dict(self.kwargs)
        if self.name == "translation":
            step = kw["step_size"]
            return (self.code, 0, step) if kw["direction"] == "x" else (self.code, step, 0)
        if self.name == "mirror":
            return self.code, 0 if kw["direction"] == "x" else 1, 0
        if self.name == "rotation":
            kind = kw["rotation_type"]
            return self.code, int(kind == 1 or (kind == 8 and rotation == "paper")), 0
        if self.name == "set_color":
            return self.code, kw["new_color"], 0
        return (self.code, *_GROW[kw["direction"]])

    @property
    def label(self) -> str:
        """The reference split's function label, e.g. ``translation direction_x step_size_1``."""
        return " ".join([self.name, *(f"{key}_{value}" for key, value in self.kwargs)])

    @property
    def kwargs_json(self) -> str:
        """The kwargs as the reference's ``meta_data`` writes them: a JSON object in key order."""
        return json.dumps(dict(self.kwargs))


def expand_variants(transformations: Sequence[tuple[str, Sequence[tuple[str, Sequence]]]]) -> list[Variant]:
    """Every variant of every type: the product of each type's kwarg value lists, in spec order."""
    out = []
    for name, kwargs in transformations:
        keys = [key for key, _ in kwargs]
        for values in itertools.product(*(values for _, values in kwargs)):
            out.append(Variant(name, tuple(zip(keys, values, strict=True))))
    return out


def triplet_name(types: Sequence[str] | Mapping) -> str:
    """``translation+rotation+grow``: the episode's types in canonical order, joined by ``+``."""
    return "+".join(sorted(types, key=TRANSFORMATIONS.index))


def rotation_mode(rotation_type_8: str) -> str:
    """The rotation mode (``paper`` or ``reference``) whose ``rotation_type`` 8 turns as ``rotation_type_8`` says."""
    for mode, turn in ROTATION_TYPE_8.items():
        if turn == rotation_type_8:
            return mode
    raise ValueError(f"rotation_type_8 is {rotation_type_8!r}, not one of {', '.join(ROTATION_TYPE_8.values())}")
