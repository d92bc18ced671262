"""The report of a programs evaluation as seed 003 prints it: Table 1 and Table 2, in Markdown.

* **Table 1** (the base settings, and any setting of a custom spec): per model, three sub-columns
  per setting, L(P⁺) | E | C(P).
* **Table 2** (the extended settings Random Index (H) and Horizontal+Random): the same, each value
  followed by its change in brackets, against Horizontal for Random Index and against the mean of
  Horizontal and Random for Horizontal+Random, as the paper's Table 2.
* Every table ends with ``n_valid / n`` per setting: the replies that held a program the scorer could
  read, out of the functions (the others are in the means as L(P⁺) = 0, E = 16), and how many of
  them are ``obfuscated`` (code built or data decoded at run time: their C(P) is withheld and counted
  as 0, their L(P⁺) as L_z, so a mean that includes them carries a ``†``; a cell of obfuscated
  programs only reads ``withheld``).
* The last line names the isolation the programs ran under (``isolation: bubblewrap``, or
  ``isolation: none`` when the user opted out), so a report never hides an unconfined run.

The T1/T2/T3 types are cogen's (absolute thresholds, decision 3; the paper types models relatively,
in its text): they follow the tables on their own lines, never in the paper's columns.
"""

from __future__ import annotations

from collections.abc import Mapping

from cogen.families.programs.functions import SETTING_TITLES
from cogen.safe_text import markdown_cell

__all__ = ["EXTENDED", "markdown_tables"]

#: The settings of the paper's Table 2, each with the settings its bracketed change is taken against.
EXTENDED = {"random_index": ("horizontal",), "horizontal_random": ("horizontal", "random")}
_QUANTITIES = (("l_plus", "L(P⁺)"), ("errors", "E"), ("c", "C(P)"))


def _change(value: float) -> str:
    return f"({'−' if value < 0 else '+'}{abs(value):.2f})"


_WITHHELD = ("l_plus", "c")


def _cell(cells: Mapping, setting: str, key: str) -> str:
    cell = cells.get(setting)
    if cell is None:
        return "–"
    hidden = cell.get("obfuscated", 0) if key in _WITHHELD else 0
    if hidden and hidden == cell["functions"]:
        return "withheld"
    text = f"{cell[key]:.2f}" + ("†" if hidden else "")
    bases = [cells.get(b) for b in EXTENDED.get(setting, ())]
    if bases and all(b is not None for b in bases):
        text += " " + _change(cell[key] - sum(b[key] for b in bases) / len(bases))
    return text


def _valid(cells: Mapping, settings: list[str]) -> str:
    def one(cell: Mapping) -> str:
        hidden = cell.get("obfuscated", 0)
        return f"{cell['valid']}/{cell['functions']}" + (f" ({hidden} obfuscated)" if hidden else "")

    return " · ".join(one(cells[s]) if s in cells else "–" for s in settings)


def _table(report: Mapping, settings: list[str], title: str) -> list[str]:
    width = 3 * len(settings)
    header = ["Model", *(name for s in settings for name in (SETTING_TITLES.get(s, markdown_cell(s)), "", "")),
              "n_valid / n"]
    lines = [title, "", "| " + " | ".join(header) + " |", "|---|" + "---:|" * width + "---|",
             "| | " + " | ".join(label for _ in settings for _, label in _QUANTITIES) + " | |"]
    for model in report["models"]:
        cells = report["cells"][model]
        if not any(s in cells for s in settings):
            continue
        values = [_cell(cells, s, key) for s in settings for key, _ in _QUANTITIES]
        lines.append("| " + " | ".join([markdown_cell(model), *values, _valid(cells, settings)]) + " |")
    return lines


def _types(report: Mapping) -> list[str]:
    thresholds = report["thresholds"]
    lines = [f"cogen's types (decision 3: low L(P⁺) <= {thresholds['low_length']:g}, low E <= "
             f"{thresholds['low_errors']:g}; the paper types models relatively):"]
    for model in report["models"]:
        cells = report["cells"][model]
        kinds = ", ".join(f"{SETTING_TITLES.get(s, markdown_cell(s))} {cells[s]['type']}"
                          for s in report["settings"] if s in cells)
        lines.append(f"- {markdown_cell(model)}: {kinds}")
    return lines


def markdown_tables(report: Mapping) -> str:
    """The report (:func:`cogen.families.programs.score.table`) as the paper's Table 1 and Table 2 (see the module
    docstring), then the bounds and cogen's types."""
    base = [s for s in report["settings"] if s not in EXTENDED]
    extended = [s for s in report["settings"] if s in EXTENDED]
    lines: list[str] = []
    if base:
        lines += _table(report, base, "Table 1: L(P⁺), E and C(P), averaged over the functions of each setting.")
    if extended:
        lines += [""] if lines else []
        lines += _table(report, extended, "Table 2: extended settings; in brackets the change against Horizontal "
                                          "(Random Index) and against the mean of Horizontal and Random (H+R).")
    bounds = report["bounds"]
    lines += ["", f"L_s = {bounds['L_s']}, L_z = {bounds['L_z']}; n_valid counts the replies that held a readable "
                  "program (the others count as L(P⁺) = 0, E = 16)."]
    if any(cell.get("obfuscated") for cells in report["cells"].values() for cell in cells.values()):
        lines.append(f"† the mean includes obfuscated programs (code built or data decoded at run time): their "
                     f"C(P) is withheld and counted as 0, their L(P⁺) as L_z = {bounds['L_z']}.")
    lines += ["", *_types(report)]
    isolation = report.get("isolation")
    if isolation:
        lines += ["", f"isolation: {isolation}" + (" (the programs ran WITHOUT kernel isolation: "
                                                    "--unsafe-run-untrusted-code or "
                                                    "COGEN_UNSAFE_RUN_UNTRUSTED_CODE=1)" if isolation == "none" else "")]
    return "\n".join(lines) + "\n"
