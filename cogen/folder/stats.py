"""What the generation statistics of a manifest say: attempts, acceptance, no-op shares.

Every shard records counts (``manifests/<config>.json``, ``splits.<split>.stats``): one per
rejection cause of its family (``accepted`` included), plus counters that are not attempts:

* ``regenerated``: samples redrawn by the duplicate plan;
* ``noops``: samples whose first valid attempt left the grid unchanged (families whose card has
  a no-op table): under
  ``degenerate: keep`` that attempt is the sample, so these are its no-ops; under ``reject`` it
  was redrawn, and these are the no-ops the split would have had with ``keep`` (the random draws
  of both modes agree up to that attempt);
* ``size_redraws``: times a sample that balances object sizes drew new ones after failing
  with its first draw for a tenth of its attempt budget.

A ``degenerate`` rejection is an attempt that was valid in every other respect but left the
grid unchanged.
"""

from __future__ import annotations

__all__ = ["NOT_ATTEMPTS", "attempts", "attempts_per_sample", "noop_share"]

#: Counters of a split's statistics that do not count attempts.
NOT_ATTEMPTS = ("regenerated", "noops", "size_redraws")


def attempts(stats: dict[str, int]) -> int:
    """Attempts the sampler made (accepted and rejected, every cause)."""
    return sum(count for name, count in stats.items() if name not in NOT_ATTEMPTS)


def attempts_per_sample(stats: dict[str, int]) -> float | None:
    """Attempts per accepted sample (None when nothing was accepted)."""
    accepted = stats.get("accepted", 0)
    return attempts(stats) / accepted if accepted else None


def noop_share(stats: dict[str, int]) -> float | None:
    """Share of samples that are (``degenerate: keep``) or would have been (``reject``) no-ops.
    None when nothing was accepted or the statistics predate the count (generator version 1)."""
    if "noops" not in stats or not stats.get("accepted"):
        return None
    return stats["noops"] / stats["accepted"]
