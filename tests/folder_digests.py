"""SHA-256 of every shard of a build folder: what "the same bytes" means in the tests."""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["digests"]


def digests(folder: Path) -> dict[str, str]:
    """Path (relative to ``folder``) -> SHA-256 of every Parquet shard under ``folder/data``."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(Path(folder).glob("data/**/*.parquet"))}
