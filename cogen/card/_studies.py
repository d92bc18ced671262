"""What changes between in-domain and out-of-domain data, in a few words, read from a manifest.

Every family writes its own ``spec`` into the manifest; the ``shift`` of the family's card text
(:class:`~cogen.card.family_card.FamilyCard`) turns it into a short phrase for the dataset card's config table
("grid 10-15 → 16-20", "held-out triplets ...").
"""

from __future__ import annotations

from cogen.family import family

__all__ = ["shift_text"]


def shift_text(manifest: dict) -> str:
    """What changes between in-domain and out-of-domain splits of one config (the family's own phrase)."""
    describe = family(manifest.get("family")).load("card").shift
    return describe(manifest) or str((manifest.get("spec") or {}).get("shift", ""))
