"""Compositional-ARC's text for the dataset card (:data:`CARD`): what its studies measure, what each kind of
config shows, what changes between in-domain and out-of-domain data, its headline metric and default
config, its paper, and the captions of its previews."""

from __future__ import annotations

from types import MappingProxyType

from cogen.families.carc.differences import DIFFERENCES
from cogen.kit.card import FamilyCard, Paper, fixed_paragraph

__all__ = ["CARD", "PAPER", "carc_shift", "default_config", "kinds_note"]


def carc_shift(manifest: dict) -> str:
    """Compositional-ARC: held-out triplets of the systematicity split, or the kind of config, and any
    generation switch away from the defaults (``queries``, ``rotation``, ``degenerate``)."""
    kind = manifest.get("kind")
    held_out = manifest.get("held_out_triplets") or []
    triplets = ", ".join("+".join(t) for t in held_out)
    text = {"systematicity": f"held-out triplets in validation and test: {triplets}",
            "3shot": f"held-out triplets in validation and test: {triplets}; study examples are 3 level-2 shots",
            "episodes": "the whole episode pool, before any split",
            "static": "one fixed grammar (static variant), one example per row"}.get(kind, "")
    spec = manifest.get("spec") or {}
    # cogen's first generator wrote no ``queries`` key: its episodes are the distinct mode's
    switches = [f"{key}: {spec.get(key, missing)}" for key, default, missing in
                (("queries", "reference", "distinct"), ("rotation", "paper", "paper"),
                 ("degenerate", "reject", "reject")) if spec.get(key, missing) != default]
    return "; ".join(part for part in (text, ", ".join(switches)) if part)


#: What each kind of config shows, in the order the card lists them.
_KINDS = {
    "systematicity": "the systematicity-aware split (the paper's headline): 12 study examples per episode, "
                     "the primitives and level-1 compositions, then 10 level-2 queries",
    "3shot": "the 3-shot variant of that split: 3 study examples per episode, each a level-2 composition, then the "
             "same 10 queries",
    "static": "the static variant: one fixed grammar, one example per row and no study examples",
    "episodes": "the whole episode pool before any split (12 study examples, 10 queries and the 3 level-2 shots)",
}


def kinds_note(manifests: list[dict]) -> str:
    """The paragraph on the kinds of Compositional-ARC config the folder holds."""
    kinds = [kind for kind in _KINDS if any(m.get("kind") == kind for m in manifests)]
    if not kinds:
        return ""
    lines = [f"- `{kind}` configs: {_KINDS[kind]}" for kind in kinds]
    return "Compositional-ARC configs come in these kinds:\n\n" + "\n".join(lines) + "\n\n"


def default_config(manifests: list[dict]) -> str | None:
    """The first systematicity-aware split config (the paper's headline results), else the first config."""
    chosen = next((m for m in manifests if m.get("kind") == "systematicity"), manifests[0] if manifests else None)
    return chosen["config"] if chosen else None


PAPER = Paper(
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
}""",
    release_note="the Compositional-ARC authors publish their own dataset under CC BY-SA 4.0")

CARD = FamilyCard(
    shift=carc_shift,
    measures=fixed_paragraph(
        "**Compositional-ARC ({settings}).** Few-shot episodes whose visual grammar maps an object's shape, "
        "colour and a neighbouring indicator object to transformations. An episode's study examples show how "
        "the grammar acts (what they show depends on the kind of config, below); its queries ask for a "
        "level-2 composition. The systematicity-aware split holds whole transformation triplets out of "
        "training."),
    papers=(PAPER,),
    differences=DIFFERENCES,
    splits_note="`validation` and `test` hold what the split holds out: whole triplets, or the static variant's "
                "held-out episode",
    configs_note=kinds_note,
    headline=("Exact-match accuracy over queries is the headline metric, as in the paper: a query's prediction "
              "counts only when every cell of the output grid, and its size, match; `cogen eval` adds the "
              "paper's colour and shape accuracies and its error taxonomy."),
    default_config=default_config,
    captions=MappingProxyType({"study": "study_roles", "query": "query_roles"}),
)
