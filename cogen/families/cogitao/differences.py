"""Where COGITAO data differs, on purpose, from the public reference generator (shown on the dataset card
and in the README by :func:`cogen.card.differences.differences_table`)."""

from __future__ import annotations

from cogen.kit.card import Difference

__all__ = ["DIFFERENCES"]

DIFFERENCES = (
    Difference("Boxes after half-crops",
               "`crop_*_side` keeps the whole half-box, empty rows and columns included, so later steps "
               "anchor, rotate, extend or pad a loose box and shift the pixels; the overlap check can then erase "
               "pixels of another object",
               "boxes are always tight and a crop never moves the pixels it keeps"),
    Difference("`crop_contours`",
               "the interior is re-anchored by its own tight corner, so it jumps up or left when its first row or "
               "column is empty (about 13 % of samples)",
               "the interior stays where it was"),
    Difference("`fill_holes_different_color`",
               "paints with the colour of the object's first pixel and adds the new colour to every other "
               "colour (wrong colours, or a rejection when a value passes 9)",
               "paints only the hole cells, with (most frequent colour mod 9) + 1; other pixels are untouched"),
    Difference("Most frequent colour",
               "ties follow Python's set iteration order, and empty cells of loose boxes are counted",
               "ties go to the smallest colour; only object pixels count"),
    Difference("Which reading of the paper",
               "the paper's numbers come from the authors' paper-era code, which departs from the paper's "
               "text (rows below); their current code departs again (it also trains on one of the two held-out "
               "sequences of C1-2, C1-3 and C1-5)",
               "two spec sets: `split_specs/` follows the paper's text wherever it is explicit (configs `C1-1` "
               "...), `split_specs/as_run/` the paper-era code (configs `as-run-C1-1` ...); the card names the "
               "variant of every study. Neither trains on a held-out sequence: a spec that does is refused"),
    Difference("CompGen sequence lists",
               "C1/C2 train on 6-7 of the paper's 7-8 pairs and hold out one order (C1-1: `translate_up`→`rot90` "
               "only; C1-2: the reverse of the paper's); C3 trains on 6 of the 9 pairs and tests 16 of the 27 "
               "triples, 6 of which contain a pair never trained, so C3 mixes one level deeper with an unseen pair; "
               "experiment 4 is `extend_contours_different_color`, `mirror_horizontal`, `translate_down`",
               "`split_specs/`: the paper's lists (every pair but the held-out ones; all 27 triples), less "
               "`mirror_horizontal`→`mirror_horizontal` and `mirror_vertical`→`mirror_vertical` in training (the "
               "identity: every sample a copy) and `crop_contours`×3 (never applies to objects of at most 6x6); "
               "C3's held-out triples contain an untrained pair only through those identities (5 of 27 in C3-1 "
               "and C3-5, none in C3-2 to C3-4); `as_run/`: the code's lists"),
    Difference("CompGen grids (C1, C2)",
               "15x15", "20x20, as the paper says (`split_specs/`); 15x15 in `as_run/`"),
    Difference("Object sizes",
               "CompGen and S: at most 5x5; G3, G5: at most 4x4 in domain, 6-8 out of domain; G4: no limit (up to "
               "15x15). The paper: at most 6x6; 1x1-5x5, then 6x6-10x10; smaller than 6x6. Size of the effect: "
               "with no limit, G4 objects are 5.9 rows high on average against 3.7, and a sample changes twice as "
               "many cells (0.154 against 0.078); the paper's ResNet, trained on cogen's G4-2, scores 99.9 % in "
               "domain against the paper's 30.7 % (fidelity review)",
               "the paper's values in `split_specs/`, the code's in `as_run/`"),
    Difference("G5-5 out of domain",
               "17-20 grids and exactly 3 objects",
               "`split_specs/`: 16-20 grids and 3-4 objects, as the paper says for all of G5; a fourth object that "
               "grows a cell on every side rarely fits, so a sample takes 718 attempts (the code's setting: 19) "
               "and its object heights are left to what fits (6 rows: 56 %); `as_run/`: the code's", ("G",)),
    Difference("Degenerate samples",
               "keeps samples whose output equals the input: in the paper-era code the identities "
               "`mirror_horizontal`→`mirror_horizontal` and `mirror_vertical`→`mirror_vertical` are a ninth of the "
               "training sequences of C1-1, C1-4, C1-5, C3-1, C3-4 and C3-5 and a sixth of C2-1, C2-4 and C2-5; "
               "with cogen's objects, 17.6 % of S-5 (`empty_inside_pixels`), 17.4 % of G5-3, "
               "7.9 % of G1-3 and 7.2 % of G4-3 training samples copy their input (38.5 % of G4-3 with the code's "
               "unlimited sizes)",
               "rejects them (`degenerate: reject`, the default; `degenerate: keep` allows them, and `as_run/` "
               "keeps them); every manifest and card gives the share of no-ops each split would have had"),
    Difference("Difficulty balance",
               "a failed attempt redraws object count, objects and placement, so accepted samples lean toward few "
               "and small objects: 76 % of G1-5 and 74-80 % of G5-1 to G5-4 out-of-domain grids hold 3 objects "
               "(the paper: 3 or 4), and 9- and 10-row objects are 9 % and 6 % of G3-1's out-of-domain objects "
               "(the paper: 6x6 to 10x10)",
               "`balance: difficulty` (default): a sample draws its object count, and out of domain where the "
               "experiment shifts object sizes each object's height (uniform over the heights the filter allows), "
               "once, and keeps them through its retries: 3 and 4 objects 47-53 % each, heights 6-10 18-21 % each "
               "in G3; hard draws cost attempts instead of vanishing (G3-1 out of domain 14 attempts per sample "
               "instead of 4.5, G5-1 204 instead of 6.2; a sample that fails 2,000 times with its heights draws "
               "new ones, 0.9-5.4 times per 100 G5 samples); `balance: count` keeps the count only, "
               "`balance: none` redraws everything (`as_run/`)"),
    Difference("Experiment 2 of C1-C3 (`pad_right` before a fill)",
               "after `pad_right`, `fill_holes_different_color` adds the new colour to the pad column too (or "
               "rejects the sample when a value passes 9): 91-99 % of the C3-2 out-of-domain samples with "
               "`pad_right` before the fill differ from the paper's semantics, and their objects take only colours "
               "1, 2, 5, 6, 8 and 9",
               "the paper's semantics in both spec sets, so C1-2, C2-2 and C3-2 results cannot be compared with "
               "the paper's experiment-2 numbers (its Tables 5 and 6)"),
    Difference("`fill_holes_same_color` after a colour-adding step",
               "fills the holes and repaints the whole object in its most frequent colour (the paper: fills the "
               "holes with the object's colour), so after a pad the pad is repainted too",
               "the same as the code: 98.4 % of `pad_right`→`fill_holes_same_color` samples repaint the pad "
               "column; no paper experiment uses it"),
    Difference("Validity of intermediate steps",
               "the paper's algorithm and the paper-era code check only where each object ends; the current code "
               "checks every step",
               "every step must keep every object on the grid without overlap, which refuses 0.5 % (C3-5), 1.9 % "
               "(C3-1), 3.4 % (C3-3) and 6.7 % (C3-4) of the attempts the paper's algorithm accepts"),
    Difference("Object bank",
               "not public (its scripts regenerate 22,520 objects); its shapes omit diagonal stripes; its "
               "`is_shape_symmetric` ignores rotation, so its \"asymmetric\" objects may be 180-degree symmetric",
               "built deterministically by cogen from the paper's families, diagonal stripes included (22,818 "
               "objects); its SHA-256 is recorded in every manifest and dataset card. In the C3 training, G4 and G5 "
               "out-of-domain pools the objects drawn as the reference draws them (`balance: none`) are within a total-variation distance of 0.035 of the "
               "reference's in height, colours, square boxes, transpose and 180-degree symmetry, 4-connectivity "
               "and holes, but hold 2-7 % fewer pixels (means 8.3 / 8.9 / 27.1 against 8.8 / 9.1 / 29.0); whole "
               "bank: 65.8 % symmetric (reference 69.9 %), 18.2 % single-coloured (22.5 %), 79.2 % fully connected "
               "(83.1 %). `mirror_horizontal` leaves 27.1 % of the G4/G5 training pool unchanged (reference 30.4 %) "
               "and 13.1 % of the C3 training objects (25.7 %); G4/G5 out of domain use `is_shape_asymmetric` (no "
               "mirror, transpose or 180-degree symmetry)"),
    Difference("Samples",
               "drawn from the reference's own random streams",
               "each sample is a pure function of (spec, split, index, seed), byte-identical for any number of "
               "workers, so individual samples differ. Run with the same parameters, `degenerate: keep` and "
               "`balance: none`, the "
               "sampler matches the reference generator within sampling noise in attempts per sample, grid sizes "
               "(total-variation distance 0.009-0.022), objects per grid, distances to the border (KS D at most "
               "0.024), sequence mix and colour frequencies (fidelity review); what the objects look like follows "
               "cogen's bank (row above), and the defaults change no-ops and difficulty on purpose (rows below)"),
    Difference("Sequence mix",
               "a failed attempt redraws the sequence, so sequences that fail more often are rarer",
               "explicit sequence lists are balanced by sample index (each gets its exact share); pools draw "
               "depth and steps per attempt"),
    Difference("Duplicates",
               "a shared SQLite table of SHA-256 keys; a duplicate re-queues its sequence",
               "a key pass, then a canonical-order plan that regenerates repeats (split sizes stay exact); the "
               "regenerated samples are listed in the manifest"),
)
