"""Filters over a whole split: each facet value's rows, found once, then combined as masks.

A *facet* is a named way to group rows (a transformation sequence, a transformation, an object
count, a grid size); a family's viewer gives every row's value of each as an Arrow array of strings, or of
lists of strings (a sequence holds several transformations). Values are dictionary-encoded in
Arrow, so a 100,000-row split costs a few integer arrays, not Python objects per row. Choosing
values of several facets keeps the rows that match them all.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from cogen.folder import natural_key

__all__ = ["FacetIndex"]


def _as_array(values):
    """An Arrow array (chunks combined) of ``values``: an Arrow array or chunked array, or a list."""
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks() if values.num_chunks else pa.array([], values.type)
    return values if isinstance(values, pa.Array) else pa.array(values)


def _value_rows(values) -> dict[str, np.ndarray]:
    """Value -> the sorted rows holding it, for an array of strings or of lists of strings."""
    import pyarrow as pa
    import pyarrow.compute as pc

    array = _as_array(values)
    if pa.types.is_list(array.type) or pa.types.is_large_list(array.type):
        parents = np.asarray(pc.list_parent_indices(array), np.int64)
        array = pc.list_flatten(array)
    else:
        parents = np.arange(len(array), dtype=np.int64)
    encoded = pc.dictionary_encode(pc.cast(array, pa.string()))
    present = np.asarray(encoded.indices.is_valid(), bool)  # a null value is in no group
    codes = np.asarray(encoded.indices.fill_null(0), np.int64)[present]
    parents = parents[present]
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(encoded.dictionary) + 1))
    names = encoded.dictionary.to_pylist()
    rows = {str(names[j]): np.unique(parents[order[bounds[j]:bounds[j + 1]]]) for j in range(len(names))}
    return {name: rows[name] for name in sorted(rows, key=natural_key) if len(rows[name])}


class FacetIndex:
    """Row positions of every value of every facet of one split, and its row ids."""

    def __init__(self, ids, facets: Mapping[str, object], labels: Mapping[str, str]):
        self.ids = _as_array(ids)
        self.labels = dict(labels)
        self.rows: dict[str, dict[str, np.ndarray]] = {name: _value_rows(values) for name, values in facets.items()}

    def __len__(self) -> int:
        return len(self.ids)

    def position(self, row_id: str) -> int | None:
        """The row position of ``row_id`` (None when the split has no such row)."""
        import pyarrow.compute as pc

        found = pc.index(self.ids, value=str(row_id)).as_py()
        return None if found < 0 else int(found)

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
