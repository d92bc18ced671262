"""Where ``--data`` points: a local dataset folder or a Hub dataset repo, decided at once.

``owner/name`` is both a relative path and a Hub repo id, so a mistyped local path (``out/c1-smal``)
must not become minutes of Hub retries ending in an error about a repo. The rule:

* an existing folder is that folder;
* ``hf://datasets/owner/name`` is always the Hub repo;
* an argument that is clearly a path (``./x``, ``../x``, ``/x``, ``~/x``, more than one ``/``, a
  backslash, or an ``owner`` that is a folder here, as ``out`` in ``out/c1-smal``) and is no folder
  fails now, naming the local path;
* any other ``owner/name`` is a Hub repo, looked up with one request (no retries; offline, the
  cache answers instead); when the Hub has no such repo or cannot be reached, the error names both
  readings: no local folder, and what the Hub said.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from cogen.errors import DataError

__all__ = ["HUB_PREFIX", "hub_repo_id", "locate_data"]

#: The prefix that makes ``--data`` a Hub repo whatever folders exist here.
HUB_PREFIX = "hf://datasets/"
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def hub_repo_id(source: str | Path) -> str | None:
    """The repo id ``source`` names when it reads as one (``owner/name`` or ``hf://datasets/owner/name``), else None."""
    text = str(source)
    if text.startswith(HUB_PREFIX):
        text = text[len(HUB_PREFIX):].rstrip("/")
    return text if _REPO_ID.match(text) else None


def _clearly_local(text: str) -> bool:
    if text.startswith((".", "/", "~")) or "\\" in text or text.count("/") != 1:
        return True
    return Path(text.split("/")[0]).expanduser().is_dir()


@functools.cache
def _probe(repo_id: str) -> None:
    """One request to the Hub for ``repo_id`` (none in offline mode): a DataError naming both readings
    when it has no such dataset repo or cannot be reached."""
    from huggingface_hub import HfApi, constants

    if constants.HF_HUB_OFFLINE:
        return
    try:
        HfApi().dataset_info(repo_id, timeout=10)
    except Exception as error:  # not found, private, network down: one line, both readings
        kind = type(error).__name__
        what = ("has no dataset repo of that name (or it is private: `hf auth login`)"
                if "NotFound" in kind or "401" in str(error) or "404" in str(error)
                else f"could not be reached ({kind}: {str(error).splitlines()[0] if str(error) else kind})")
        raise DataError(f"{repo_id}: no local folder of that name, and the Hugging Face Hub {what}; give an "
                        f"existing dataset folder, or an existing Hub dataset repo id") from None


def locate_data(source: str | Path) -> Path | str:
    """A local dataset folder (as a ``Path``) or a Hub dataset repo id (a ``str``), by the module's rule."""
    path = Path(source).expanduser()
    text = str(source)
    if path.is_dir():
        return path
    repo_id = hub_repo_id(text)
    if text.startswith(HUB_PREFIX):
        if repo_id is None:
            raise DataError(f"{source}: not a Hub dataset repo id; write {HUB_PREFIX}owner/name")
        _probe(repo_id)
        return repo_id
    if path.exists():
        raise DataError(f"{source} is a file; give a dataset folder (`cogen build` output) or a Hub repo id")
    if repo_id is None or _clearly_local(text):
        raise DataError(f"{source}: no such folder (a dataset folder is `cogen build` output; a Hub dataset repo "
                        f"is owner/name, or {HUB_PREFIX}owner/name)")
    _probe(repo_id)
    return repo_id
