"""A slow, literal model of the public Compositional-ARC generator's episode loop, for distributions.

Written from ``carc_reference.md`` §1.3, §3 and §4.2 (not from cogen's kernels): every attempt
draws the roles, C, N (colour, shape from the reference's 10 strings, position) and S (a random
walk, redrawn while its string equals N's *un-normalised* string), then up to 500 uniform
placements of S until 14 are valid (no contact with N, the level-2 chain valid with the
reference's clockwise ``rotation_type`` 8, no contact with N after it), and restarts the whole
attempt unless those 14 positions are pairwise distinct; then each block of 4 study examples, in
the reference's order, within 500 draws each (a block whose chain is invalid everywhere, such as a
rotation of a one-cell S, restarts the attempt). Degenerate examples are kept, as the reference
keeps them. The dataset-wide grammar hash is not kept (a few redraws in 10,000 episodes).

It exists to give the reference's histograms that the measurements in ``carc_reference.md`` do not
list (level-2 output sizes) and to check, with an independent algorithm, that cogen's acceptance
step reproduces the restart rule. ``python tests/carc_reference_model.py 10000`` prints the
histograms that ``tests/test_carc_distributions.py`` stores.
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter

from test_carc_oracle import compose, normalised

SIDE = 10
QUERIES = 14
MAX_TRIES = 500
TYPES = ("translation", "mirror", "rotation", "set_color", "grow")
#: The restricted parameters (reference ``data_config.yaml``), kwargs in YAML order.
KWARGS = {"translation": {"direction": ["x", "y"], "step_size": [1]}, "mirror": {"direction": ["x", "y"]},
          "rotation": {"rotation_type": [0, 8]}, "set_color": {"new_color": [1, 2]},
          "grow": {"direction": ["-x", "-y"]}}
#: ``gen_indicator_shapes``: digit strings of (row, col) pairs; "1001" is the un-normalised anti-diagonal pair.
INDICATOR_SHAPES = ("00", "0001", "0010", "1001", "0011", "011011", "000110", "001011", "000111", "00011011")


def shape_string(cells) -> str:
    """The reference's shape string: cells moved to the top-left, sorted, digits concatenated."""
    return "".join(f"{r}{c}" for r, c in sorted(normalised(cells)))


def walk(rng: random.Random, size: int) -> frozenset:
    """The reference's random-walk object: a uniform start, at most ``4 * size`` uniform king moves."""
    r, c = rng.randint(0, SIDE - 1), rng.randint(0, SIDE - 1)
    cells = [(r, c)]
    for _ in range(4 * size):
        if len(cells) == size:
            break
        moves = [(r + dr, c + dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1)
                 if (dr or dc) and 0 <= r + dr < SIDE and 0 <= c + dc < SIDE]
        r, c = rng.choice(moves)
        if (r, c) not in cells:
            cells.append((r, c))
    return frozenset(cells)


def place(rng: random.Random, shape) -> frozenset:
    """A normalised shape at a uniform position where its box fits (row drawn first)."""
    height, width = max(r for r, _ in shape) + 1, max(c for _, c in shape) + 1
    top, left = rng.randint(0, SIDE - height), rng.randint(0, SIDE - width)
    return frozenset((r + top, c + left) for r, c in shape)


def halo(cells) -> set:
    return {(r + dr, c + dc) for r, c in cells for dr in (-1, 0, 1) for dc in (-1, 0, 1)}


def study_block(rng: random.Random, chain, shape, colors, blocked, forbidden, count: int = 4) -> bool:
    """``gen_input_outputs`` for one study kind: ``count`` valid examples within ``MAX_TRIES`` draws.
    ``shape`` None draws random-walk objects (their shape must not be ``forbidden``); ``blocked`` is
    N's halo when N is present, else empty."""
    made, tries = 0, 0
    while made < count:
        tries += 1
        if tries > MAX_TRIES:
            return False
        color = rng.choice(colors)
        cells = place(rng, shape) if shape is not None else walk(rng, rng.randint(1, SIDE - 1))
        if (shape is None and normalised(cells) == forbidden) or cells & blocked:
            continue
        out = compose((cells, color), chain, "reference")
        if out is not None and not out[0] & blocked:
            made += 1
    return True


