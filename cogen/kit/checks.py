"""What a family's ``checks.py`` needs: :class:`FamilyChecks`, a base class of the ``checks`` role with the
determinism check built in, and collectors for the checks most families run.

``cogen verify`` decodes every row group of every file of a config and hands it, in split and file order, to the
family's checks (``checks(data) -> FamilyChecks``; ``data`` is the config's :class:`ConfigData`: its folder,
manifest, and whether to re-derive every row). ``finish()`` then returns the :class:`Check` s. Nothing may be
trusted from the build: a check recomputes what the build claims from the rows, with code of its own (not the
sampler's), so a bug in one does not hide in the other.

* **re-derivation** (:class:`Rederived`): each row's output made again from its input; on the rows
  :meth:`ConfigData.rederive_mask` picks (about 10,000 per config; every row with ``cogen verify --full``);
* **held-out rules** (:class:`HeldOut`): what out-of-domain rows hold, in-domain rows must not hold; a per-row rule
  (a value in its split's range) is a list of problems given to :meth:`FamilyChecks.check`;
* **uniqueness** (:class:`UniqueKeys`): an independent key per row, no key twice across the config's splits;
* **determinism** (:class:`Determinism`, in every :class:`FamilyChecks`): rows of every split regenerated from
  the manifest alone (the builder's ``regenerate_table``; every row of the splits that fit in the sample, random
  rows of every row group of the others) and compared row for row.

Every check needs a tamper that makes it fail alone (the family's ``testing`` module, :mod:`cogen.kit.testing`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any, ClassVar

import numpy as np

from cogen.pipeline.check import Check
from cogen.pipeline.verify import ConfigData, Determinism
from cogen.specs.splits import ID_SPLITS, OOD_SPLITS

__all__ = ["Check", "ConfigData", "Determinism", "FamilyChecks", "HeldOut", "Rederived", "UniqueKeys"]

#: Failing rows a check names in its detail.
SHOWN = 3


def _detail(problems: list[str], passed: str) -> str:
    if not problems:
        return passed
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return problems[0] + more


class FamilyChecks:
    """The ``checks`` of one config, fed decoded row groups; the determinism check comes with it.

    A subclass sets :attr:`builder` (a :class:`cogen.kit.build.FamilyBuilder`, whose ``regenerate_table``
    regenerates shards; or overrides :meth:`regenerate`), takes in rows in :meth:`take` and returns its own
    checks from :meth:`results`; :meth:`finish` adds the determinism check after them.
    """

    builder: ClassVar[Any] = None

    def __init__(self, data: ConfigData):
        self.data = data
        self.rows = 0
        self.determinism = Determinism(data, self.regenerate)

    @property
    def config(self) -> str:
        """The config's name."""
        return self.data.config

    def regenerate(self, manifest: dict, split: str, start: int, stop: int):
        """Rows ``[start, stop)`` of ``split`` made again from ``manifest`` alone (a pyarrow table)."""
        return self.builder.regenerate_table(manifest, split, start, stop)

    def add(self, split: str, file: str, start: int, table) -> None:
        """Take in one decoded row group of ``file`` (rows ``start...`` of ``split``)."""
        self.rows += table.num_rows
        self.take(split, file, start, table)
        self.determinism.add(split, file, start, table)

    def take(self, split: str, file: str, start: int, table) -> None:
        """What the family's checks take from a row group (nothing by default)."""

    def results(self) -> list[Check]:
        """The family's own checks (before determinism)."""
        return []

    def finish(self) -> list[Check]:
        """Every check of the config: :meth:`results`, then determinism."""
        return [*self.results(), self.determinism.check()]

    def check(self, name: str, problems: list[str], passed: str) -> Check:
        """The check ``name`` of this config: failed with the first of ``problems`` (and how many more), or
        passed saying ``passed``."""
        return Check(self.config, name, not problems, _detail(problems, passed))


