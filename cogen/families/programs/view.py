"""String-to-grid functions in ``cogen view``: the 16 pairs (each input string over its 4x4 grid)
and the cell groups; with a replies file, each model's program scored as ``cogen eval`` scores it
(in the sandbox): L(P⁺), E, C(P), the type, and the wrong samples.

The :class:`~cogen.view.drawing.Viewer` of the ``programs`` family record. Grids are drawn with
the ARC palette: ``.`` black, ``*`` blue; in the cell groups, blue, red, green and yellow mark
the cells of the first to the fourth character.
"""

from __future__ import annotations

import numpy as np

from cogen.families.programs import evaluate
from cogen.kit.evaluate import summary_rows
from cogen.kit.view import Scored, grid_item, row_drawing, text_item

__all__ = ["COLUMNS", "FACETS", "FACET_COLUMNS", "SUMMARY_FACET", "draw", "facets", "score"]

COLUMNS = ("id", "setting", "inputs", "sample_outputs", "cell_groups", "patterns", "character_rows")
FACET_COLUMNS = ("setting",)
FACETS = {"setting": "setting"}
SUMMARY_FACET = "setting"
#: Samples per function: every string of 4 two-letter characters.
SAMPLES = 16


def facets(table) -> dict[str, object]:
    """Each function's setting, as an Arrow array."""
    return {"setting": table.column("setting")}


def _program_lines(found: dict) -> list[tuple[str, list[dict]]]:
    c = "withheld" if found["c"] is None else f"{found['c']:.2f}"  # an obfuscated program's C(P)
    l_plus = "withheld" if found["l_plus"] is None else found["l_plus"]
    title = f"{found['model']}: L(P+) {l_plus}, E {found['errors']}, C {c} ({found['type']}; {found['status']})"
    items = [text_item(reason, f"{count} sample(s)") for reason, count in sorted(found["failures"].items())]
    return [(title, items or [text_item("samples", "all 16 right")])]


def draw(row: dict, manifest: dict, detail: list | None = None) -> dict:
    """The 16 pairs, the cell groups, and each model's scored program."""
    pairs = [grid_item(text, grid) for text, grid in zip(row["inputs"], row["sample_outputs"], strict=True)]
    groups = np.asarray(row["cell_groups"], np.int64) + 1
    facts = [("setting", row.get("setting")), ("patterns", " ".join(row.get("patterns") or [])),
             ("character rows", " ".join(map(str, row.get("character_rows") or [])))]
    panels = [("16 pairs (. black, * blue)", pairs),
              ("cell groups (characters 1-4: blue, red, green, yellow)", [grid_item("cell groups", groups)])]
    for found in detail or []:
        panels += _program_lines(found)
    return row_drawing(row["id"], row.get("setting") or "", facts, panels)


def score(split, predictions) -> Scored:
    """Run and score every model's program for every function, as ``cogen eval`` does."""
    metrics = evaluate.score(split, evaluate.read(predictions))
    ids = [str(name) for name in split.table.column("id").to_pylist()]
    position = {name: k for k, name in enumerate(ids)}
    found: list[list[dict]] = [[] for _ in ids]
    for function in metrics["functions"]:
        found[position[function["id"]]].append(function)
    expected = np.array([SAMPLES * len(f) for f in found], np.int64)
    correct = np.array([sum(SAMPLES - f["errors"] for f in row) for row in found], np.int64)
    errors = [tuple(dict.fromkeys(reason for f in row for reason in
                                  ([f["status"]] if f["status"] != "ok" else list(f["failures"]))))
              for row in found]
    return Scored(expected=expected, correct=correct, errors=errors, detail=lambda k: found[k],
                  summary=summary_rows({"family": split.family, **metrics}))
