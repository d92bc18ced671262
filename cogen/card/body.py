"""Fill the ``{{ placeholder }}`` slots of the dataset-card template (``hub_card.md``).

Each placeholder is one function of a :class:`CardContext` (the folder's manifests, the repo id,
the previews that exist); everything in the card is derived from the manifests, the
transformation registry and the card text of each family the folder holds (the
:class:`~cogen.card.family_card.FamilyCard` of its record), never typed twice.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from cogen.card._studies import shift_text
from cogen.card.family_card import grouped_lines, markdown_table
from cogen.card.papers import paper_link
from cogen.card.settings import DEFAULT_SETTINGS, CardSettings
from cogen.family import DEFAULT_FAMILY, family
from cogen.safe_text import markdown_cell

if TYPE_CHECKING:
    from cogen.card.family_card import FamilyCard

__all__ = ["PLACEHOLDERS", "CardContext", "manifest_checksums", "render_body"]

#: Shown in the loading examples until the folder is pushed (``cogen push`` fills in the repo).
REPO_PLACEHOLDER = "<org>/<name>"
_SPLIT_ORDER = ("train", "validation", "test", "validation_ood", "test_ood")
@dataclass
class CardContext:
    """What the placeholders read: the manifests by config, the folder, the repo id, the previews."""

    manifests: dict[str, dict]
    folder: Path
    repo_id: str = REPO_PLACEHOLDER
    previews: dict[str, Path] = field(default_factory=dict)
    settings: CardSettings = DEFAULT_SETTINGS

    def families(self) -> list[str]:
        """The families of the folder's configs, in card order."""
        return list(dict.fromkeys(m.get("family", DEFAULT_FAMILY) for m in self.manifests.values()))

    def papers(self):
        """The papers of the families the folder holds."""
        return [paper for name in self.families() for paper in card_text(name).papers]

    def studies(self) -> dict[tuple[str, str], list[str]]:
        """Configs grouped by (family, study), in card order."""
        groups: dict[tuple[str, str], list[str]] = {}
        for name, manifest in self.manifests.items():
            groups.setdefault((manifest.get("family", DEFAULT_FAMILY), manifest.get("setting", "")), []).append(name)
        return groups

    def splits(self) -> list[str]:
        """Every split name used by some config, the usual five first."""
        names = {s for m in self.manifests.values() for s in m["splits"]}
        return [s for s in _SPLIT_ORDER if s in names] + sorted(names - set(_SPLIT_ORDER))


def card_text(family_name: str | None) -> FamilyCard:
    """The card text of a family (the ``card`` role of its record)."""
    return family(family_name).load("card")


def _count(number: int, noun: str, plural: str | None = None) -> str:
    return f"{number:,} {noun if number == 1 else plural or noun + 's'}"


def _load(ctx: CardContext) -> str:
    from cogen.card.snippets import load_section

    return load_section(ctx.manifests, ctx.repo_id)


def _summary(ctx: CardContext) -> str:
    rows = sum(v["rows"] for m in ctx.manifests.values() for v in m["splits"].values())
    size = sum(v["download_bytes"] for m in ctx.manifests.values() for v in m["splits"].values())
    return (f"This repository holds **{_count(len(ctx.manifests), 'config')}** from "
            f"**{_count(len(ctx.studies()), 'study', 'studies')}**: {rows:,} rows, {size / 1e6:,.1f} MB of Parquet.")


def _studies(ctx: CardContext) -> str:
    lines = []
    for (family_name, setting), configs in ctx.studies().items():
        manifest = ctx.manifests[configs[0]]
        description = manifest.get("description", "").strip()
        span = configs[0] if len(configs) == 1 else f"{configs[0]} … {configs[-1]}"
        variant = card_text(family_name).variants.get(manifest.get("variant", ""))
        lines.append(f"- **{setting}** ({family(family_name).title}; {f'variant: {variant}; ' if variant else ''}"
                     f"{_count(len(configs), 'config')}, `{span}`): {description}")
    return "\n".join(lines) or "- (no configs built yet)"


