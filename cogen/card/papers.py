"""Papers, for the dataset card's links and citations.

A card links and cites only the papers of the families its folder holds (``papers`` of each
family's :class:`~cogen.card.family_card.FamilyCard`), plus the ones the user lists (``papers:``
in ``card.yaml``). arxiv.org links let the Hub connect paper and dataset.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Paper", "paper_link"]


@dataclass(frozen=True)
class Paper:
    """One paper: short name, title, authors, arXiv id and its BibTeX entry; ``release_note``, when
    the authors publish data of their own, says where and under which licence (the card's licence
    section adds it)."""

    key: str
    title: str
    authors: str
    arxiv: str
    venue: str
    bibtex: str
    release_note: str = ""

    @property
    def url(self) -> str:
        return f"https://arxiv.org/abs/{self.arxiv}"


def paper_link(paper: str) -> str:
    """A Markdown link for a paper the user lists (an arXiv id or any link)."""
    from cogen.card.settings import arxiv_id

    identifier = arxiv_id(paper)
    if identifier is not None:
        return f"[arXiv:{identifier}](https://arxiv.org/abs/{identifier})"
    return f"<{paper}>"