class Rederived:
    """The re-derivation of outputs from inputs, on the rows :meth:`ConfigData.rederive_mask` picks.

    ``problem(row) -> str | None`` says what is wrong with one row (a dict of its columns), with the family's own
    code: the check fails with the first rows named, ``"<id>: <problem>"``.
    """

    def __init__(self, data: ConfigData, problem: Callable[[dict], str | None], name: str = "re-derived outputs"):
        self.data, self.problem, self.name = data, problem, name
        self.rows = 0
        self.wrong: list[str] = []

    def add(self, split: str, start: int, table) -> None:
        """Re-derive the picked rows of ``table`` (rows ``start...`` of ``split``)."""
        picked = np.flatnonzero(self.data.rederive_mask(split, start, table.num_rows))
        if not len(picked):
            return
        self.rows += len(picked)
        for row in table.take(picked).to_pylist():
            if (problem := self.problem(row)) is not None:
                self.wrong.append(f"{row.get('id', '?')}: {problem}")

    def check(self, passed: str) -> Check:
        """The check: ``passed`` says what was re-derived (after "every row: " or "a sample of N rows: ")."""
        scope = "every row" if self.rows == self.data.total_rows() else \
            f"a sample of {self.rows:,} rows (`cogen verify --full`: every row)"
        problems = [f"{len(self.wrong)} of {self.rows:,} rows differ: " + "; ".join(self.wrong[:SHOWN])] if self.wrong \
            else []
        return Check(self.data.config, self.name, not problems, _detail(problems, f"{scope}: {passed}"))


class UniqueKeys:
    """No key twice across the splits of a config: ``add`` a key per row (bytes, a string, a tuple..., or the rows
    of a NumPy array), computed from the rows with code of the check's own."""

    def __init__(self, name: str, what: str):
        self.name, self.what = name, what
        self.first: dict[Hashable, str] = {}
        self.repeats: list[str] = []

    def add(self, split: str, start: int, keys: Iterable[Hashable] | np.ndarray) -> None:
        """The keys of rows ``start...`` of ``split``, in order."""
        if isinstance(keys, np.ndarray):
            keys = [row.tobytes() for row in np.ascontiguousarray(keys).reshape(len(keys), -1)]
        for offset, key in enumerate(keys):
            place = f"{split}[{start + offset}]"
            earlier = self.first.setdefault(key, place)
            if earlier != place:
                self.repeats.append(f"{place} repeats {earlier}")

    def check(self, config: str) -> Check:
        """The check of ``config``."""
        problems = [f"{len(self.repeats)} repeated {self.what}, e.g. {self.repeats[0]}"] if self.repeats else []
        return Check(config, self.name, not problems, _detail(problems, f"{len(self.first)} distinct {self.what}"))


class HeldOut:
    """What out-of-domain rows hold and in-domain rows must not: ``add`` each row's value (a sequence, a triplet,
    a count...) by split; the check fails on a value seen on both sides."""

    def __init__(self, name: str, what: str):
        self.name, self.what = name, what
        self.seen: dict[str, set] = {}

    def add(self, split: str, values: Iterable[Hashable]) -> None:
        """The values of some rows of ``split``."""
        self.seen.setdefault(split, set()).update(values)

    def check(self, config: str) -> Check:
        """The check of ``config`` (passes when it has no out-of-domain split)."""
        inside = set().union(*(self.seen[s] for s in ID_SPLITS if s in self.seen))
        outside = set().union(*(self.seen[s] for s in OOD_SPLITS if s in self.seen))
        if not any(s in self.seen for s in OOD_SPLITS):
            return Check(config, self.name, True, "no out-of-domain splits")
        both = sorted(inside & outside, key=repr)
        detail = f"{len(both)} out-of-domain {self.what} also in domain, e.g. {both[0]!r}" if both else \
            f"{len(inside)} in-domain and {len(outside)} out-of-domain {self.what}, disjoint"
        return Check(config, self.name, not both, detail)
