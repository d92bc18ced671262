"""What a dataset card says about one family's configs: the ``card`` role of its record.

The card machinery (:mod:`cogen.card.body`, :mod:`cogen.card.preview`) knows no family; it asks
each family present in a folder for its :class:`FamilyCard` (``family(name).load("card")``),
which lives in the family's folder (``cogen/families/<name>/card.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from cogen.card.differences import Difference
from cogen.card.papers import Paper

__all__ = ["FamilyCard", "fixed_paragraph", "one_study_kind"]


def one_study_kind(setting: str) -> str:
    """Every study of the family is of one kind (the default :attr:`FamilyCard.study_kind`)."""
    return ""


def _no_note(manifests: list[dict]) -> str:
    return ""


def fixed_paragraph(template: str) -> Callable[[str, list[str]], str]:
    """A :attr:`FamilyCard.measures` that writes ``template`` for every kind, ``{settings}`` filled in."""
    return lambda kind, settings: template.format(settings=", ".join(settings))


@dataclass(frozen=True)
class FamilyCard:
    """The card text of one family.

    * ``shift(manifest)``: what changes between in-domain and out-of-domain data of one config,
      a short phrase for the configs table;
    * ``measures(kind, settings)``: the "What the benchmark measures" paragraph of the studies
      ``settings`` (spec ``setting`` names) of one study kind, naming only what they hold;
    * ``study_kind(setting)``: the kind of a study (such as CompGen or EnvGen), which picks its
      paragraph and the ``differences`` that concern it;
    * ``papers``: the papers whose benchmarks the family reproduces (linked, cited, named in the licence);
    * ``differences``: where the family's data departs on purpose from the reference code;
    * ``splits_note``: added to the card's sentence on splits when the folder holds the family;
    * ``configs_note(manifests)``: a paragraph before the list of studies (empty: none);
    * ``variants``: how the card names each ``variant`` a manifest may carry;
    * ``captions``: preview kind (``""`` for one pair per row, ``study`` for ``study_inputs``...) ->
      the column whose values caption each pair (a list of names per row, or one per pair);
    * ``noop_table``: whether the family's configs get a row in the no-op table (their split
      statistics count ``noops`` and ``size_redraws``);
    * ``sections``: whole card sections the family adds, each ``section(manifests) -> str`` of
      its configs' manifests, Markdown from its ``## `` heading to a blank line (empty: none).
    """

    shift: Callable[[dict], str]
    measures: Callable[[str, list[str]], str]
    study_kind: Callable[[str], str] = one_study_kind
    papers: tuple[Paper, ...] = ()
    differences: tuple[Difference, ...] = ()
    splits_note: str = ""
    configs_note: Callable[[list[dict]], str] = _no_note
    variants: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    captions: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    noop_table: bool = False
    sections: tuple[Callable[[list[dict]], str], ...] = ()
