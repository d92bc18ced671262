"""Regions of the dataset card that belong to the user: cogen writes them empty and never drops them.

A region is everything between ``<!-- cogen:user NAME -->`` and ``<!-- cogen:end-user NAME -->``
(HTML comments, invisible on the Hub). When cogen rewrites a card (``cogen card``, ``cogen build``,
``cogen merge``, ``cogen push``), each region keeps the text the user wrote there, in the local
README.md or on the Hub; a region the template no longer has is kept at the end of the card.
"""

from __future__ import annotations

import re

__all__ = ["fill_regions", "user_regions"]

_REGION = re.compile(r"<!-- cogen:user (?P<name>[\w-]+) -->\n(?P<body>.*?)<!-- cogen:end-user (?P=name) -->",
                     re.DOTALL)


def user_regions(text: str) -> dict[str, str]:
    """Region name -> the text written inside it (stripped; empty regions included)."""
    return {match["name"]: match["body"].strip() for match in _REGION.finditer(text or "")}


def _merged(texts: list[str]) -> str:
    """One text for a region edited in several cards: each distinct edit kept once, none dropped."""
    kept: list[str] = []
    for text in texts:
        if not text or any(text in other for other in kept):
            continue
        kept = [other for other in kept if other not in text] + [text]
    return "\n\n".join(kept)


def _region(name: str, body: str) -> str:
    return f"<!-- cogen:user {name} -->\n{body + chr(10) if body else ''}<!-- cogen:end-user {name} -->"


def fill_regions(card: str, *previous: str) -> str:
    """``card`` (freshly rendered, regions empty) with every region's text from the ``previous``
    cards (earlier first); regions of previous cards that ``card`` lacks are appended at its end."""
    edits: dict[str, list[str]] = {}
    for text in previous:
        for name, body in user_regions(text).items():
            edits.setdefault(name, []).append(body)
    present = set(user_regions(card))
    card = _REGION.sub(lambda m: _region(m["name"], _merged(edits.get(m["name"], []))), card)
    orphans = [_region(name, _merged(bodies)) for name, bodies in edits.items()
               if name not in present and _merged(bodies)]
    if orphans:
        card = card.rstrip("\n") + "\n\n" + "\n\n".join(orphans) + "\n"
    return card
