"""What the user decides about the dataset card: ``card.yaml`` next to the build, or CLI options.

Every field is optional; a field left out keeps cogen's default. CLI options (``cogen card``,
``cogen push``) override the file field by field::

    pretty_name: "My CompGen benchmark"
    license: cc-by-4.0
    tags: [arc, my-lab]
    task_categories: [image-to-image]
    size_categories: [10K<n<100K]
    papers: ["2509.05249", "https://arxiv.org/abs/2504.01445"]
    prose: |
      Built for our ablation of depth-3 sequences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from pathlib import Path

from cogen.errors import BuildError, os_error_text

__all__ = ["CARD_SETTINGS_FILE", "DEFAULT_SETTINGS", "CardSettings", "arxiv_id", "read_card_settings"]

#: The user's card settings file, in the build folder.
CARD_SETTINGS_FILE = "card.yaml"
_LISTS = ("tags", "task_categories", "size_categories", "papers")
_ARXIV = re.compile(r"^(?:https?://arxiv\.org/(?:abs|pdf)/)?(?P<id>\d{4}\.\d{4,5})(?:v\d+)?(?:\.pdf)?$")


@dataclass(frozen=True)
class CardSettings:
    """Card metadata; ``None`` means "cogen's default" (``size_categories``: from the row count)."""

    pretty_name: str | None = None
    license: str | None = None
    tags: tuple[str, ...] | None = None
    task_categories: tuple[str, ...] | None = None
    size_categories: tuple[str, ...] | None = None
    papers: tuple[str, ...] | None = None
    prose: str | None = None

    def over(self, base: CardSettings) -> CardSettings:
        """These settings where given, ``base``'s elsewhere."""
        return replace(base, **{f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None})


#: cogen's defaults (``papers``: the papers of the families a folder holds are always linked).
DEFAULT_SETTINGS = CardSettings(
    pretty_name="cogen: compositional generalization on ARC-like grids",
    license="apache-2.0",
    tags=("arc", "abstract-reasoning", "compositional-generalization", "systematicity", "synthetic", "procedural"),
    task_categories=("other",),
    papers=(),
    prose="",
)


def arxiv_id(paper: str) -> str | None:
    """The arXiv id of a paper given as an id or an arxiv.org link, else None."""
    match = _ARXIV.match(paper.strip())
    return match["id"] if match else None


def _checked(doc: dict, source: str) -> CardSettings:
    known = {f.name for f in fields(CardSettings)}
    unknown = sorted(set(doc) - known)
    if unknown:
        raise BuildError(f"{source}: unknown field {unknown[0]!r}; known fields: {', '.join(sorted(known))}")
    values = {}
    for name, value in doc.items():
        if value is None:
            continue
        if name in _LISTS:
            value = [value] if isinstance(value, str) else value
            if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
                raise BuildError(f"{source}: {name} must be a list of non-empty strings, e.g. {name}: [a, b] "
                                 "(quote numbers such as arXiv ids: '2509.05249')")
            value = tuple(v.strip() for v in value)
        elif not isinstance(value, str):
            raise BuildError(f"{source}: {name} must be a string (quote it), not {type(value).__name__}")
        values[name] = value
    for paper in values.get("papers", ()):
        if arxiv_id(paper) is None and not paper.startswith(("https://", "http://")):
            raise BuildError(f"{source}: papers: {paper!r} is neither an arXiv id (2509.05249) nor a link")
    return CardSettings(**values)


def read_card_settings(folder: Path, **options) -> CardSettings:
    """The card settings of ``folder``: its ``card.yaml`` (if any), then ``options`` (CLI values,
    ``None`` = not given), over cogen's defaults. A bad file or value is a :class:`BuildError`."""
    import yaml

    path = Path(folder) / CARD_SETTINGS_FILE
    settings = CardSettings()
    if path.is_file():
        try:
            doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except OSError as error:
            raise BuildError(f"cannot read {path}: {os_error_text(error)}") from None
        except yaml.YAMLError as error:
            raise BuildError(f"{path} is not valid YAML: {str(error).splitlines()[0]}") from None
        if not isinstance(doc, dict):
            raise BuildError(f"{path} must be a mapping of card fields (pretty_name: ..., license: ...)")
        settings = _checked(doc, str(path))
    given = {name: list(value) if isinstance(value, tuple) else value for name, value in options.items()
             if value is not None and value != [] and value != ()}
    return _checked(given, "command-line options").over(settings).over(DEFAULT_SETTINGS)
