"""What ``cogen view`` answers, independent of HTTP: configs, filters, pages of drawn rows.

:class:`ViewApp` opens a dataset (:func:`cogen.view.source.open_source`) and, per (config,
split), opens its shards lazily (:class:`~cogen.view.split.SplitRows`), builds the filter index
on first use (:class:`~cogen.view.index.FacetIndex`) and, for the split a predictions file
answers, scores it once with the family's viewer, as ``cogen eval`` does. A page without filters
reads only the row groups it shows.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import numpy as np

from cogen.errors import CogenError, DataError
from cogen.family import family
from cogen.specs.splits import SPLITS
from cogen.view.index import FacetIndex
from cogen.view.source import open_source
from cogen.view.split import SplitRows

__all__ = ["MAX_PAGE", "ViewApp", "predictions_target"]

#: The most rows one page may ask for.
MAX_PAGE = 200


def _first_id(path: Path) -> str | None:
    """The ``id`` of the first record of a ``.jsonl`` or ``.parquet`` predictions file."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        ids = pq.read_table(path, columns=["id"]).column("id").to_pylist()
        return str(ids[0]) if ids else None
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):  # not JSON, or nested too deep to parse: a format error
                continue
            if isinstance(record, dict) and isinstance(record.get("id"), str):
                return record["id"]
    return None


def predictions_target(path: Path, pairs: list[tuple[str, str]]) -> tuple[str, str]:
    """The (config, split) whose row ids (``<config>-<split>-<index>``) a predictions file's first id names."""
    first = _first_id(path)
    matches = [(c, s) for c, s in pairs if first and re.match(rf"{re.escape(c)}-{re.escape(s)}-\d+(-|$)", first)]
    if not matches:
        raise DataError(f"{path}: its first id {first!r} names no config and split of this dataset; "
                        "give them with --config and --split")
    return max(matches, key=lambda pair: len(pair[0]))


class _Split:
    """One split's rows, its filter index and its scored predictions, each made on first use."""

    def __init__(self, app: ViewApp, config: str, split: str):
        self.app, self.config, self.split = app, config, split
        self.manifest = app.manifest(config)
        self.viewer = family(self.manifest.get("family")).load("viewer")
        self.rows = SplitRows(app.source, self.manifest, split)
        self.lock, self._score_lock, self._start_lock = threading.Lock(), threading.Lock(), threading.Lock()
        self._index = self._scored = self._score_error = self._scoring = None

    def index(self) -> FacetIndex:
        with self.lock:
            if self._index is None:
                import pyarrow as pa

                ids, facets = [], {name: [] for name in self.viewer.FACETS}
                for batch in self.rows.batches(["id", *self.viewer.FACET_COLUMNS]):
                    table = pa.Table.from_batches([batch])
                    ids.append(table.column("id").combine_chunks())
                    for name, values in self.viewer.facets(table).items():
                        facets[name] += values.chunks if isinstance(values, pa.ChunkedArray) else [pa.array(values)]
                self._index = FacetIndex(pa.chunked_array(ids, pa.string()),
                                         {name: pa.chunked_array(parts) for name, parts in facets.items() if parts},
                                         self.viewer.FACETS)
            return self._index

    def scored(self, wait: bool = True):
        """The scored predictions of this split (None when the predictions answer another split, or,
        with ``wait=False``, while another thread is still scoring them)."""
        if (self.config, self.split) != self.app.predicted:
            return None
        if self._scored is None and not wait and self._score_lock.locked():
            return None
        with self._score_lock:
            if self._scored is None:
                if self._score_error is not None:
                    raise self._score_error
                from cogen.folder import read_split

                try:
                    data = read_split(self.app.location, self.config, self.split)
                    self._scored = self.viewer.score(data, self.app.predictions)
                except CogenError as error:
                    self._score_error = error
                    raise
                finally:
                    _release_memory()
            return self._scored

    def scored_if_ready(self):
        """The scored predictions when scoring has finished (a failure raised), else None, scoring started
        in the background: what a request that must not wait asks."""
        if self._scored is None and self._score_error is None:
            self.start_scoring()
            return None
        return self.scored()

    def start_scoring(self) -> None:
        """Score the predictions in a background thread (once), so that no request waits for it."""
        with self._start_lock:
            if self._scoring is None:
                self._scoring = threading.Thread(target=self.score_quietly, daemon=True)
                self._scoring.start()

    def score_quietly(self) -> None:
        """:meth:`scored`, keeping a failure for the next request to report."""
        try:
            self.scored()
        except CogenError:
            pass