def _configs_table(ctx: CardContext) -> str:
    splits = ctx.splits()
    rows = []
    for name, manifest in ctx.manifests.items():
        sizes = [f"{manifest['splits'][s]['rows']:,}" if s in manifest["splits"] else "–" for s in splits]
        rows.append([f"`{name}`", manifest.get("setting", ""), shift_text(manifest) or "–", *sizes])
    return markdown_table(["config", "study", "what changes between in-domain and out-of-domain data", *splits], rows,
                  ["---", "---", "---"] + ["---:"] * len(splits))


def _columns(ctx: CardContext) -> str:
    seen: dict[tuple, list[str]] = {}
    for name, manifest in ctx.manifests.items():
        seen.setdefault(tuple(manifest["columns"].items()), []).append(name)
    parts = []
    for columns, configs in seen.items():
        record = family(ctx.manifests[configs[0]].get("family"))
        span = configs[0] if len(configs) == 1 else f"{configs[0]} … {configs[-1]}"
        rows = [[f"`{column}`", f"`{type_}`", record.column_notes.get(column, "")] for column, type_ in columns]
        table = markdown_table(["column", "type", "meaning"], rows)
        parts.append(f"{record.title} configs ({len(configs)}, `{span}`):\n\n{table}")
    return "\n\n".join(parts)


def _previews(ctx: CardContext) -> str:
    from cogen.card.preview import PREVIEW_DIR, caption_columns, grid_columns, preview_splits

    parts = []
    for (_, setting), configs in ctx.studies().items():
        images = []
        for name in configs:
            path = ctx.previews.get(name)
            if path is None:
                continue
            manifest = ctx.manifests[name]
            kinds = [kind for kind, *_ in grid_columns(manifest["columns"])]
            bands = [f"{split} {kind}".strip() for split in preview_splits(manifest) for kind in kinds]
            captions = ", ".join(f"`{column}`" for column in dict.fromkeys(caption_columns(manifest).values()))
            note = f", captioned with its {captions}" if captions else ""
            images.append(f"**{name}** (rows, top to bottom: {', '.join(bands)}; each input above its output{note})"
                          f"\n\n![{name}]({PREVIEW_DIR}/{Path(path).name})")
        if images:
            parts.append(f"<details><summary>{setting}: {_count(len(images), 'preview')}</summary>\n\n"
                         + "\n\n".join(images) + "\n\n</details>")
    return "\n\n".join(parts) or "(no previews)"


def _study_kinds(ctx: CardContext) -> dict[tuple[str, str], list[str]]:
    """(family, study kind) -> the studies (spec ``setting`` names) of that kind, in card order."""
    kinds: dict[tuple[str, str], list[str]] = {}
    for family_name, setting in ctx.studies():
        kinds.setdefault((family_name, card_text(family_name).study_kind(setting)), []).append(setting)
    return kinds


def _measures(ctx: CardContext) -> str:
    """One paragraph per kind of study the folder holds (and none for the others), then, per family, its
    splits (which are held out of training, from its record) and its headline metric."""
    kinds = _study_kinds(ctx)
    lines = [f"- {card_text(family_name).measures(kind, settings)}" for (family_name, kind), settings in kinds.items()]
    lines += [""] + [_family_splits(ctx, name) for name in ctx.families()]
    return "\n".join(lines).rstrip() if kinds else "(no configs built yet)"


def _code_list(names: list[str]) -> str:
    quoted = [f"`{name}`" for name in names]
    return ", ".join(quoted[:-1]) + f" and {quoted[-1]}" if len(quoted) > 1 else "".join(quoted)


def _family_splits(ctx: CardContext, name: str) -> str:
    """``{title} configs: splits ... in domain; ... held out of training. {headline}``"""
    record, text = family(name), card_text(name)
    splits = list(dict.fromkeys(s for m in _family_manifests(ctx, name) for s in m["splits"]))
    splits = [s for s in _SPLIT_ORDER if s in splits] + [s for s in splits if s not in _SPLIT_ORDER]
    held = [s for s in splits if record.is_held_out(s)]
    kept = [s for s in splits if s not in held]
    if held:
        sentence = (f"- {record.title} configs: {_code_list(kept)} in domain; " if kept else f"- {record.title} configs: ")
        sentence += f"{_code_list(held)} out of domain, held out of training"
    else:
        sentence = f"- {record.title} configs hold {_code_list(splits)}; nothing is held out of training"
    if text.splits_note:
        sentence += f" ({text.splits_note})"
    return sentence + "." + (f" {text.headline}" if text.headline else "")


