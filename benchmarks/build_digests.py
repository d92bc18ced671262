"""SHA-256 of every file of the packaged specs' small builds: a refactor that claims "bytes
unchanged" is checked by running this before and after and comparing the two JSON files.

    python benchmarks/build_digests.py OUT.json [--scale 0.002] [--seed 7] [--workers 2] [--specs c1 c2 ...]
        [--ignore-code]
    python benchmarks/build_digests.py --compare BEFORE.json AFTER.json
    python benchmarks/build_digests.py --smoke     # c1 and programs twice, compared (seconds; the tests run it)

Each spec is built with ``cogen build`` into its own folder under a temporary directory; every file
of the folder (shards, manifests, card, previews) is hashed, keyed by ``<spec>/<relative path>``.
The build's own scratch state (``.cogen/``) is left out: it is not part of the dataset.

Every manifest records a digest of cogen's code among its build inputs (``inputs.code``), and the card
lists each manifest's SHA-256, so any change to the code changes those files by design. A refactor
that moves code is checked with ``--ignore-code``: a manifest is hashed without ``inputs.code``, and
in the card each manifest's SHA-256 stands as that code-free digest; every other byte counts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPECS = ("c1", "c2", "c3", "g1", "g2", "g3", "g4", "g5", "s", "carc", "carc_extended", "programs")


def folder_digests(folder: Path, ignore_code: bool = False) -> dict[str, str]:
    """``relative path -> SHA-256`` of every file in ``folder`` but its ``.cogen/`` state (``ignore_code``:
    manifests without their code digest, and the card naming those code-free digests)."""
    paths = [path for path in sorted(folder.rglob("*"))
             if path.is_file() and ".cogen" not in path.relative_to(folder).parts]
    digests = {path.relative_to(folder).as_posix(): _sha(path.read_bytes()) for path in paths}
    if ignore_code:
        renamed = {}
        for path in (folder / "manifests").glob("*.json"):
            manifest = json.loads(path.read_bytes())
            manifest.get("inputs", {}).pop("code", None)
            code_free = _sha(json.dumps(manifest, sort_keys=True).encode())
            renamed[digests[path.relative_to(folder).as_posix()]] = code_free
            digests[path.relative_to(folder).as_posix()] = code_free
        card = folder / "README.md"
        if card.exists():
            text = card.read_text(encoding="utf-8")
            for raw, code_free in renamed.items():
                text = text.replace(raw, f"code-free:{code_free}")
            digests["README.md"] = _sha(text.encode())
    return digests


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build_all(specs, scale: float, seed: int, workers: int, ignore_code: bool = False) -> dict[str, str]:
    digests: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as root:
        for spec in specs:
            out = Path(root) / spec
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "cogen", "build", "--config", spec, "--out", str(out),
                            "--scale", str(scale), "--seed", str(seed), "--workers", str(workers)],
                           check=True, stdout=subprocess.DEVNULL)
            files = folder_digests(out, ignore_code)
            digests.update({f"{spec}/{name}": sha for name, sha in files.items()})
            print(f"{spec}: {len(files)} files in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return digests


def compare(before: dict[str, str], after: dict[str, str]) -> int:
    """Print what differs; the exit status is the number of differing or missing files (0: identical)."""
    names = sorted(set(before) | set(after))
    different = [name for name in names if before.get(name) != after.get(name)]
    for name in different:
        print(f"differs: {name} ({'missing after' if name not in after else 'new' if name not in before else 'bytes'})")
    print(f"{len(names) - len(different)} of {len(names)} files identical")
    return min(len(different), 255)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--scale", type=float, default=0.002)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--specs", nargs="+", default=list(SPECS))
    parser.add_argument("--ignore-code", action="store_true",
                        help="hash manifests without cogen's code digest (for refactors that move code)")
    parser.add_argument("--smoke", action="store_true", help="c1 and programs at scale 0.001, built twice and compared")
    args = parser.parse_args()
    if args.smoke:
        runs = [build_all(["c1", "programs"], 0.001, args.seed, workers, ignore_code=True) for workers in (1, 2)]
        return compare(*runs)
    if args.compare:
        return compare(*(json.loads(Path(p).read_text()) for p in args.compare))
    if not args.out:
        parser.error("give OUT.json, or --compare BEFORE AFTER")
    digests = build_all(args.specs, args.scale, args.seed, args.workers, args.ignore_code)
    Path(args.out).write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
    print(f"{len(digests)} files -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
