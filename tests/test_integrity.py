"""Nothing corrupt passes: a flipped byte anywhere in a shard is reported by ``cogen verify`` with the
file it is in, never as a traceback, and ``cogen push --dry-run`` refuses to publish it.

The offsets are a seeded sample of 200 (the shard has a few thousand bytes). Every flip goes
through the library calls behind both commands (an exception would be the traceback); every
tenth also through the command line itself, output and exit code included. A companion test
runs flips on a manifest from before file hashes, where the decoding and the family's checks
are all that stand guard: none may raise.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from test_failures import SPEC, run_cli

from cogen.errors import PublishError
from cogen.hub.publish import push
from cogen.pipeline.verify import failed, verify

SHARD = "data/T-1/validation-00000-of-00001.parquet"


@pytest.fixture(scope="module")
def folder(shared_build):
    """The build of ``SPEC`` that tests/test_failures.py reads too (shared, read-only: tests copy it first)."""
    return shared_build(SPEC)


def offsets(size: int, count: int = 200, seed: int = 18) -> list[int]:
    return sorted(np.random.default_rng(seed).choice(size, min(count, size), replace=False).tolist())


def flipped(data: bytes, offset: int) -> bytes:
    return data[:offset] + bytes([data[offset] ^ 0xFF]) + data[offset + 1:]


@pytest.mark.slow
def test_every_flipped_byte_is_reported_with_its_file_and_refused_by_push(folder, tmp_path, capsys):
    work = tmp_path / "work"
    shutil.copytree(folder, work)
    shard = work / SHARD
    original = shard.read_bytes()
    misses = []
    for position, offset in enumerate(offsets(len(original))):
        shard.write_bytes(flipped(original, offset))
        if not any(SHARD in c.detail for c in failed(verify(work, shards_per_config=0))):
            misses.append((offset, "verify"))
        with pytest.raises(PublishError) as refused:
            push(work, "org/x", dry_run=True)
        if SHARD not in str(refused.value):
            misses.append((offset, "push"))
        if position % 10 == 0:
            code, out, err = run_cli(capsys, "verify", work, "--sample", "0", "--no-progress")
            push_code, _, push_err = run_cli(capsys, "push", work, "--repo", "org/x", "--dry-run")
            if (code, push_code) != (1, 1) or SHARD not in " ".join(out.split()) or SHARD not in push_err or \
                    "Traceback" in err + push_err:
                misses.append((offset, "command line"))
    shard.write_bytes(original)
    assert not misses, f"flips not caught: {misses}"
    assert not failed(verify(work, shards_per_config=0))


def test_without_file_hashes_no_flip_raises(folder, tmp_path):
    """A folder from before file hashes: every flip either fails a check or changes nothing that
    matters (a byte of unused padding, say) — and none raises."""
    work = tmp_path / "legacy"
    shutil.copytree(folder, work)
    manifest_path = work / "manifests/T-1.json"
    manifest = json.loads(manifest_path.read_text())
    del manifest["manifest_format"]
    for info in manifest["splits"].values():
        del info["shards"]
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    shard = work / SHARD
    original = shard.read_bytes()
    caught = 0
    for offset in offsets(len(original), count=60, seed=7):
        shard.write_bytes(flipped(original, offset))
        checks = verify(work, shards_per_config=1)  # must not raise
        caught += any(c.name not in ("card", "file hashes") for c in failed(checks))
    assert caught >= 30  # most flips damage what the decoding, replay or regeneration look at
