"""Where cogen's data differs, on purpose, from the public reference generators.

One :class:`Difference` record per difference, written once in the family's card text (the
``differences`` of its :class:`~cogen.card.family_card.FamilyCard`) and rendered wherever it is
needed (the dataset card, the project documentation), so that a user comparing numbers with the
papers knows what changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["Difference", "differences_table", "family_differences"]


@dataclass(frozen=True)
class Difference:
    """One deliberate difference: the topic, what the reference does, what cogen does, and the kinds of
    study it concerns (the family's ``study_kind`` values; empty: every study of the family)."""

    topic: str
    reference: str
    cogen: str
    studies: tuple[str, ...] = ()


def family_differences(kinds: Mapping[str, set[str]] | None = None) -> list[tuple[str, Difference]]:
    """``(family name, difference)`` for every family in registry order, or, given ``kinds`` (family
    name -> the study kinds a folder holds), only those of the families and kinds held."""
    from cogen.family import FAMILIES

    found = []
    for name, record in FAMILIES.items():
        if kinds is not None and name not in kinds:
            continue
        for item in record.load("card").differences:
            if kinds is None or not item.studies or set(item.studies) & kinds[name]:
                found.append((name, item))
    return found


def differences_table(kinds: Mapping[str, set[str]] | None = None) -> str:
    """:func:`family_differences` as a Markdown table."""
    from cogen.family import family

    lines = ["| family | topic | reference implementation | cogen |", "|---|---|---|---|"]
    lines += [f"| {family(name).title} | {item.topic} | {item.reference} | {item.cogen} |"
              for name, item in family_differences(kinds)]
    return "\n".join(lines) + "\n"
