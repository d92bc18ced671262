"""Fill the ``{{ placeholder }}`` slots of the dataset-card template from the manifests."""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["PLACEHOLDERS", "render_body"]


def _configs_table(manifests: dict[str, dict], out_dir: Path) -> str:
    lines = ["| config | study | " + " | ".join(["train", "validation", "test", "validation_ood", "test_ood"]) + " |",
             "|---|---|" + "---|" * 5]
    for name, manifest in manifests.items():
        rows = [str(manifest["splits"].get(s, {}).get("rows", "–")) for s in
                ("train", "validation", "test", "validation_ood", "test_ood")]
        lines.append(f"| `{name}` | {manifest.get('setting', '')} | " + " | ".join(rows) + " |")
    return "\n".join(lines)


def _versions(manifests: dict[str, dict], out_dir: Path) -> str:
    seen = {}
    for manifest in manifests.values():
        seen.setdefault(tuple(sorted(manifest["versions"].items())), []).append(manifest["config"])
    lines = []
    for versions, configs in seen.items():
        text = ", ".join(f"{k} {v}" for k, v in versions)
        lines.append(f"- {text} ({len(configs)} configs)")
    return "\n".join(lines) or "- (no configs built yet)"


def _first_config(manifests: dict[str, dict], out_dir: Path) -> str:
    return next(iter(manifests), "C1-1")


PLACEHOLDERS = {
    "configs_table": _configs_table,
    "versions": _versions,
    "first_config": _first_config,
}


def render_body(template: str, manifests: dict[str, dict], out_dir: Path) -> str:
    """Replace every ``{{ name }}`` in ``template`` with its generated text."""

    def fill(match: re.Match) -> str:
        name = match.group(1)
        if name not in PLACEHOLDERS:
            raise KeyError(f"hub_card.md uses unknown placeholder {{{{ {name} }}}}; known: {', '.join(PLACEHOLDERS)}")
        return PLACEHOLDERS[name](manifests, out_dir)

    return re.sub(r"\{\{\s*(\w+)\s*\}\}", fill, template)
