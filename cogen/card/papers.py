"""The papers behind each family of tasks, for the dataset card's links and citations.

A card links and cites only the papers of the families its folder holds, plus the ones the user
lists (``papers:`` in ``card.yaml``). arxiv.org links let the Hub connect paper and dataset.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FAMILY_PAPERS", "Paper", "paper_link"]


@dataclass(frozen=True)
class Paper:
    """One paper: short name, title, authors, arXiv id and its BibTeX entry."""

    key: str
    title: str
    authors: str
    arxiv: str
    venue: str
    bibtex: str

    @property
    def url(self) -> str:
        return f"https://arxiv.org/abs/{self.arxiv}"


#: The authors' surnames as the arXiv listing gives them; first names are left out rather than guessed
#: (the seed text is the anonymous review version).
COGITAO = Paper(
    "COGITAO", "COGITAO: A Procedural Object-Centric Framework to Evaluate Compositional Generalization",
    "Taoudi-Benchekroun, Troyan, Sager, Gerber, Tuggener, Grewe", "2509.05249", "arXiv 2025",
    """@misc{taoudi2025cogitao,
  title         = {{COGITAO}: A Procedural Object-Centric Framework to Evaluate Compositional Generalization},
  author        = {Taoudi-Benchekroun and Troyan and Sager and Gerber and Tuggener and Grewe},
  year          = {2025},
  eprint        = {2509.05249},
  archivePrefix = {arXiv},
  url           = {https://arxiv.org/abs/2509.05249}
}""")

COMPOSITIONAL_ARC = Paper(
    "Compositional-ARC", "Compositional-ARC: Assessing Systematic Generalization in Abstract Spatial Reasoning",
    "Mondorf, Zhou, Riedler, Plank", "2504.01445", "ICLR 2026",
    """@inproceedings{mondorf2026compositionalarc,
  title         = {{Compositional-ARC}: Assessing Systematic Generalization in Abstract Spatial Reasoning},
  author        = {Mondorf, Philipp and Zhou, Shijia and Riedler, Monica and Plank, Barbara},
  booktitle     = {International Conference on Learning Representations (ICLR)},
  year          = {2026},
  eprint        = {2504.01445},
  archivePrefix = {arXiv},
  url           = {https://arxiv.org/abs/2504.01445}
}""")

#: Family -> the papers whose benchmarks its configs reproduce (the programs family's paper has
#: no public version yet, so it is described, not linked).
FAMILY_PAPERS: dict[str, tuple[Paper, ...]] = {"cogitao": (COGITAO,), "carc": (COMPOSITIONAL_ARC,), "programs": ()}


def paper_link(paper: str) -> str:
    """A Markdown link for a paper the user lists (an arXiv id or any link)."""
    from cogen.card.settings import arxiv_id

    identifier = arxiv_id(paper)
    if identifier is not None:
        return f"[arXiv:{identifier}](https://arxiv.org/abs/{identifier})"
    return f"<{paper}>"
