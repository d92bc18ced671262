"""A 3x5 pixel font (capitals, digits, ``_ - + > . ,``, space) to label preview bands without a font file.

Lower-case text is drawn in capitals; a character the font lacks is drawn as a filled box.
"""

from __future__ import annotations

import numpy as np

__all__ = ["GLYPHS", "text_bitmap"]

_ROWS = {
    "A": ".#. #.# ### #.# #.#", "B": "##. #.# ##. #.# ##.", "C": ".## #.. #.. #.. .##", "D": "##. #.# #.# #.# ##.",
    "E": "### #.. ##. #.. ###", "F": "### #.. ##. #.. #..", "G": ".## #.. #.# #.# .##", "H": "#.# #.# ### #.# #.#",
    "I": "### .#. .#. .#. ###", "J": "..# ..# ..# #.# .#.", "K": "#.# #.# ##. #.# #.#", "L": "#.. #.. #.. #.. ###",
    "M": "#.# ### ### #.# #.#", "N": "##. #.# #.# #.# #.#", "O": ".#. #.# #.# #.# .#.", "P": "##. #.# ##. #.. #..",
    "Q": ".#. #.# #.# ##. .##", "R": "##. #.# ##. #.# #.#", "S": ".## #.. .#. ..# ##.", "T": "### .#. .#. .#. .#.",
    "U": "#.# #.# #.# #.# ###", "V": "#.# #.# #.# #.# .#.", "W": "#.# #.# ### ### #.#", "X": "#.# #.# .#. #.# #.#",
    "Y": "#.# #.# .#. .#. .#.", "Z": "### ..# .#. #.. ###", "0": "### #.# #.# #.# ###", "1": ".#. ##. .#. .#. ###",
    "2": "##. ..# .#. #.. ###", "3": "##. ..# .#. ..# ##.", "4": "#.# #.# ### ..# ..#", "5": "### #.. ##. ..# ##.",
    "6": ".## #.. ### #.# ###", "7": "### ..# .#. .#. .#.", "8": "### #.# ### #.# ###", "9": "### #.# ### ..# ##.",
    "_": "... ... ... ... ###", "-": "... ... ### ... ...", " ": "... ... ... ... ...",
    "+": "... .#. ### .#. ...", ">": "#.. .#. ..# .#. #..", ".": "... ... ... ... .#.", ",": "... ... ... .#. #..",
}
#: Character -> its 5x3 boolean bitmap.
GLYPHS = {char: np.array([[c == "#" for c in row] for row in rows.split()], bool) for char, rows in _ROWS.items()}
_UNKNOWN = np.ones((5, 3), bool)


def text_bitmap(text: str, scale: int = 2) -> np.ndarray:
    """``text`` as a boolean bitmap, ``5 * scale`` pixels high, one blank column between characters."""
    columns = []
    for position, char in enumerate(text.upper()):
        if position:
            columns.append(np.zeros((5, 1), bool))
        columns.append(GLYPHS.get(char, _UNKNOWN))
    bitmap = np.hstack(columns) if columns else np.zeros((5, 0), bool)
    return bitmap.repeat(scale, axis=0).repeat(scale, axis=1)
