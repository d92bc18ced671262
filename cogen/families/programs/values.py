"""What counts as an input value and an output value in a program's source (seed 003, App. A; decision 2
as amended in ``docs/evaluation.md``).

* **Input values**: each letter of a *word* of the letters A-H in a string constant (a maximal run of
  letters that holds no other letter: ``"ACEG"`` holds 4, ``"BAD INPUT"`` holds B, A, D); each letter
  is one value of one component (A/B: 0, C/D: 1, E/F: 2, G/H: 3). A string with several such words
  and output values (16 pairs pasted as text) is a table: each word is its own combination
  (:func:`words`). The atomic units of a dict key that encodes an input as bits (a tuple of up to 4
  0/1 or booleans, or a string of up to 4 ``0``/``1``) are input values too, one per position
  (:func:`key_units`).
* **Output values**: each ``.`` or ``*`` in a string constant; each cell of a string of 4 to 16
  ``0``/``1`` digits (the grid written as bits); each cell of a *grid display*, a list or tuple of 4
  or 16 cells (0/1, booleans, one-character strings other than A-H) or of 4 rows of 4 cells
  (:func:`output_count`, :func:`grid_cells`).
* **Data hidden in literals** (issue 34: an enumeration of the 16 samples hidden in one integer
  scored C = 100) counts as output values too, one per bit, since each cell of the grid is one bit
  (:func:`literal_bits`, :func:`hidden_bits`): an integer literal above :data:`SMALL_INT` (indices,
  sizes and shifts up to 16 are free) counts its binary digits, a float the binary digits of its exact
  numerator, a bytes literal 8 per byte; in a string, a word (a run without spaces) of 4 or more
  characters over two symbols counts one per character (a grid in any two symbols: ``"xoox"``, or 0/1
  longer than 16), a word longer than :data:`BLOB_WORD` characters counts the bits per character of the
  smallest usual alphabet that writes it (decimal 3.32, hex 4, base64 6, printable ASCII 6.55, else 8:
  an encoded blob), and any other character outside printable ASCII counts 8 (an escaped byte).
"""

from __future__ import annotations

import ast
import math
import re

__all__ = ["BLOB_WORD", "SMALL_INT", "Token", "grid_cells", "hidden_bits", "is_int", "key_units", "letters",
           "literal_bits", "output_count", "token_text", "words"]

#: Integer literals up to this (in absolute value) are free: indices, sizes and shifts of a 4x4 grid.
SMALL_INT = 16
#: Words of a string longer than this are read as encoded data (a grid of 16 cells fits in 16 characters).
BLOB_WORD = 16

# A value: (component, letter) for an input value; (component, frozenset of letters) for the hypothetical
# value of an ``else``; (position, "=0") or (position, "=1") for a bit of an encoded dict key.
Token = tuple
_WORD = re.compile(r"[A-Za-z]+")
_INPUT_LETTERS = frozenset("ABCDEFGH")
_NONE: frozenset = frozenset()


def _string(node: ast.AST) -> str | None:
    return node.value if type(node) is ast.Constant and type(node.value) is str else None


