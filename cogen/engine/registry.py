"""The one registry of the 28 COGITAO transformations: ``TRANSFORMS``, name -> :class:`Transform`.

Every fact about a transformation lives in its record: the stable token id used in task codes,
its family, the bank properties the *initial* object must have, its algebra (order, inverse,
which quantities it preserves), a one-line description and a tiny worked example. The kernels
dispatch on the token; the tests check the algebra and the examples against the kernels; the
README table, the dataset card and ``cogen transforms`` are rendered from here.

This module is pure Python (no Numba), so specs and the CLI can import it cheaply.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from cogen.errors import UnknownNameError

__all__ = [
    "FAMILIES",
    "FAMILY_WRITERS",
    "IDENTITY_TOKEN",
    "TRANSFORMS",
    "WRITERS",
    "Example",
    "Transform",
    "from_token",
    "markdown_table",
    "resolve",
    "resolve_sequence",
    "sequence_tokens",
]

IDENTITY_TOKEN = 0
"""Token reserved for the identity step (padding of task codes); no transformation uses it."""

FAMILIES = ("translate", "rotate", "mirror", "crop", "color", "fill", "empty", "extend", "pad",
            "duplicate")
"""The paper's ten families, in the order of the reference table."""

WRITERS = ("move", "strided", "recolor", "fill", "empty", "extend", "pad", "tile")
"""The engine's ways of writing a result (see :data:`FAMILY_WRITERS`)."""

FAMILY_WRITERS: Mapping[str, str] = MappingProxyType({
    "translate": "move", "rotate": "strided", "mirror": "strided", "crop": "strided", "color": "recolor",
    "fill": "fill", "empty": "empty", "extend": "extend", "pad": "pad", "duplicate": "tile",
})
"""How the engine writes a transformation's result, by family: ``move`` the anchor only, a
``strided`` read of the box (turns, mirrors, crops), or a writer of its own. The kernels build
their per-token tables from :attr:`Transform.writer` and :attr:`Transform.retightens`, never
from token ranges, so a new transformation behaves as its family does."""

