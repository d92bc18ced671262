"""Compositional-ARC's text for the dataset card: what changes between in-domain and out-of-domain data."""

from __future__ import annotations

__all__ = ["carc_shift"]


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