def _variants(ctx: CardContext) -> str:
    """Each family's note on its configs (such as the variants of its specs), before the list of studies."""
    return "".join(card_text(name).configs_note(_family_manifests(ctx, name)) for name in ctx.families())


def _family_manifests(ctx: CardContext, name: str) -> list[dict]:
    return [m for m in ctx.manifests.values() if m.get("family", DEFAULT_FAMILY) == name]


def _licence(ctx: CardContext) -> str:
    licence = ctx.settings.license
    text = ("The data and the generator are released under the Apache License 2.0." if licence == "apache-2.0"
            else f"The data is released under the licence `{licence}` (see the header); the generator, cogen, "
                 "under the Apache License 2.0.")
    names = [paper.key for paper in ctx.papers()]
    if names:
        text += (f" The tasks follow the designs of the {' and '.join(names)} paper{'s' if len(names) > 1 else ''}; "
                 "this repository holds no data from their releases")
        releases = [paper.release_note for paper in ctx.papers() if paper.release_note]
        text += f" ({'; '.join(releases)})." if releases else "."
    return text


def _papers(ctx: CardContext) -> str:
    lines = [f"- {p.key}: *{p.title}*, {p.authors} ({p.venue}), [arXiv:{p.arxiv}]({p.url})" for p in ctx.papers()]
    lines += [f"- {family(name).title}: {card_text(name).paper_note}" for name in ctx.families()
              if card_text(name).paper_note]
    lines += [f"- {paper_link(paper)}" for paper in ctx.settings.papers or ()]
    return "\n".join(lines) or "These configs follow no published paper."


def _citation(ctx: CardContext) -> str:
    """The citation section: the BibTeX of the families' papers, or what to cite when none has one."""
    entries = "\n\n".join(paper.bibtex for paper in ctx.papers())
    if not entries:
        return ("## Citation\n\nNo paper behind these configs has a public version to cite yet; cite this "
                f"repository (`{ctx.repo_id}`) and the cogen version in its manifests.")
    return ("## Citation\n\nIf you use this data, please cite the papers whose benchmarks it reproduces:\n\n"
            f"```bibtex\n{entries}\n```")


def _family_sections(ctx: CardContext) -> str:
    """The whole sections (each from its ``## `` heading) that the folder's families add to the card."""
    return "".join(section(_family_manifests(ctx, name)) for name in ctx.families()
                   for section in card_text(name).sections)


def _differences(ctx: CardContext) -> str:
    """The section on deliberate differences from the papers' reference code (none: no section)."""
    from cogen.card.differences import differences_table, family_differences

    kinds: dict[str, set[str]] = {name: set() for name in ctx.families()}
    for family_name, kind in _study_kinds(ctx):
        kinds[family_name].add(kind)
    if not family_differences(kinds):
        return ""
    return ("## Differences from the reference implementations\n\nWhere cogen's data departs on purpose from "
            "the public reference code of the papers these configs follow (a bug there, or the paper and the "
            "code disagreeing), so that numbers compared with the papers' can be read right:\n\n"
            + differences_table(kinds).rstrip("\n") + "\n\n")


def _split_stats(manifest: dict, split: str) -> dict:
    return manifest["splits"].get(split, {}).get("stats") or {}


def _statistics(ctx: CardContext) -> str:
    from cogen.folder.stats import NOT_ATTEMPTS, attempts, attempts_per_sample

    splits = ctx.splits()
    rows = []
    for name, manifest in ctx.manifests.items():
        cells = []
        totals: dict[str, int] = {}
        for split in splits:
            stats = _split_stats(manifest, split)
            per_sample = attempts_per_sample(stats)
            cells.append(f"{per_sample:.2f}" if per_sample is not None else "–")
            for cause, count in stats.items():
                totals[cause] = totals.get(cause, 0) + count
        total = attempts(totals)
        causes = sorted(((c, n) for c, n in totals.items() if c not in ("accepted", *NOT_ATTEMPTS) and n),
                        key=lambda item: -item[1])
        text = ", ".join(f"{cause} {count / total:.1%}" for cause, count in causes[:3]) if total else ""
        rows.append([f"`{name}`", *cells, f"{total:,}", text or "none", f"{totals.get('regenerated', 0):,}"])
    table = markdown_table(["config", *(f"{s} attempts per sample" for s in splits), "attempts",
                    "main rejection causes (share of attempts)", "regenerated (dedup)"], rows,
                   ["---"] + ["---:"] * (len(splits) + 1) + ["---", "---:"])
    notes = [card_text(name).statistics_note(_family_manifests(ctx, name)) for name in ctx.families()]
    return "\n\n".join([table, *(note.strip() for note in notes if note.strip())])


