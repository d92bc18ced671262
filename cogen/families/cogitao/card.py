"""COGITAO's text for the dataset card (:data:`CARD`): what its studies measure, what changes between
in-domain and out-of-domain data, its headline metric, its paper, its variants, its task-code tokens,
what rejects a sampling attempt, its no-op table and the object bank it reads."""

from __future__ import annotations

import re
from types import MappingProxyType

from cogen.families.cogitao.differences import DIFFERENCES
from cogen.kit.card import FamilyCard, Paper, grouped_lines, markdown_table

__all__ = ["CARD", "PAPER", "bank_lines", "cogitao_shift", "measures", "statistics_note", "study_kind",
           "transformations_section", "untrained_pairs"]


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


def study_kind(setting: str) -> str:
    """``C`` (CompGen), ``G`` (EnvGen), ``S`` (sample efficiency) or ``custom``, from the spec's name."""
    core = setting.removesuffix("-as-run")
    if re.fullmatch(r"C\d", core):
        return "C"
    if re.fullmatch(r"G\d", core):
        return "G"
    return "S" if core == "S" else "custom"


def _cores(settings: list[str]) -> set[str]:
    return {setting.removesuffix("-as-run") for setting in settings}


def _either(items: list[str]) -> str:
    """``a``, ``a or b``, ``a, b, or c``."""
    if len(items) < 3:
        return " or ".join(items)
    return ", ".join(items[:-1]) + ", or " + items[-1]


def _compgen(settings: list[str]) -> str:
    cores = _cores(settings)
    held = [name for name in ("C1", "C2") if name in cores]
    asks = [f"held-out compositions ({', '.join(held)})"] if held else []
    if "C3" in cores:
        asks.append("deeper ones (C3)" if held else "deeper compositions (C3)")
    return (f"**COGITAO CompGen ({', '.join(settings)}).** Training shows three transformations and some of their "
            f"compositions; the out-of-domain splits ask for {' or '.join(asks) or 'held-out compositions'}. "
            "Nothing held out is ever trained on.")


#: What the out-of-domain data of each EnvGen study changes.
_ENVIRONMENTS = {"G1": "more objects", "G2": "larger grids", "G3": "larger objects", "G4": "more complex objects"}


def _envgen(settings: list[str]) -> str:
    cores = _cores(settings)
    changes = [f"{change} ({name})" for name, change in _ENVIRONMENTS.items() if name in cores]
    if "G5" in cores:
        changes.append("all of these at once (G5)" if len(changes) == len(_ENVIRONMENTS)
                       else "more objects, larger grids and larger, more complex objects at once (G5)")
    return (f"**COGITAO EnvGen ({', '.join(settings)}).** The transformation stays the same; the environment "
            f"changes between in-domain and out-of-domain data: {_either(changes) or 'another environment'}.")


def measures(kind: str, settings: list[str]) -> str:
    """The card's paragraph on the studies ``settings`` of one kind, naming only the studies they are."""
    if kind == "C":
        return _compgen(settings)
    if kind == "G":
        return _envgen(settings)
    if kind == "S":
        return (f"**COGITAO sample efficiency ({', '.join(settings)}).** One transformation, trained on 100 to "
                "100,000 samples, tested in domain.")
    return (f"**COGITAO, custom studies ({', '.join(settings)}).** Transformation sequences on objects, with the "
            "in-domain and out-of-domain conditions each config's row of the table below describes.")


def variants_note(manifests: list[dict]) -> str:
    """The paragraph on the paper's-text and as-run variants, when the folder holds either."""
    if not any(m.get("variant") in ("paper-text", "as-run") for m in manifests):
        return ""
    return ("COGITAO configs come in two variants. The *paper's text* (configs named as in the paper, `C1-1`) "
            "follows the COGITAO paper wherever it is explicit: its sequence lists, object sizes and grids. *As "
            "run* (configs named `as-run-C1-1`) reproduces the conditions the paper's numbers came from, the "
            "authors' code: 15x15 grids for C1 and C2, its sequence lists and experiment 4, its object sizes, "
            "samples whose output equals their input kept, and object counts and sizes redrawn with every failed "
            "attempt. Each study below says which it is.\n\n")


def transformations_section(manifests: list[dict]) -> str:
    """The card's section on the transformations and their task-code tokens."""
    from cogen.engine.registry import markdown_table

    return ("## Transformations\n\nThe 28 COGITAO transformations and the token ids used in task codes (token 0 "
            "is the identity,\nused to pad sequences).\n\n" + markdown_table().rstrip("\n") + "\n\n")


_SPLIT_ORDER = ("train", "validation", "test", "validation_ood", "test_ood")


