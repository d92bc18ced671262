"""COGITAO's text for the dataset card: what changes between in-domain and out-of-domain data."""

from __future__ import annotations

__all__ = ["cogitao_shift", "untrained_pairs"]


def _span(values) -> str:
    low, high = values
    return f"{low}" if low == high else f"{low}–{high}"


def _grid(grid: dict) -> str:
    height, width = grid["height"], grid["width"]
    if height == width:
        return f"{height[0]}x{height[0]}" if height[0] == height[1] else _span(height)
    return f"{_span(height)} x {_span(width)}"


def _depths(sequences: list) -> str:
    return _span((min(map(len, sequences)), max(map(len, sequences))))


def _sequence_set(sequence_set: dict) -> str:
    sequences = sequence_set.get("sequences") or []
    if len(sequences) == 1:
        return "sequence"
    if sequences:
        plural = "s" if len(sequences) > 1 else ""
        return f"{len(sequences)} sequence{plural} (depth {_depths(sequences)})"
    pool = sequence_set.get("pool") or []
    excluded = len(sequence_set.get("exclude") or [])
    text = f"depth-{sequence_set.get('depth')} sequences over {len(pool)} transformations"
    return text + (f", {excluded} excluded" if excluded else "")


def _listed(sequence_set: dict, limit: int = 2) -> str:
    sequences = sequence_set.get("sequences") or []
    if not sequences or len(sequences) > limit:
        return ""
    return ": " + ", ".join("`" + " → ".join(s) + "`" for s in sequences)


def _property(name: str) -> str:
    return name.removeprefix("is_shape_").replace("_", " ")


def _value(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list) and len(value) == 2:
        return _span(value)
    return str(value)


def _objects(before: dict, after: dict) -> list[str]:
    parts = []
    if before["count"] != after["count"]:
        parts.append(f"objects per grid {_span(before['count'])} → {_span(after['count'])}")
    where_before, where_after = dict(before["where"]), dict(after["where"])
    changed = {name: (where_before.get(name, "any"), where_after.get(name, "any"))
               for name in sorted(set(where_before) | set(where_after))
               if where_before.get(name) != where_after.get(name)}
    if "rows" in changed and changed["rows"] == changed.get("cols"):
        old, new = changed.pop("rows")
        changed.pop("cols")
        parts.append(f"object size {_square(old)} → {_square(new)}")
    parts += [f"{_property(name)} {_value(old)} → {_value(new)}" for name, (old, new) in changed.items()]
    return parts


def _square(span) -> str:
    if not isinstance(span, list):
        return str(span)
    return "–".join(dict.fromkeys(f"{side}x{side}" for side in span))


def _pairs(sequence) -> list[tuple[str, str]]:
    return [(sequence[i], sequence[i + 1]) for i in range(len(sequence) - 1)]


def untrained_pairs(in_domain: dict, out_of_domain: dict) -> tuple[int, int, list[tuple[str, str]]]:
    """How many held-out sequences deeper than 2 contain an adjacent ordered pair that no in-domain
    sequence contains, out of how many such sequences, and those pairs (explicit lists only)."""
    trained = {pair for seq in in_domain.get("sequences") or [] for pair in _pairs(seq)}
    deep = [seq for seq in out_of_domain.get("sequences") or [] if len(seq) > 2]
    untrained = [[pair for pair in _pairs(seq) if pair not in trained] for seq in deep]
    pairs = sorted({pair for found in untrained for pair in found})
    return sum(1 for found in untrained if found), len(deep), pairs


def _untrained_text(in_domain: dict, out_of_domain: dict) -> str:
    count, deep, pairs = untrained_pairs(in_domain, out_of_domain)
    if not deep:
        return ""
    if not count:
        return f"every one of the {deep} held-out sequences is made of trained pairs"
    from cogen.families.cogitao.spec import always_identity

    names = ", ".join("`" + " → ".join(pair) + "`" + (" (the identity)" if always_identity(pair) else "")
                      for pair in pairs)
    return f"{count} of the {deep} held-out sequences contain a pair never trained: {names}"


def cogitao_shift(manifest: dict) -> str:
    """COGITAO: held-out sequences and/or grid and object changes between the two domains; for
    held-out sequences deeper than 2, how many contain a pair never trained."""
    spec = manifest.get("spec") or {}
    inside, outside = spec.get("in_domain"), spec.get("out_of_domain")
    if not inside:
        return ""
    if not outside:
        return f"no out-of-domain split; {_sequence_set(inside['sequences'])}{_listed(inside['sequences'], 1)}"
    parts = []
    if inside["sequences"] != outside["sequences"]:
        parts.append(f"{_sequence_set(inside['sequences'])} → held out: {_sequence_set(outside['sequences'])}"
                     f"{_listed(outside['sequences'])}")
        untrained = _untrained_text(inside["sequences"], outside["sequences"])
        if untrained:
            parts.append(untrained)
    else:
        parts.append(f"same {_sequence_set(inside['sequences'])}{_listed(inside['sequences'], 1)}")
    if inside["grid"] != outside["grid"]:
        parts.append(f"grid {_grid(inside['grid'])} → {_grid(outside['grid'])}")
    parts += _objects(inside["objects"], outside["objects"])
    return "; ".join(parts)
