"""String-to-grid programs' text for the dataset card (:data:`CARD`): what its configs measure and show,
how they are scored, and the paper they follow.

The family's paper has no public version yet, so the card names it and cites none.
"""

from __future__ import annotations

from types import MappingProxyType

from cogen.kit.card import FamilyCard, fixed_paragraph

__all__ = ["CARD", "default_config", "programs_shift"]

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


def default_config(manifests: list[dict]) -> str | None:
    """The Horizontal setting (the paper's first: character i controls row i), else the first config."""
    chosen = next((m for m in manifests if m.get("kind") == "horizontal"), manifests[0] if manifests else None)
    return chosen["config"] if chosen else None


CARD = FamilyCard(
    shift=programs_shift,
    measures=fixed_paragraph("**String-to-grid programs ({settings}).** A model sees string-to-grid pairs and "
                             "explains them with a program, scored by its compositionality."),
    captions=MappingProxyType({"sample": "inputs"}),
    splits_note="every function is a test item: a model sees all 16 pairs and writes a program",
    headline=("A model is scored by the program it writes, not by predicted grids: per function L(P⁺) (the "
              "program's length), E (the pairs it gets wrong) and the compositionality C(P), with the paper's "
              "types T0-T3 (`cogen eval`; `docs/evaluation.md` defines each)."),
    default_config=default_config,
    paper_note=("*Exploring Explainable Compositionality of LLMs: A Program-Generation Perspective* (an anonymous "
                "ACL submission; no public version yet)"),
)
