"""String-to-grid programs' text for the dataset card: what a config shows."""

from __future__ import annotations

__all__ = ["programs_shift"]

_PROGRAM_LAYOUTS = {
    "horizontal": "character i controls row i",
    "block": "character i controls the i-th 2x2 quadrant (TL, TR, BL, BR)",
    "vertical": "character i controls column i",
    "random": "each character controls 4 random cells",
    "random_index": "each character controls a whole row, rows permuted at random",
    "horizontal_random": "two characters keep their own row, the other two share 8 random cells",
}


def programs_shift(manifest: dict) -> str:
    """String-to-grid programs: nothing is held out (all 16 pairs are shown); the setting's layout."""
    layout = _PROGRAM_LAYOUTS.get(manifest.get("kind", ""), "")
    return f"nothing held out: all 16 pairs shown, a program is scored; {layout}" if layout else ""