def words(node: ast.AST) -> list[frozenset]:
    """The input values of each A-H word of a string constant (none for other nodes)."""
    text = _string(node)
    if not text:
        return []
    return [frozenset(((ord(c) - 65) // 2, c) for c in word) for word in _WORD.findall(text[:100_000])
            if set(word) <= _INPUT_LETTERS]


def letters(node: ast.AST) -> frozenset:
    """All input values of a string constant."""
    found = words(node)
    return frozenset().union(*found) if found else _NONE


def is_int(node: ast.AST) -> bool:
    """An integer literal (``-1`` included)."""
    return isinstance(node, ast.Constant) and type(node.value) is int or \
        isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and is_int(node.operand)


def _cell(node: ast.AST) -> bool:
    if not isinstance(node, ast.Constant):
        return False
    value = node.value
    if type(value) is bool or type(value) is int:
        return value in (0, 1)
    return type(value) is str and len(value) == 1 and value not in _INPUT_LETTERS and not value.isspace()


def grid_cells(node: ast.AST) -> int | None:
    """The cells of a grid display (4 or 16 cells, or 4 rows of 4), or None."""
    if not isinstance(node, (ast.List, ast.Tuple)):
        return None
    elements = node.elts
    if len(elements) in (4, 16) and all(_cell(e) for e in elements):
        return len(elements)
    if len(elements) == 4 and all(isinstance(e, (ast.List, ast.Tuple)) and len(e.elts) == 4 and
                                  all(_cell(c) for c in e.elts) for e in elements):
        return 16
    return None


def _bit_cells(text: str) -> int:
    cells = "".join(text.split())
    return len(cells) if 4 <= len(cells) <= 16 and len(cells) % 4 == 0 and set(cells) <= {"0", "1"} else 0


def literal_bits(value) -> int:
    """Bits of data a number or bytes constant holds (0 for a small integer, a boolean, None, a string)."""
    kind = type(value)
    if kind is int:
        return abs(value).bit_length() if abs(value) > SMALL_INT else 0
    if kind is float:
        return literal_bits(value.as_integer_ratio()[0]) if math.isfinite(value) else 0
    if kind is complex:
        return literal_bits(value.real) + literal_bits(value.imag)
    if kind is bytes:
        return 8 * len(value)
    return 0


#: Usual alphabets of encoded data, smallest first, with the bits each character carries.
_ALPHABETS = ((frozenset("0123456789"), math.log2(10)), (frozenset("0123456789abcdefABCDEF"), 4.0),
              (frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_"), 6.0),
              (frozenset(chr(c) for c in range(33, 127)), math.log2(94)))


def _word_bits(word: str) -> int:
    symbols = set(word)
    if len(word) >= 4 and len(symbols) <= 2:
        return len(word)
    if len(word) > BLOB_WORD:
        per = next((bits for alphabet, bits in _ALPHABETS if symbols <= alphabet), 8.0)
        return math.ceil(len(word) * per)
    return sum(8 * len(c.encode("utf-8", "surrogatepass")) for c in word if not " " < c < "\x7f")


def hidden_bits(text: str) -> int:
    """Output values a string holds beyond its ``.``/``*`` and 0/1 grid cells (see the module docstring):
    its words without ``.`` or ``*`` (and, when the string is a 0/1 grid, without only 0/1) read as data."""
    grid = _bit_cells(text) > 0
    return sum(_word_bits(word) for word in text[:100_000].split()
               if "." not in word and "*" not in word and not (grid and set(word) <= {"0", "1"}))


def output_count(node: ast.AST) -> int:
    """Output values of a constant: a string's ``.`` and ``*``, its cells when it is a 0/1 grid, and the
    data it hides (:func:`hidden_bits`); the bits of a number or bytes literal (:func:`literal_bits`)."""
    if type(node) is not ast.Constant:
        return 0
    text = node.value
    if type(text) is not str:
        return literal_bits(text)
    return text.count(".") + text.count("*") + _bit_cells(text) + hidden_bits(text)


def key_units(node: ast.AST) -> frozenset:
    """Input values of a dict key that encodes an input as bits (see the module docstring)."""
    if isinstance(node, (ast.Tuple, ast.List)) and 1 <= len(node.elts) <= 4:
        bits = [e.value for e in node.elts if isinstance(e, ast.Constant) and type(e.value) in (int, bool)]
        if len(bits) == len(node.elts) and all(b in (0, 1) for b in bits):
            return frozenset((k, f"={int(b)}") for k, b in enumerate(bits))
    text = _string(node)
    if text and len(text) <= 4 and set(text) <= {"0", "1"}:
        return frozenset((k, f"={b}") for k, b in enumerate(text))
    return _NONE


def token_text(token: Token) -> str:
    """A value as ``explain`` prints it: ``A``; ``else@2{C,D}`` (position 2, C and D tested); ``1@3``
    (position 3 encoded as 1)."""
    component, value = token
    if isinstance(value, str):
        return f"{value[1:]}@{component + 1}" if value.startswith("=") else value
    return f"else@{component + 1}{{{','.join(sorted(value))}}}"