class ViewApp:
    """A dataset (folder or Hub repo) and an optional predictions file, as the page sees them."""

    def __init__(self, location: str | Path, predictions: str | Path | None = None, config: str | None = None,
                 split: str | None = None):
        self.location, self.source = str(location), open_source(location)
        self._manifests: dict[str, dict] = {}
        self._splits: dict[tuple[str, str], _Split] = {}
        self._lock = threading.Lock()
        self.predictions = Path(predictions).expanduser() if predictions else None
        self.predicted = self._predicted(config, split) if self.predictions else None
        self.start = self.predicted or self._start(config, split)

    def start_scoring(self) -> None:
        """Score the predictions in a background thread, so that the first page need not wait for it."""
        if self.predicted:
            self.split_of(*self.predicted).start_scoring()

    def manifest(self, config: str) -> dict:
        """The manifest of ``config`` (read once); a clear error for an unknown config."""
        if config not in self._manifests:
            if config not in self.source.configs():
                raise DataError(f"{self.source.name} has no config {config!r}; it has {', '.join(self.source.configs())}")
            self._manifests[config] = self.source.manifest(config)
        return self._manifests[config]

    def _pairs(self) -> list[tuple[str, str]]:
        return [(c, s) for c in self.source.configs() for s in self.manifest(c).get("splits", {})]

    def _predicted(self, config: str | None, split: str | None) -> tuple[str, str]:
        if not self.predictions.is_file() or self.predictions.suffix not in (".jsonl", ".parquet"):
            raise DataError(f"{self.predictions}: no such .jsonl or .parquet predictions file")
        if config and split:
            self.split_of(config, split)
            return config, split
        config_split = predictions_target(self.predictions, self._pairs())
        if (config and config != config_split[0]) or (split and split != config_split[1]):
            raise DataError(f"{self.predictions}: its ids name {config_split[0]} / {config_split[1]}; "
                            "give both --config and --split to score it against another split")
        return config_split

    def _start(self, config: str | None, split: str | None) -> tuple[str, str]:
        configs = self.source.configs()
        config = config or (configs[0] if configs else None)
        if config is None:
            raise DataError(f"{self.source.name}: no config to show")
        splits = list(self.manifest(config).get("splits", {}))
        if split is None:
            split = next((s for s in SPLITS if s in splits), splits[0] if splits else None)
        self.split_of(config, split)
        return config, split

    def split_of(self, config: str, split: str | None) -> _Split:
        """The rows, index and predictions of one split (opened on first use)."""
        with self._lock:
            key = (config, str(split))
            if key not in self._splits:
                self._splits[key] = _Split(self, config, str(split))
            return self._splits[key]

    def info(self) -> dict:
        """The dataset's configs and splits (rows, domain), where the page starts, and the predictions file."""
        configs = []
        for config in self.source.configs():
            manifest = self.manifest(config)
            record = family(manifest.get("family"))
            splits = [{"name": s, "rows": int(v.get("rows", 0)) if isinstance(v, dict) else 0, "domain": record.domain(s)}
                      for s, v in manifest.get("splits", {}).items()]
            configs.append({"name": config, "family": record.title, "splits": splits})
        predicted = ({"config": self.predicted[0], "split": self.predicted[1], "file": self.predictions.name}
                     if self.predicted else None)
        return {"name": self.source.name, "configs": configs, "start": {"config": self.start[0], "split": self.start[1]},
                "predictions": predicted}

    def filters(self, config: str, split: str) -> dict:
        """The split's facets with counts, and with predictions: error categories, the accuracy bars (worst
        first), the summary; ``{"pending": true}`` while the predictions are still being scored, so that the
        page's dataset filters work at once (it asks again)."""
        part = self.split_of(config, split)
        index = part.index()
        out = {"rows": len(index), "facets": index.options(), "predictions": None}
        if (config, split) == self.predicted:
            scored = part.scored_if_ready()
            out["predictions"] = {"pending": True} if scored is None else \
                _predictions_overview(scored, index, part.viewer.SUMMARY_FACET)
        return out

    def page(self, config: str, split: str, offset: int = 0, limit: int = 12, chosen: dict | None = None,
             wrong_only: bool = False, error: str | None = None, row_id: str | None = None) -> dict:
        """One page of drawn rows of the rows that pass the filters (``row_id``: the page holding that row)."""
        part = self.split_of(config, split)
        limit = max(1, min(int(limit), MAX_PAGE))
        scored = part.scored(wait=bool(wrong_only or error))
        positions = self._positions(part, chosen or {}, wrong_only, error, scored)
        total = len(part.rows) if positions is None else len(positions)
        if row_id is not None:
            offset = self._offset_of(part, positions, row_id, limit)
        offset = max(0, min(int(offset), max(total - 1, 0)))
        shown = np.arange(offset, min(offset + limit, total)) if positions is None else positions[offset:offset + limit]
        records = part.rows.rows(shown, list(part.viewer.COLUMNS))
        drawn = [self._draw(part, scored, int(k), record) for k, record in zip(shown.tolist(), records, strict=True)]
        return {"config": config, "split": split, "total": int(total), "offset": int(offset), "rows": drawn,
                "scored": scored is not None}

    @staticmethod
    def _positions(part: _Split, chosen: dict, wrong_only: bool, error: str | None, scored) -> np.ndarray | None:
        if not chosen and not wrong_only and not error:
            return None
        keep = part.index().mask(chosen)
        if (wrong_only or error) and scored is None:
            raise DataError(f"{part.config} / {part.split} has no predictions to filter by")
        if wrong_only:
            keep &= scored.wrong
        if error:
            keep &= np.array([error in found for found in scored.errors], bool)
        return np.flatnonzero(keep)

    @staticmethod
    def _offset_of(part: _Split, positions, row_id: str, limit: int) -> int:
        position = part.index().position(row_id)
        if position is None:
            raise DataError(f"{part.config} / {part.split} has no row {row_id!r}")
        if positions is not None:
            where = np.flatnonzero(positions == position)
            if not len(where):
                raise DataError(f"row {row_id} does not pass the current filters")
            position = int(where[0])
        return position - position % limit

    @staticmethod
    def _draw(part: _Split, scored, position: int, record: dict) -> dict:
        detail = scored.detail(position) if scored is not None else None
        drawing = part.viewer.draw(record, part.manifest, detail)
        drawing["position"] = position
        if scored is not None:
            drawing["verdict"] = {"wrong": bool(scored.wrong[position]), "errors": list(scored.errors[position]),
                                  "correct": int(scored.correct[position]), "expected": int(scored.expected[position])}
        return drawing


