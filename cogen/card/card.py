"""Render the dataset card (``README.md``) of a build folder from its manifests and ``hub_card.md``.

The YAML header lists every config in the folder (``configs:``, one ``default``: the first family's
headline config, :func:`cogen.card.snippets.default_config`) with
``dataset_info`` from the real row counts — ``datasets`` checks ``num_examples`` on load, so
they must come from the shards actually written, never from the spec.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import yaml

from cogen._resources import resource_path
from cogen.card.settings import DEFAULT_SETTINGS, CardSettings, read_card_settings
from cogen.errors import BuildError, os_error_text
from cogen.folder import CARD_FILE, CROISSANT_FILE, preview_path, read_manifests, split_pattern
from cogen.folder.atomic import atomic_write
from cogen.folder.features import card_features
from cogen.folder.ownership import check_places

__all__ = ["CARD_MARKER", "card_header", "check_card_owner", "dataset_info", "folder_card_checksums",
           "header_yaml", "is_cogen_card", "render_card", "render_croissant", "write_card", "write_previews"]

#: An HTML comment (invisible on the Hub) that marks a README.md as written by cogen.
CARD_MARKER = "<!-- written by cogen from manifests/*.json: edit hub_card.md and run `cogen card`, not this file -->"
#: Text that cards written before the marker existed always hold.
_OLDER_CARD_TEXT = "<details><summary>Config fingerprints (a digest of everything that decides"
#: A README's YAML front matter (``---`` lines around it) and the blank lines after it.
_FRONT_MATTER = re.compile(r"---\r?\n(?:.*?\r?\n)?---\r?\n\s*", re.DOTALL)

def _size_category(rows: int) -> str:
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
              (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M")]
    return next((label for bound, label in bounds if rows < bound), "n>1T")


def dataset_info(manifests: dict[str, dict]) -> list[dict]:
    """``dataset_info`` of the card's YAML header: every config's features, splits and sizes, as
    ``datasets``' ``DatasetInfosDict.to_dataset_card_data`` writes them (configs sorted by name,
    one list even for one config), made without importing ``datasets``, which costs a CPU-second
    in every build (``tests/test_hub_card.py`` checks it against ``datasets``' own output)."""
    entries = []
    for name, manifest in sorted(manifests.items()):
        splits = manifest["splits"]
        entries.append({
            "config_name": name,
            "features": card_features(manifest["columns"]),
            "splits": [{"name": split, "num_bytes": v["num_bytes"], "num_examples": v["rows"]} for split, v in splits.items()],
            "download_size": sum(v["download_bytes"] for v in splits.values()),
            "dataset_size": sum(v["num_bytes"] for v in splits.values()),
        })
    return entries


def card_header(manifests: dict[str, dict], settings: CardSettings = DEFAULT_SETTINGS) -> dict:
    """The YAML front matter: card metadata, ``configs`` and ``dataset_info`` for every config.

    Built as the Hub's own clients build it: ``huggingface_hub``'s ``DatasetCardData`` for the
    metadata, and ``dataset_info`` as ``datasets``' ``DatasetInfosDict`` serialises it (:func:`dataset_info`).
    """
    from huggingface_hub import DatasetCardData

    from cogen.card.snippets import default_config

    default = default_config(manifests)
    configs = []
    for name, manifest in manifests.items():
        entry = {"config_name": name}
        if name == default:
            entry["default"] = True
        entry["data_files"] = [{"split": split, "path": split_pattern(name, split)} for split in manifest["splits"]]
        configs.append(entry)
    total = sum(v["rows"] for m in manifests.values() for v in m["splits"].values())
    data = DatasetCardData(pretty_name=settings.pretty_name, license=settings.license,
                           task_categories=list(settings.task_categories), tags=list(settings.tags),
                           size_categories=list(settings.size_categories or [_size_category(total)]))
    if manifests:
        data["dataset_info"] = dataset_info(manifests)
        data["configs"] = configs
    return data.to_dict()


def header_yaml(header: dict) -> str:
    """The card's YAML header as text: ``yaml.safe_dump`` (keys in order, Unicode as is, lines of 120),
    by libyaml's C emitter where PyYAML has it and the header is made of what the two write alike
    (:func:`_writes_alike`; four times faster than the Python emitter)."""
    options = {"sort_keys": False, "allow_unicode": True, "width": 120}
    dumper = getattr(yaml, "CSafeDumper", None)
    if dumper is not None and _writes_alike(header):
        return yaml.dump(header, Dumper=dumper, **options)
    return yaml.dump(header, Dumper=yaml.SafeDumper, **options)


def _writes_alike(value, depth: int = 0) -> bool:
    """True for values that libyaml's emitter and PyYAML's Python one write to the same text (compared on
    random headers): numbers, booleans, None, text of printable characters of the Basic Multilingual
    Plane (no line break, tab or control character), lists and mappings of them whose keys are short
    printable ASCII (each emitter has its own way with long keys, escapes and line folding)."""
    if value is None or isinstance(value, (bool, int, float)):
        return True
    if isinstance(value, str):
        return value.isprintable() and (value.isascii() or max(value) < "\U00010000")
    if depth > 20:
        return False
    if isinstance(value, list):
        return all(_writes_alike(item, depth + 1) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and 0 < len(key) <= 64 and key.isascii() and key.isprintable()
                   and _writes_alike(item, depth + 1) for key, item in value.items())
    return False


def render_card(folder: Path, repo_id: str | None = None, previews: dict[str, Path] | None = None,
                settings: CardSettings | None = None, previous: tuple[str, ...] | None = None) -> str:
    """The full README.md text for the build folder ``folder``.

    ``repo_id`` goes into the loading examples (``cogen push`` passes the target repo);
    ``previews`` maps configs to their preview images, by default the ones already in
    ``previews/`` (this function draws nothing). ``settings`` default to the folder's
    ``card.yaml`` (:func:`cogen.card.settings.read_card_settings`). The user's regions are kept
    from the ``previous`` cards, by default the folder's README.md (:mod:`cogen.card.regions`).
    """
    from cogen.card.body import REPO_PLACEHOLDER, CardContext, render_body
    from cogen.card.regions import fill_regions

    folder = Path(folder)
    manifests = read_manifests(folder)
    settings = settings or read_card_settings(folder)
    if previews is None:
        previews = {name: preview_path(folder, name) for name in manifests}
        previews = {name: path for name, path in previews.items() if path.is_file()}
    if previous is None:
        previous = (existing_card(folder),)
    header = header_yaml(card_header(manifests, settings))
    template = resource_path("hub_card.md").read_text(encoding="utf-8")
    context = CardContext(manifests, folder, repo_id or REPO_PLACEHOLDER, previews, settings)
    return fill_regions(f"---\n{header}---\n\n{CARD_MARKER}\n\n{render_body(template, context)}", *previous)


def render_croissant(folder: Path, repo_id: str | None = None, settings: CardSettings | None = None) -> str:
    """The ``croissant.json`` text of the build folder ``folder`` (:mod:`cogen.card.croissant`): like the
    card, from its manifests, its ``card.yaml`` (or ``settings``) and the repo id it is pushed to."""
    from cogen.card.croissant import croissant_text

    folder = Path(folder)
    return croissant_text(read_manifests(folder), settings or read_card_settings(folder), repo_id)


def existing_card(folder: Path) -> str:
    """The folder's README.md when cogen wrote it (its user regions are kept), else empty."""
    try:
        text = (folder / CARD_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return text if is_cogen_card(text) else ""


def is_cogen_card(text: str) -> bool:
    """True when a README.md text was written by cogen (this version or an older one): a YAML front
    matter, then the marker as the first thing after it (an older card: its fingerprints table).
    Quoting the marker elsewhere, as a note about cogen's cards may, does not make a README cogen's."""
    front = _FRONT_MATTER.match(text)
    if front is None:
        return False
    return text[front.end():].startswith(CARD_MARKER) or _OLDER_CARD_TEXT in text


def check_card_owner(folder: Path, force: bool = False) -> None:
    """Refuse (:class:`BuildError`) to let cogen replace a README.md of ``folder`` that cogen did not write.

    ``force`` allows it. A folder given as README.md, or an unreadable one, is refused too.
    """
    path = Path(folder) / CARD_FILE
    if force or not os.path.lexists(path):
        return
    if path.is_dir():
        raise BuildError(f"{path} is a folder; cogen writes the dataset card there: move it away")
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise BuildError(f"cannot read {path}: {os_error_text(error)}") from None
    if not is_cogen_card(text):
        raise BuildError(f"{path} was not written by cogen, and cogen would replace it with the dataset card; "
                         "build into another folder, move the file away, or pass --force to replace it")


def folder_card_checksums(folder: Path) -> dict[str, str] | None:
    """Config -> manifest SHA-256 as the folder's README.md lists them (None without a readable card)."""
    from cogen.card.body import manifest_checksums

    try:
        return manifest_checksums((Path(folder) / CARD_FILE).read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return None


def write_previews(folder: Path) -> dict[str, Path]:
    """Draw the card's preview of every config whose preview is missing or out of date.

    Previews of configs that left the folder are deleted. Returns config -> image path.
    """
    from cogen.card.preview import card_preview, stale_card_previews

    manifests = read_manifests(folder)
    for path in stale_card_previews(folder, set(manifests)):
        path.unlink()
    previews = {name: card_preview(folder, manifest) for name, manifest in manifests.items()}
    return {name: path for name, path in previews.items() if path is not None}


def write_card(folder: Path, previews: bool = True, force: bool = False, settings: CardSettings | None = None,
               previous: tuple[str, ...] | None = None) -> Path:
    """(Re)write ``folder/README.md`` atomically from the manifests currently in the folder, and
    ``croissant.json`` beside it (:func:`render_croissant`).

    With ``previews`` (the default) the preview images are brought up to date first, so the
    README, written last, only ever references complete images. A README.md that cogen did not
    write is refused unless ``force`` (:func:`check_card_owner`). The user's regions come from
    ``previous`` cards (default: the folder's README.md), as :func:`render_card` says.
    """
    folder = Path(folder)
    check_places(folder)
    check_card_owner(folder, force)
    try:
        drawn = write_previews(folder) if previews else None
    except OSError as error:
        raise BuildError(f"cannot write the previews of {folder}: {os_error_text(error)}") from None
    metadata = render_croissant(folder, settings=settings)
    atomic_write(folder / CROISSANT_FILE, lambda temporary: temporary.write_text(metadata, encoding="utf-8"))
    path = folder / CARD_FILE
    text = render_card(folder, previews=drawn, settings=settings, previous=previous)
    atomic_write(path, lambda temporary: temporary.write_text(text, encoding="utf-8"))
    return path