Rows = tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Example:
    """A tiny worked example: ``before`` becomes ``after`` and the anchor moves by ``shift``.

    Arrays are tight boxes written as nested tuples (0 = background); ``shift`` is
    (row change, column change) of the top-left corner.
    """

    before: Rows
    after: Rows
    shift: tuple[int, int] = (0, 0)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``before`` and ``after`` as int8 arrays."""
        return np.array(self.before, dtype=np.int8), np.array(self.after, dtype=np.int8)

    def text(self) -> str:
        """The example drawn side by side, e.g. ``1 2 3  ->  3 0`` (0 drawn as ``.``)."""
        left = [" ".join(str(v or ".") for v in row) for row in self.before]
        right = [" ".join(str(v or ".") for v in row) for row in self.after]
        width = max(map(len, left))
        lines = [f"{(left[k] if k < len(left) else ''):<{width}}  {'->' if k == 0 else '  '}  "
                 f"{right[k] if k < len(right) else ''}".rstrip()
                 for k in range(max(len(left), len(right)))]
        return "\n".join(lines + [f"(anchor moves by {self.shift})"])


@dataclass(frozen=True)
class Transform:
    """One transformation of one object (anchor row, anchor column, tight int8 box).

    Algebra fields are laws the tests check on random objects:

    * ``order``: smallest n > 0 with Tⁿ = identity on every object, or None if there is none.
    * ``inverse``: name of the transformation U with U(T(x)) = x and T(U(x)) = x for every x.
    * ``undone_by``: name of the transformation U with U(T(x)) = x for every x (a left inverse:
      ``crop_contours`` undoes ``pad_shape`` but ``pad_shape`` does not undo ``crop_contours``);
      defaults to ``inverse``.
    * ``self_inverse``: T is its own inverse (derived from ``inverse``).
    * ``idempotent``: T(T(x)) = T(x) for every x.
    * ``preserves_box``: the tight box keeps its height and width (the anchor may move).
    * ``preserves_colors``: the set of colours present is unchanged.
    * ``preserves_pixel_count``: the number of non-zero pixels is unchanged.
    * ``can_fail``: T may be impossible on some object (the engine then says "cannot apply").

    ``preconditions`` are (bank property, required value) pairs checked on the *initial* bank
    object of a sequence, whatever the step at which T occurs (as in the reference generator).
    """

    name: str
    token: int
    family: str
    description: str
    example: Example
    preconditions: tuple[tuple[str, bool], ...] = ()
    order: int | None = None
    inverse: str | None = None
    undone_by: str | None = None
    self_inverse: bool = field(init=False)
    idempotent: bool = False
    preserves_box: bool = False
    preserves_colors: bool = False
    preserves_pixel_count: bool = False
    can_fail: bool = False
    aliases: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "__doc__", f"{self.name}: {self.description}\n\n{self.example.text()}")
        object.__setattr__(self, "self_inverse", self.inverse == self.name)
        if self.inverse is not None and self.undone_by is None:
            object.__setattr__(self, "undone_by", self.inverse)

    @property
    def writer(self) -> str:
        """How the engine writes the result (:data:`FAMILY_WRITERS` of the family)."""
        return FAMILY_WRITERS[self.family]

    @property
    def retightens(self) -> bool:
        """True for crops: the box shrinks to the pixels kept (an empty result cannot apply)."""
        return self.family == "crop"

    def algebra(self) -> str:
        """Short human summary of the algebra fields, e.g. ``order 4; keeps colours, pixels``."""
        parts = []
        if self.order is not None:
            parts.append(f"order {self.order}")
        if self.self_inverse:
            parts.append("self-inverse")
        elif self.inverse:
            parts.append(f"inverse {self.inverse}")
        elif self.undone_by:
            parts.append(f"undone by {self.undone_by}")
        if self.idempotent:
            parts.append("idempotent")
        kept = [label for flag, label in ((self.preserves_box, "box"),
                                          (self.preserves_colors, "colours"),
                                          (self.preserves_pixel_count, "pixels")) if flag]
        if kept:
            parts.append("keeps " + ", ".join(kept))
        if self.can_fail:
            parts.append("can fail")
        return "; ".join(parts) or "-"

    def precondition_text(self) -> str:
        """Preconditions as ``name`` / ``not name``, comma separated (``-`` if none)."""
        return ", ".join(name if required else f"not {name}"
                         for name, required in self.preconditions) or "-"


_NOT_SHORT = (("is_shape_less_than_4_rows", False),)
_NOT_NARROW = (("is_shape_less_than_4_cols", False),)
_FILLABLE = (("is_shape_hollow", True), ("is_shape_evenly_colored", True))
_EMPTIABLE = (("is_shape_hollow", False), ("is_shape_not_fully_connected", False),
              ("is_shape_less_than_3_rows", False), ("is_shape_less_than_3_cols", False),
              ("is_shape_less_than_6_cell", False))
_RIGID = dict(preserves_box=True, preserves_colors=True, preserves_pixel_count=True)

_A = ((1, 2), (0, 3))                       # asymmetric, three colours
_B = ((1, 2, 3), (4, 0, 0))                 # not square
_RING = ((4, 4, 4), (4, 0, 4), (4, 4, 4))   # hollow, one colour
_TALL = ((1, 1), (1, 0), (0, 2), (0, 2))    # half-crops that need re-tightening
_WIDE = ((1, 1, 0, 0), (1, 0, 2, 2))
_L = ((1, 0), (1, 1))
_DIAG = ((1, 0), (0, 2))


def _move(name, token, shift, inverse, description):
    return Transform(name, token, "translate", description, Example(_A, _A, shift),
                     inverse=inverse, **_RIGID)


def _double(name, token, shift, after, undone_by, description):
    return Transform(name, token, "duplicate", description, Example(_DIAG, after, shift),
                     undone_by=undone_by, preserves_colors=True)


def _pad(name, token, after, shift, description, undone_by=None):
    return Transform(name, token, "pad", description, Example(_L, after, shift), undone_by=undone_by)


def _crop(name, token, before, after, shift, preconditions, description):
    return Transform(name, token, "crop", description, Example(before, after, shift),
                     preconditions=preconditions)


_RECORDS = (
    _move("translate_up", 1, (-1, 0), "translate_down", "Move the object up by one cell."),
    _move("translate_down", 2, (1, 0), "translate_up", "Move the object down by one cell."),
    _move("translate_left", 3, (0, -1), "translate_right", "Move the object left by one cell."),
    _move("translate_right", 4, (0, 1), "translate_left", "Move the object right by one cell."),
    Transform("rot90", 5, "rotate",
              "Rotate 90 degrees counter-clockwise (numpy rot90, k=1) keeping the top-left anchor.",
              Example(_B, ((3, 0), (2, 0), (1, 4))), order=4,
              preserves_colors=True, preserves_pixel_count=True,
              aliases=("rotate_90", "rotate90", "rot_90")),
    Transform("mirror_horizontal", 6, "mirror", "Flip upside-down (reverse the rows) in place.",
              Example(_B, ((4, 0, 0), (1, 2, 3))), order=2, inverse="mirror_horizontal",
              **_RIGID),
    Transform("mirror_vertical", 7, "mirror", "Flip left-right (reverse the columns) in place.",
              Example(_B, ((3, 2, 1), (0, 0, 4))), order=2, inverse="mirror_vertical",
              **_RIGID),
    _crop("crop_top_side", 8, _TALL, ((2,), (2,)), (2, 1), _NOT_SHORT,
          "Remove the top floor(h/2) rows; kept pixels stay put, the box re-tightens."),
    _crop("crop_bottom_side", 9, _TALL, ((1, 1), (1, 0)), (0, 0), _NOT_SHORT,
          "Keep the top ceil(h/2) rows; kept pixels stay put, the box re-tightens."),
    _crop("crop_left_side", 10, _WIDE, ((2, 2),), (1, 2), _NOT_NARROW,
          "Remove the left floor(w/2) columns; kept pixels stay put, the box re-tightens."),
    _crop("crop_right_side", 11, _WIDE, ((1, 1), (1, 0)), (0, 0), _NOT_NARROW,
          "Keep the left ceil(w/2) columns; kept pixels stay put, the box re-tightens."),
    Transform("crop_contours", 12, "crop",
              "Keep the box interior (drop the outer rows and columns); cannot apply if it is empty.",
              Example(((1, 1, 1, 1), (1, 2, 0, 1), (1, 0, 0, 1), (1, 1, 1, 1)), ((2,),), (1, 1)),
              preconditions=_NOT_SHORT + _NOT_NARROW, can_fail=True),
    Transform("change_shape_color", 13, "color",
              "Shift every colour c to (c mod 9) + 1, so 1->2, ..., 8->9, 9->1.",
              Example(((1, 9), (0, 5)), ((2, 1), (0, 6))), order=9, preserves_box=True,
              preserves_pixel_count=True,
              aliases=("change_object_color", "change_color")),
    Transform("fill_holes_same_color", 14, "fill",
              "If hollow, fill the holes and paint the whole object its most frequent colour; else identity.",
              Example(_RING, ((4, 4, 4), (4, 4, 4), (4, 4, 4))), preconditions=_FILLABLE,
              idempotent=True, preserves_box=True),
    Transform("fill_holes_different_color", 15, "fill",
              "If hollow, paint only the holes (most frequent colour mod 9) + 1; else identity.",
              Example(_RING, ((4, 4, 4), (4, 5, 4), (4, 4, 4))), preconditions=_FILLABLE,
              idempotent=True, preserves_box=True),
    Transform("empty_inside_pixels", 16, "empty",
              "Remove every pixel whose four orthogonal neighbours are all non-zero.",
              Example(((3, 3, 3), (3, 3, 3), (3, 3, 3)), ((3, 3, 3), (3, 0, 3), (3, 3, 3))),
              preconditions=_EMPTIABLE, idempotent=True, preserves_box=True),
    Transform("extend_contours_same_color", 17, "extend",
              "Grow by one cell on each side, copying the edge rows and columns (corners stay empty).",
              Example(_A, ((0, 1, 2, 0), (1, 1, 2, 2), (0, 0, 3, 3), (0, 0, 3, 0)), (-1, -1)),
              undone_by="crop_contours", preserves_colors=True,
              aliases=("extend_contours_same",)),
    Transform("extend_contours_different_color", 18, "extend",
              "Like extend_contours_same_color, added pixels in (most frequent colour mod 9) + 1.",
              Example(_A, ((0, 2, 2, 0), (2, 1, 2, 2), (0, 0, 3, 2), (0, 0, 2, 0)), (-1, -1)),
              undone_by="crop_contours",
              aliases=("extend_contours_different",)),
    _pad("pad_top", 19, ((8, 8), (1, 0), (1, 1)), (-1, 0), "Add a full-width row of colour 8 above."),
    _pad("pad_bottom", 20, ((1, 0), (1, 1), (9, 9)), (0, 0), "Add a full-width row of colour 9 below."),
    _pad("pad_left", 21, ((7, 1, 0), (7, 1, 1)), (0, -1), "Add a full-height column of colour 7 on the left."),
    _pad("pad_right", 22, ((1, 0, 6), (1, 1, 6)), (0, 0), "Add a full-height column of colour 6 on the right."),
    _pad("pad_shape", 23, ((7, 8, 8, 6), (7, 1, 0, 6), (7, 1, 1, 6), (7, 9, 9, 6)), (-1, -1),
         "Ring the box: rows 8 above and 9 below, columns 7 left and 6 right (corners 7 and 6).",
         "crop_contours"),
    _double("double_right", 24, (0, 0), ((1, 0, 1, 0), (0, 2, 0, 2)),
            "crop_right_side", "Repeat the box once to its right, no gap."),
    _double("double_left", 25, (0, -2), ((1, 0, 1, 0), (0, 2, 0, 2)),
            "crop_left_side", "Repeat the box once to its left, no gap."),
    _double("double_down", 26, (0, 0), ((1, 0), (0, 2), (1, 0), (0, 2)),
            "crop_bottom_side", "Repeat the box once below, no gap."),
    _double("double_up", 27, (-2, 0), ((1, 0), (0, 2), (1, 0), (0, 2)),
            "crop_top_side", "Repeat the box once above, no gap."),
    Transform("quadruple_shape", 28, "duplicate",
              "Tile the box 2x2 up and left; the original ends bottom-right.",
              Example(((1, 2),), ((1, 2, 1, 2), (1, 2, 1, 2)), (-1, -2)), preserves_colors=True,
              aliases=("quadruple",)),
)

TRANSFORMS: Mapping[str, Transform] = MappingProxyType({t.name: t for t in _RECORDS})
"""Read-only mapping config name -> :class:`Transform`, in token order (tokens 1..28)."""

_BY_TOKEN = (None,) + _RECORDS
_ALIASES = MappingProxyType({alias: t.name for t in _RECORDS for alias in t.aliases})


def resolve(name: str | Transform) -> Transform:
    """The record for a config name or alias (a :class:`Transform` passes through).

    Raises :class:`cogen.errors.UnknownNameError` listing close matches.
    """
    if isinstance(name, Transform):
        return name
    record = TRANSFORMS.get(name) or TRANSFORMS.get(_ALIASES.get(name, ""))
    if record is None:
        raise UnknownNameError("transformation", name, [*TRANSFORMS, *_ALIASES])
    return record


def resolve_sequence(names: Iterable[str | Transform]) -> tuple[Transform, ...]:
    """Resolve every name of a sequence (a single string is rejected, not split into letters)."""
    if isinstance(names, str):
        raise TypeError("resolve_sequence expects a sequence of names, not one string")
    return tuple(resolve(name) for name in names)


def from_token(token: int) -> Transform:
    """The record with this token id (1..28); token 0 is the identity and has no record."""
    if not 0 < token < len(_BY_TOKEN):
        raise UnknownNameError("transformation token", str(token), [])
    return _BY_TOKEN[token]


def sequence_tokens(names: Iterable[str | Transform]) -> np.ndarray:
    """Token ids of a sequence as a contiguous int64 array (what the scene kernel takes)."""
    return np.array([t.token for t in resolve_sequence(names)], dtype=np.int64)


def markdown_table() -> str:
    """The registry as a Markdown table (for the README and the dataset card)."""
    lines = ["| token | name | family | preconditions (initial object) | algebra | description |",
             "|---:|---|---|---|---|---|"]
    for t in TRANSFORMS.values():
        lines.append(f"| {t.token} | `{t.name}` | {t.family} | {t.precondition_text()} | {t.algebra()} "
                     f"| {t.description} |")
    return "\n".join(lines) + "\n"