def attempt(rng: random.Random) -> dict | None:
    """One attempt of ``gen_episode``: the accepted episode's grammar and query sizes, or None."""
    types = list(TYPES)
    rng.shuffle(types)
    roles = [types.pop(), types.pop(), types.pop()]  # shape, colour, neighbour
    kwargs = {}
    colors = list(range(1, 10))
    color = rng.choice(colors)
    colors.remove(color)
    kwargs["color"] = {key: rng.choice(values) for key, values in KWARGS[roles[1]].items()}
    n_color = rng.choice(colors)
    colors.remove(n_color)
    n_string = rng.choice(INDICATOR_SHAPES)
    kwargs["neighbor"] = {key: rng.choice(values) for key, values in KWARGS[roles[2]].items()}
    kwargs["shape"] = {key: rng.choice(values) for key, values in KWARGS[roles[0]].items()}
    s_string = n_string
    while s_string == n_string:
        size = rng.randint(1, 9)
        rng.choice(colors)  # the walk's colour, which the shape indicator does not keep
        s_cells = walk(rng, size)
        s_string = shape_string(s_cells)
    shape = normalised(s_cells)
    n_cells = place(rng, frozenset((int(n_string[i]), int(n_string[i + 1])) for i in range(0, len(n_string), 2)))
    blocked = halo(n_cells)
    chain = [(roles[0], kwargs["shape"]), (roles[1], kwargs["color"]), (roles[2], kwargs["neighbor"])]
    inputs, outputs, tries = [], [], 0
    while len(inputs) < QUERIES:
        tries += 1
        if tries > MAX_TRIES:
            return None
        cells = place(rng, shape)
        if cells & blocked:
            continue
        out = compose((cells, color), chain, "reference")
        if out is None or out[0] & blocked:
            continue
        inputs.append(cells)
        outputs.append(out[0])
    if len(set(inputs)) < QUERIES:
        return None
    steps = dict(zip(("shape", "color", "neighbor"), chain, strict=True))
    blocks = (("shape", "color"), ("shape", "neighbor"), ("color", "neighbor"), ("shape",), ("color",), ("neighbor",))
    for kind in blocks:  # the reference's order: level-1 pairs, then primitives
        example_colors = [color] if "color" in kind else colors
        if not study_block(rng, [steps[k] for k in kind], shape if "shape" in kind else None, example_colors,
                           blocked if "neighbor" in kind else set(), shape):
            return None
    return {"triplet": "+".join(sorted(roles, key=TYPES.index)), "s_size": len(shape),
            "level2_size": len(outputs[0]), "n_shape": n_string, "attempts": 1}


def episode(rng: random.Random) -> dict:
    """Attempts until one is accepted (the reference restarts without limit)."""
    attempts = 1
    while (result := attempt(rng)) is None:
        attempts += 1
    result["attempts"] = attempts
    return result


def histograms(episodes: int, seed: int = 1860) -> dict:
    """S sizes, level-2 output sizes (first query) and triplets of ``episodes`` accepted episodes."""
    rng = random.Random(seed)
    found = [episode(rng) for _ in range(episodes)]
    return {"episodes": episodes, "seed": seed,
            "s_size": dict(sorted(Counter(e["s_size"] for e in found).items())),
            "level2_size": dict(sorted(Counter(e["level2_size"] for e in found).items())),
            "triplet": dict(sorted(Counter(e["triplet"] for e in found).items())),
            "attempts_mean": sum(e["attempts"] for e in found) / episodes}


if __name__ == "__main__":
    print(json.dumps(histograms(int(sys.argv[1]) if len(sys.argv) > 1 else 1000), indent=1))