def _release_memory() -> None:
    """Give the memory Arrow's allocator kept from a whole split's decoding back to the system."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()


def _predictions_overview(scored, index: FacetIndex, summary_facet: str | None) -> dict:
    """Error categories with counts, accuracy per value of the summary facet, and ``cogen eval``'s summary."""
    counts: dict[str, int] = {}
    for found in scored.errors:
        for name in found:
            counts[name] = counts.get(name, 0) + 1
    categories = [name for name in scored.categories if name in counts] + sorted(set(counts) - set(scored.categories))
    bars = []
    for value, rows in index.groups(summary_facet).items() if summary_facet else ():
        expected, correct = int(scored.expected[rows].sum()), int(scored.correct[rows].sum())
        bars.append({"value": value, "expected": expected, "correct": correct,
                     "accuracy": correct / expected if expected else None, "wrong_rows": int(scored.wrong[rows].sum())})
    bars.sort(key=lambda bar: (bar["accuracy"] is None, bar["accuracy"] or 0.0, -bar["wrong_rows"]))  # worst first
    return {"wrong_rows": int(scored.wrong.sum()), "errors": [[name, counts[name]] for name in categories],
            "facet": summary_facet, "bars": bars, "summary": [[str(k), str(v)] for k, v in scored.summary]}
