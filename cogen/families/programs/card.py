"""String-to-grid programs' text for the dataset card (:data:`CARD`): what its configs measure and show.

The family's paper has no public version yet, so the card describes it and cites none.
"""

from __future__ import annotations

from types import MappingProxyType

from cogen.kit.card import FamilyCard, fixed_paragraph

__all__ = ["CARD", "programs_shift"]

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


CARD = FamilyCard(
    shift=programs_shift,
    measures=fixed_paragraph("**String-to-grid programs ({settings}).** A model sees string-to-grid pairs and "
                             "explains them with a program, scored by its compositionality."),
    captions=MappingProxyType({"sample": "inputs"}),
)
