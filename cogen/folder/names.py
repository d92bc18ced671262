"""Config names are names, never paths: the one rule every config, experiment and setting name obeys.

A config name becomes a folder (``data/<config>/``) and file names (``manifests/<config>.json``,
``previews/<config>.png``, ``.cogen/<config>.journal.jsonl``), so it is held to a character set that
means the same thing on every file system and on the Hub:

* ASCII letters and digits, then also ``-``, ``_`` and ``.`` (so never ``.``, ``..``, a hidden
  name, a path separator, a space, a control character or a Unicode look-alike);
* at most :data:`NAME_MAX` characters;
* not a name Windows reserves for a device (``con``, ``nul``, ``com1``, ..., with or without an
  extension, in any case: ``data/con/`` cannot be created there), and not ending in ``.`` (Windows
  drops a trailing dot, so ``C1-1.`` would be ``C1-1``);
* unique in a spec after case folding (``C1-1`` and ``c1-1`` would be one folder on macOS and
  Windows), checked where the spec is read.

Spec readers report a broken rule with the file and line (:func:`cogen.specs._fields.read_name`);
everything that turns a name into a path checks it again (:func:`check_name`), so a name read
from a hostile manifest cannot escape the folder either.
"""

from __future__ import annotations

import re

from cogen.errors import BuildError

__all__ = ["NAME_MAX", "NAME_RULE", "RESERVED", "check_name", "name_problem"]

#: Longest config name (the Hub shows config names in tabs; file systems allow 255 bytes per name).
NAME_MAX = 64
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
#: Device names Windows reserves in every folder, whatever the extension (``nul.txt`` is ``nul``).
RESERVED = frozenset({"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)), *(f"lpt{i}" for i in range(1, 10))})
#: The rule, as messages state it.
NAME_RULE = (f"a name is 1 to {NAME_MAX} ASCII letters, digits, '-', '_' or '.', starting with a letter or digit, "
             "not ending in '.', and not a device name of Windows such as con or nul (no path separators, spaces or "
             "other characters)")


def name_problem(name: object) -> str | None:
    """Why ``name`` cannot be a config name (None when it can)."""
    if not isinstance(name, str):
        return f"a name must be text, got {type(name).__name__} {name!r} (quote it in YAML)"
    if not name:
        return "the name is empty"
    if len(name) > NAME_MAX:
        return f"the name is {len(name)} characters long, more than {NAME_MAX}"
    if not _NAME.fullmatch(name):
        bad = next((c for c in name if not (c.isascii() and (c.isalnum() or c in "-_."))), None)
        return f"the name has {_shown(bad)}" if bad is not None else f"the name starts with {_shown(name[0])}"
    if name.endswith("."):
        return "the name ends with '.', which Windows drops"
    if name.split(".", 1)[0].lower() in RESERVED:
        return f"{name.split('.', 1)[0]!r} is a device name on Windows, where no file or folder can have it"
    return None


def _shown(character: str) -> str:
    """A character as a message shows it: printable ASCII quoted, anything else by its code point."""
    if character.isascii() and character.isprintable() and character != " ":
        return f"the character {character!r}"
    return f"the character U+{ord(character):04X}"


def check_name(name: object, what: str = "config") -> str:
    """``name`` if it can be a config name, else a one-line :class:`~cogen.errors.BuildError`."""
    problem = name_problem(name)
    if problem is not None:
        raise BuildError(f"{what} name {str(name)[:80]!r} cannot be used: {problem}; {NAME_RULE}")
    return name