def _versions(ctx: CardContext) -> str:
    if not ctx.manifests:
        return "- (no configs built yet)"
    lines = ["Spec:", ""]
    lines += grouped_lines(list(ctx.manifests.values()), _spec_origin)
    lines += ["", "Libraries that decide the bytes:", ""]
    lines += grouped_lines(list(ctx.manifests.values()),
                           lambda m: ", ".join(f"{k} {v}" for k, v in m.get("versions", {}).items()))
    for name in ctx.families():
        lines += card_text(name).version_lines(_family_manifests(ctx, name))
    rows = [[f"`{name}`", str(m.get("seed", "")), str(m.get("generator_version", "")), f"`{m.get('fingerprint', '')}`",
             f"`{_manifest_checksum(ctx, name)}`"] for name, m in ctx.manifests.items()]
    lines += ["", "<details><summary>Config fingerprints (a digest of everything that decides a config's data: "
              "resolved spec with sizes, seed, generator version and any data file it reads; the full spec is in "
              "<code>manifests/&lt;config&gt;.json</code>, whose SHA-256 is listed too: the manifest records the "
              "SHA-256 of every Parquet file, which <code>cogen verify</code> checks)</summary>", "",
              markdown_table(["config", "seed", "generator", "fingerprint", "manifest SHA-256"], rows), "", "</details>"]
    return "\n".join(lines)


def _spec_origin(manifest: dict) -> str:
    """Where a config's spec came from, as its manifest records it (``cogen verify`` checks a packaged one)."""
    packaged = manifest.get("packaged_spec")
    if packaged:
        return f"cogen's packaged spec `{markdown_cell(packaged)}` (`split_specs/{markdown_cell(packaged)}.yaml`)"
    return (f"`{markdown_cell(manifest.get('spec_file', 'unnamed')).replace('`', '')}`, a spec file of the builder's "
            "own, **not one of cogen's packaged specs** (its content is in the manifest)")


def _manifest_checksum(ctx: CardContext, name: str) -> str:
    from cogen.folder import manifest_sha256

    try:
        return manifest_sha256(ctx.folder, name)
    except OSError:
        return "not written yet"


_CHECKSUM_ROW = re.compile(r"^\| `(?P<config>[^`]+)` \|.*\| `(?P<sha256>[0-9a-f]{64})` \|$", re.MULTILINE)


def manifest_checksums(card_text: str) -> dict[str, str]:
    """Config -> SHA-256 of its manifest, as the card's fingerprints table lists them (empty for an
    older card without the column)."""
    return {match["config"]: match["sha256"] for match in _CHECKSUM_ROW.finditer(card_text)}


PLACEHOLDERS: dict[str, Callable[[CardContext], str]] = {
    "repo_id": lambda ctx: ctx.repo_id,
    "pretty_name": lambda ctx: ctx.settings.pretty_name,
    "prose": lambda ctx: ctx.settings.prose.strip() + "\n" if ctx.settings.prose.strip() else "",
    "measures": _measures,
    "variants": _variants,
    "licence": _licence,
    "papers": _papers,
    "citation": _citation,
    "load": _load,
    "summary": _summary,
    "studies": _studies,
    "configs_table": _configs_table,
    "columns": _columns,
    "previews": _previews,
    "family_sections": _family_sections,
    "differences": _differences,
    "statistics": _statistics,
    "versions": _versions,
}


def render_body(template: str, ctx: CardContext) -> str:
    """Replace every ``{{ name }}`` in ``template`` with its generated text."""

    def fill(match: re.Match) -> str:
        name = match.group(1)
        if name not in PLACEHOLDERS:
            raise KeyError(f"hub_card.md uses unknown placeholder {{{{ {name} }}}}; known: {', '.join(PLACEHOLDERS)}")
        return PLACEHOLDERS[name](ctx)

    return re.sub(r"\{\{\s*(\w+)\s*\}\}", fill, template)
