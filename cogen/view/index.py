"""Filters over a whole split: each facet value's rows, found once, then combined as masks.

A *facet* is a named way to group rows (COGITAO: sequence, transformation, object count, grid
size); a family's viewer gives every row's value of each, or a list of values (a sequence holds
several transformations). Choosing values of several facets keeps the rows that match them all.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from cogen.folder import natural_key

__all__ = ["FacetIndex"]


class FacetIndex:
    """Row positions of every value of every facet of one split, and its row ids."""

    def __init__(self, ids: list[str], facets: Mapping[str, list], labels: Mapping[str, str]):
        self.ids = [str(name) for name in ids]
        self.position = {name: k for k, name in enumerate(self.ids)}
        self.labels = dict(labels)
        self.rows: dict[str, dict[str, np.ndarray]] = {}
        for name, values in facets.items():
            found: dict[str, list[int]] = {}
            for k, value in enumerate(values):
                for one in (value if isinstance(value, (list, tuple)) else (value,)):
                    found.setdefault(str(one), []).append(k)
            self.rows[name] = {value: np.asarray(found[value], np.int64)
                               for value in sorted(found, key=natural_key)}

    def __len__(self) -> int:
        return len(self.ids)

    def mask(self, chosen: Mapping[str, str]) -> np.ndarray:
        """Rows that hold every chosen ``facet -> value`` (an unknown facet or value matches nothing)."""
        keep = np.ones(len(self.ids), bool)
        for name, value in chosen.items():
            rows = self.rows.get(name, {}).get(value)
            hit = np.zeros(len(self.ids), bool)
            if rows is not None:
                hit[rows] = True
            keep &= hit
        return keep

    def options(self) -> list[dict]:
        """Each facet with its values and their row counts, for the page's selectors."""
        return [{"name": name, "label": self.labels.get(name, name),
                 "values": [[value, int(len(rows))] for value, rows in values.items()]}
                for name, values in self.rows.items()]

    def groups(self, name: str) -> dict[str, np.ndarray]:
        """Value -> row positions of one facet (empty for an unknown one)."""
        return self.rows.get(name, {})