def _domains(manifest: dict) -> list[dict]:
    spec = manifest.get("spec") or {}
    return [spec[part] for part in ("in_domain", "out_of_domain") if spec.get(part)]


def _balance(manifest: dict) -> str:
    factors = [factor for factor in ("count", "size") if any(factor in (d.get("balance") or ()) for d in _domains(manifest))]
    labels = {"count": "object count", "size": "object sizes"}
    return " and ".join(labels[f] for f in factors) or "–"


def _degenerate(manifest: dict) -> str:
    return ", ".join(sorted({d.get("degenerate") for d in _domains(manifest)} - {None})) or "–"


def _noop_table(manifests: list[dict]) -> str:
    from cogen.folder.stats import noop_share

    splits = [s for s in _SPLIT_ORDER if any(s in m["splits"] for m in manifests)]
    rows = []
    for manifest in manifests:
        stats = [(manifest["splits"].get(split, {}).get("stats") or {}) for split in splits]
        shares = [noop_share(found) for found in stats]
        redraws = sum(found.get("size_redraws", 0) for found in stats)
        rows.append([f"`{manifest['config']}`", _degenerate(manifest), *(f"{v:.1%}" if v is not None else "–" for v in shares),
                     _balance(manifest), f"{redraws:,}"])
    return markdown_table(["config", "degenerate", *(f"{s} no-ops" for s in splits), "kept through retries",
                           "size redraws"], rows, ["---", "---"] + ["---:"] * len(splits) + ["---", "---:"])


def statistics_note(manifests: list[dict]) -> str:
    """What rejects an attempt of COGITAO's sampler, and its no-op table."""
    if not manifests:
        return ""
    return ("COGITAO samples are drawn by rejection: an attempt is rejected when objects do not fit, a "
            "transformation cannot be applied, an object leaves the grid or two objects overlap, or (unless the "
            "spec says `degenerate: keep`) when the output equals the input.\n\n"
            "No-op samples: the share of samples whose output equals their input (`degenerate: keep`), or would "
            "have (`reject`: the first valid draw of these samples left the grid unchanged and was redrawn, so "
            "the split holds none). With `balance: difficulty` a sample draws once what it keeps through its "
            "retries (its object count and, out of domain where the experiment shifts object sizes, each "
            "object's height), so accepted samples are not biased toward the easy draws; a sample whose heights "
            "do not fit for a tenth of its attempt budget draws new ones (size redraws).\n\n"
            + _noop_table(manifests))


def bank_lines(manifests: list[dict]) -> list[str]:
    """The object bank the configs' samples were drawn from (SHA-256 of ``bank.bin``)."""
    if not manifests:
        return []
    return ["", "Object bank of the COGITAO configs (SHA-256 of `bank.bin`):", ""] + grouped_lines(
        manifests, lambda m: f"`{m['bank_sha256']}`" if "bank_sha256" in m else "not used (no bank objects)")


#: The authors' surnames as the arXiv listing gives them; first names are left out rather than guessed
#: (the seed text is the anonymous review version).
PAPER = Paper(
    "COGITAO", "COGITAO: A Procedural Object-Centric Framework to Evaluate Compositional Generalization",
    "Taoudi-Benchekroun, Troyan, Sager, Gerber, Tuggener, Grewe", "2509.05249", "arXiv 2025",
    """@misc{taoudi2025cogitao,
  title         = {{COGITAO}: A Procedural Object-Centric Framework to Evaluate Compositional Generalization},
  author        = {Taoudi-Benchekroun and Troyan and Sager and Gerber and Tuggener and Grewe},
  year          = {2025},
  eprint        = {2509.05249},
  archivePrefix = {arXiv},
  url           = {https://arxiv.org/abs/2509.05249}
}""")

CARD = FamilyCard(
    shift=cogitao_shift,
    measures=measures,
    study_kind=study_kind,
    papers=(PAPER,),
    differences=DIFFERENCES,
    configs_note=variants_note,
    variants=MappingProxyType({"paper-text": "the paper's text", "as-run": "as run by the authors' code",
                               "custom": "custom spec"}),
    captions=MappingProxyType({"": "transformations"}),
    headline=("Exact-match accuracy (grid accuracy) is the headline metric: a prediction counts only when every "
              "cell of the output grid, and its size, match; `cogen eval` adds pixel and object accuracies and "
              "stubbornness."),
    array_notes=MappingProxyType({"tokens": "(rows, 4) transformation token ids, padded with 0 (the identity)"}),
    statistics_note=statistics_note,
    version_lines=bank_lines,
    sections=(transformations_section,),
)
