"""Compositional-ARC's text for the dataset card (:data:`CARD`): what its studies measure, what changes
between in-domain and out-of-domain data, its paper, and the captions of its previews."""

from __future__ import annotations

from types import MappingProxyType

from cogen.families.carc.differences import DIFFERENCES
from cogen.kit.card import FamilyCard, Paper, fixed_paragraph

__all__ = ["CARD", "PAPER", "carc_shift"]


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
        "colour and a neighbouring indicator object to transformations. Study examples show primitives and "
        "level-1 compositions; queries ask for the level-2 composition. The systematicity-aware split holds "
        "whole transformation triplets out of training."),
    papers=(PAPER,),
    differences=DIFFERENCES,
    splits_note="for Compositional-ARC, `validation` and `test` hold the held-out triplets",
    captions=MappingProxyType({"study": "study_roles", "query": "query_roles"}),
)
