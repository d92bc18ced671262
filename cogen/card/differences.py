"""Where cogen's data differs, on purpose, from the public reference generators.

One record per difference, written once and rendered wherever it is needed (the dataset card,
the project documentation), so that a user comparing numbers with the papers knows what changed.
"""

from __future__ import annotations

from dataclasses import dataclass

from cogen.families import FAMILIES

__all__ = ["DIFFERENCES", "Difference", "differences_table"]


@dataclass(frozen=True)
class Difference:
    """One deliberate difference: the family it concerns, the topic, what the reference does, what cogen does."""

    family: str
    topic: str
    reference: str
    cogen: str


DIFFERENCES = (
    Difference("cogitao", "Boxes after half-crops",
               "`crop_*_side` keeps the whole half-box, empty rows and columns included, so later steps "
               "anchor, rotate, extend or pad a loose box and shift the pixels; the overlap check can then erase "
               "pixels of another object",
               "boxes are always tight and a crop never moves the pixels it keeps"),
    Difference("cogitao", "`crop_contours`",
               "the interior is re-anchored by its own tight corner, so it jumps up or left when its first row or "
               "column is empty (about 13 % of samples)",
               "the interior stays where it was"),
    Difference("cogitao", "`fill_holes_different_color`",
               "paints with the colour of the object's first pixel and adds the new colour to every other "
               "colour (wrong colours, or a rejection when a value passes 9)",
               "paints only the hole cells, with (most frequent colour mod 9) + 1; other pixels are untouched"),
    Difference("cogitao", "Most frequent colour",
               "ties follow Python's set iteration order, and empty cells of loose boxes are counted",
               "ties go to the smallest colour; only object pixels count"),
    Difference("cogitao", "Held-out compositions (C1-2, C1-3, C1-5 and C2 alike)",
               "one of the two held-out sequences (`change_shape_color`→`pad_right`, `crop_bottom_side`→`rot90`, "
               "`extend_contours_same_color`→`pad_left`) is also a training sequence",
               "that sequence is removed from training: no held-out composition is ever trained on"),
    Difference("cogitao", "CompGen grids (C1, C2)",
               "15x15", "20x20, as the paper says"),
    Difference("cogitao", "EnvGen object sizes (G3, G4, G5)",
               "G3/G5 train on objects of at most 4x4 and test on 6-8; G4 sets no size limit",
               "the paper's values: at most 5x5 in domain, 6x6 to 10x10 out of domain (G3, G5), smaller than 6x6 "
               "(G4)"),
    Difference("cogitao", "Object bank",
               "not public (its scripts regenerate 22,520 objects); its shapes omit diagonal stripes; its "
               "`is_shape_symmetric` ignores rotation, so its \"asymmetric\" objects may be 180-degree symmetric",
               "built deterministically by cogen from the paper's families, diagonal stripes included (22,818 "
               "objects); its SHA-256 is recorded in every manifest and dataset card. In the C3 training, G4 and G5 "
               "out-of-domain pools the drawn objects are within a total-variation distance of 0.035 of the "
               "reference's in height, colours, square boxes, transpose and 180-degree symmetry, 4-connectivity "
               "and holes, but hold 2-7 % fewer pixels (means 8.3 / 8.9 / 27.1 against 8.8 / 9.1 / 29.0); whole "
               "bank: 65.8 % symmetric (reference 69.9 %), 18.2 % single-coloured (22.5 %), 79.2 % fully connected "
               "(83.1 %). `mirror_horizontal` leaves 27.1 % of the G4/G5 training pool unchanged (reference 30.4 %) "
               "and 13.1 % of the C3 training objects (25.7 %); G4/G5 out of domain use `is_shape_asymmetric` (no "
               "mirror, transpose or 180-degree symmetry)"),
    Difference("cogitao", "Samples",
               "drawn from the reference's own random streams",
               "each sample is a pure function of (spec, split, index, seed), byte-identical for any number of "
               "workers; the distributions match the reference, the individual samples do not"),
    Difference("cogitao", "Sequence mix",
               "a failed attempt redraws the sequence, so sequences that fail more often are rarer",
               "explicit sequence lists are balanced by sample index (each gets its exact share); pools draw "
               "depth and steps per attempt"),
    Difference("cogitao", "Duplicates",
               "a shared SQLite table of SHA-256 keys; a duplicate re-queues its sequence",
               "a key pass, then a canonical-order plan that regenerates repeats (split sizes stay exact); the "
               "regenerated samples are listed in the manifest"),
    Difference("carc", "Counter-clockwise rotation",
               "`rotation_type 8` turns clockwise, like type 0",
               "turns counter-clockwise, as the paper says (`rotation: reference` reproduces the code)"),
    Difference("carc", "Triplet mix",
               "every failure restarts the whole episode, so triplets that fail more often are rarer",
               "an episode's triplet and roles are drawn uniformly once and kept while its grammar is redrawn: "
               "the mix is balanced"),
    Difference("carc", "Degenerate examples",
               "keeps examples whose output equals the input (identity queries in about 2.3 % of episodes, "
               "colour changes to the current colour in about 2.5 % of primitives)",
               "rejects them (`degenerate: keep` allows them)"),
    Difference("carc", "Indicator shapes",
               "compares the neighbour indicator's shape un-normalised, so the shape indicator can take the same "
               "shape (about 0.9 % of episodes)",
               "shapes are compared normalised: the two indicators always differ"),
    Difference("carc", "Query positions",
               "draws query positions independently and restarts the episode when two coincide",
               "draws distinct positions without replacement"),
    Difference("carc", "Parameter mix (extended set)",
               "parameters are redrawn with every restart, so rarely accepted ones (2-step translations) are "
               "under-represented",
               "parameters are drawn once per episode: every value is equally frequent"),
    Difference("carc", "Evaluation filter (extended set)",
               "test episodes need every transformation label seen 5,000 times in training",
               "1,000 times: with balanced parameters each 2-step translation sits right at 5,000, which would "
               "drop test episodes by chance (splits near 80k / 10k / 10k instead of the paper's "
               "85,528 / 5,472 / 5,473)"),
    Difference("carc", "Static variant",
               "290 / 14 / 14 examples with the script's defaults; the paper's 1,260 / 20 / 20 came from "
               "unreported settings",
               "the script's defaults; the order of the 8 episodes (product of shape, colour and neighbour "
               "choices) is inferred"),
    Difference("carc", "Episode contents",
               "generates 4 examples per kind and 14 queries, and the split drops the surplus",
               "generates what the splits use: 2 per primitive and level-1 kind, 10 queries, 3 shots"),
)


def differences_table(families: set[str] | None = None) -> str:
    """The differences of ``families`` (all when ``None``) as a Markdown table."""
    lines = ["| family | topic | reference implementation | cogen |", "|---|---|---|---|"]
    for item in DIFFERENCES:
        if families is None or item.family in families:
            lines.append(f"| {FAMILIES[item.family].title} | {item.topic} | {item.reference} | {item.cogen} |")
    return "\n".join(lines) + "\n"
