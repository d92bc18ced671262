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

__all__ = ["FamilyCard", "first_config", "fixed_paragraph", "grouped_lines", "markdown_table", "one_study_kind"]


def one_study_kind(setting: str) -> str:
    """Every study of the family is of one kind (the default :attr:`FamilyCard.study_kind`)."""
    return ""


def _no_note(manifests: list[dict]) -> str:
    return ""


def _no_lines(manifests: list[dict]) -> list[str]:
    return []


def first_config(manifests: list[dict]) -> str | None:
    """The family's first config in the folder (the default :attr:`FamilyCard.default_config`)."""
    return manifests[0]["config"] if manifests else None


def markdown_table(header: list[str], rows: list[list[str]], align: list[str] | None = None) -> str:
    """A Markdown table (``align``: one ``---`` or ``---:`` per column)."""
    align = align or ["---"] * len(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def grouped_lines(manifests: list[dict], key: Callable[[dict], str]) -> list[str]:
    """One Markdown bullet per distinct ``key(manifest)``, naming (the first three of) its configs."""
    groups: dict[str, list[str]] = {}
    for manifest in manifests:
        groups.setdefault(key(manifest), []).append(manifest["config"])
    return [f"- {value} ({len(names)} config{'s' if len(names) > 1 else ''}: {', '.join(f'`{n}`' for n in names[:3])}"
            f"{', …' if len(names) > 3 else ''})" for value, names in groups.items()]


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
    * ``headline``: the sentence that names the family's headline metric (how ``cogen eval`` scores it);
    * ``default_config(manifests)``: the config a visitor should open first among the family's
      configs in the folder (the paper's headline one; default: the first);
    * ``array_notes``: what :func:`cogen.io.split_arrays` adds beyond the grid columns (key -> its
      comment in the card's example, such as ``tokens``);
    * ``paper_note``: a paper the family follows that has no public version to link or cite;
    * ``statistics_note(manifests)``: Markdown after the generation statistics table (what rejects
      an attempt of the family's sampler, tables of its own counts; empty: none);
    * ``version_lines(manifests)``: lines the "Versions and fingerprints" section adds (inputs other
      than the libraries, such as a data file the sampler reads);
    * ``sections``: whole card sections the family adds, each ``section(manifests) -> str`` of
      its configs' manifests, Markdown from its ``## `` heading to a blank line (empty: none).

    The card says nothing about a family but what its card text gives: the generic template holds
    only what is true of every family.
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
    headline: str = ""
    default_config: Callable[[list[dict]], str | None] = first_config
    array_notes: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    paper_note: str = ""
    statistics_note: Callable[[list[dict]], str] = _no_note
    version_lines: Callable[[list[dict]], list[str]] = _no_lines
    sections: tuple[Callable[[list[dict]], str], ...] = ()
