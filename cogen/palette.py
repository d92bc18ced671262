"""The ARC colour palette (0 = black background, 1-9 = colours), as hex strings and RGB bytes."""

from __future__ import annotations

ARC_HEX = (
    "#000000",  # 0 black (background)
    "#0074D9",  # 1 blue
    "#FF4136",  # 2 red
    "#2ECC40",  # 3 green
    "#FFDC00",  # 4 yellow
    "#AAAAAA",  # 5 grey
    "#F012BE",  # 6 magenta
    "#FF851B",  # 7 orange
    "#7FDBFF",  # 8 sky blue
    "#870C25",  # 9 maroon
)

ARC_RGB = tuple(tuple(int(h[i : i + 2], 16) for i in (1, 3, 5)) for h in ARC_HEX)
