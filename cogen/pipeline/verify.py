"""``cogen verify``: re-check a built folder — card, files, bytes, decoding, then the family's checks.

Nothing here trusts the build. For every config:

1. **files and schema**: the files the manifest lists, and no others; their schema and row
   counts, read from the Parquet footers;
2. **file hashes**: every file's size and SHA-256 against the manifest's shard records (and the
   manifest's own SHA-256 against the card, in the **card** check), so any changed byte is
   reported with the file it is in;
3. **decoding**: every column of every row group is decoded and validated, one row group at a
   time, and handed to the family's checks (:attr:`cogen.families.Family.checks`), which
   recompute what the build claims from the rows: leak-freedom and uniqueness with an
   independent hash, outputs re-derived from inputs by the engine (on a sample of rows, or every
   row with ``full``), and determinism by regenerating shards from the manifest alone.

The family's checks run only on configs whose files are whole. A manifest written before file
hashes existed fails the *file hashes* check with the fix (rebuild: same command, same bytes);
its other checks still run.

``regenerate`` adds the check no re-signing can fool: every shard rebuilt in memory from the
spec and compared row for row, and the object bank rebuilt (:mod:`cogen.pipeline.regenerate`).
A folder that a running build is writing is refused (its files are changing).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Protocol

import numpy as np
import yaml

from cogen.family import family
from cogen.folder import (
                          CARD_FILE,
                          arrow_schema,
                          config_dir,
                          folder_manifests,
                          has_shard_records,
                          manifest_sha256,
                          record_problem,
                          shard_records,
)
from cogen.pipeline.check import Check

__all__ = ["SAMPLE_ROWS", "Check", "ConfigData", "Determinism", "FamilyChecks", "failed", "verify"]

#: Rows per config whose outputs are re-derived when ``full`` is not asked for.
SAMPLE_ROWS = 10_000
#: progress(phase, advance, total): phase "rows" counts decoded rows; advance=0 announces the total.
Progress = Callable[[str, int, int], None]


@cache
def _read_errors() -> tuple[type[BaseException], ...]:
    """What reading a damaged Parquet file can raise: pyarrow's own errors, and the builtins most of
    them derive from (ArrowInvalid from ValueError, ArrowIOError is OSError, ...)."""
    import pyarrow as pa

    return (pa.ArrowException, OSError, ValueError, TypeError, IndexError, KeyError, NotImplementedError, MemoryError)


@dataclass(frozen=True)
class ConfigData:
    """One config under verification, as its family's checks see it.

    ``shards``: how many shards to regenerate for the determinism check; ``full``: re-derive the
    outputs of every row instead of a sample (:meth:`rederive_mask`).
    """

    folder: Path
    manifest: dict
    shards: int = 2
    full: bool = False

    @property
    def config(self) -> str:
        """The config's name."""
        return self.manifest["config"]

    def total_rows(self) -> int:
        """Rows of the config, all splits together (from the manifest)."""
        return sum(info["rows"] for info in self.manifest["splits"].values())

    def rederive_mask(self, split: str, start: int, count: int) -> np.ndarray:
        """Which of rows ``[start, start + count)`` of ``split`` to re-derive: all with ``full``, else a
        seeded sample of about :data:`SAMPLE_ROWS` rows per config (the same rows every time)."""
        if self.full:
            return np.ones(count, bool)
        rate = min(1.0, SAMPLE_ROWS / max(1, self.total_rows()))
        seed = int(str(self.manifest.get("fingerprint", "0"))[:15] or "0", 16)
        rng = np.random.default_rng([seed, list(self.manifest["splits"]).index(split), start])
        return rng.random(count) < rate

    def regenerated_files(self) -> set[str]:
        """The files the determinism check regenerates: up to ``shards``, spread over the splits."""
        files = [f for info in self.manifest["splits"].values() for f in info["files"]]
        count = min(self.shards, len(files))
        return {files[i] for i in np.linspace(0, len(files) - 1, count, dtype=int)} if count else set()


class FamilyChecks(Protocol):
    """A family's checks of one config (``Family.checks(data) -> FamilyChecks``).

    :meth:`add` gets every row group of every file, decoded, in split and file order (``start``:
    the split-level index of the table's first row); :meth:`finish` returns the checks.
    """

    def add(self, split: str, file: str, start: int, table) -> None: ...

    def finish(self) -> list[Check]: ...


def verify(folder: str | Path, shards_per_config: int = 2, *, full: bool = False, regenerate: bool = False,
           workers: int = 1, progress: Progress | None = None, storage_options: dict | None = None) -> list[Check]:
    """Run every check on the dataset folder ``folder`` (see the module docstring).

    ``shards_per_config``: shards each config regenerates for the determinism check; ``full``:
    re-derive every row's outputs, not a sample; ``regenerate``: rebuild every shard (with
    ``workers`` processes) and the object bank, and compare (the determinism check is then
    left to it); ``progress`` hears of every decoded row group (and regenerated shard).
    ``folder`` may be an fsspec URL (``s3://bucket/c3``, with ``storage_options``): the folder is
    copied into a temporary folder first, since every byte is read anyway.
    """
    from cogen.pipeline.stores import download_folder, is_url

    if is_url(folder):
        import tempfile

        with tempfile.TemporaryDirectory(prefix="cogen-verify-") as local:
            download_folder(str(folder), local, storage_options)
            return verify(local, shards_per_config, full=full, regenerate=regenerate, workers=workers,
                          progress=progress)
    folder = Path(folder)
    _refuse_while_written(folder)
    manifests = folder_manifests(folder)
    if progress:
        progress("rows", 0, sum(info["rows"] for m in manifests.values() for info in m["splits"].values()))
    checks = [_card_check(folder, manifests)]
    shards = 0 if regenerate else shards_per_config
    for manifest in manifests.values():
        checks += _config_checks(ConfigData(folder, manifest, shards, full), progress)
    if regenerate:
        from cogen.pipeline.regenerate import regenerate_checks

        checks += regenerate_checks(folder, manifests, workers, progress)
    return checks


def _refuse_while_written(folder: Path) -> None:
    """A one-line error when a running cogen command is writing ``folder`` (its files are changing)."""
    from cogen.errors import BuildError
    from cogen.folder import FolderLock

    holder = FolderLock.holder(folder)
    if holder is not None:
        raise BuildError(f"{folder} is being written by a running cogen command (pid {holder}); verify it once "
                         "that command has finished")


def _config_checks(data: ConfigData, progress: Progress | None) -> list[Check]:
    files_check, readable = _file_checks(data.folder, data.manifest)
    hash_check, changed = _hash_check(data.folder, data.manifest)
    checks = [files_check, hash_check]
    if readable and not changed:
        checks += _decode_and_check(data, progress)
    elif progress:
        progress("rows", data.total_rows(), 0)
    return checks


def _card_check(folder: Path, manifests: dict) -> Check:
    from cogen.card.body import manifest_checksums

    readme = folder / CARD_FILE
    if not readme.is_file():
        return Check("", "card", False, f"{CARD_FILE} is missing; rerun `cogen build` or `cogen card`")
    try:
        text = readme.read_text(encoding="utf-8")
        header = yaml.safe_load(text.split("---", 2)[1])
        listed = {c["config_name"]: c for c in header.get("configs", [])}
        entries = header.get("dataset_info", [])
        if isinstance(entries, dict):  # the mapping `datasets` writes for one config (an edited card may hold it)
            entries = [{"config_name": entries.get("config_name", next(iter(listed), "default")), **entries}]
        infos = {i["config_name"]: {s["name"]: s["num_examples"] for s in i["splits"]} for i in entries}
    except (OSError, UnicodeDecodeError, IndexError, KeyError, TypeError, AttributeError, yaml.YAMLError) as error:
        return Check("", "card", False, f"README.md has no readable YAML header ({type(error).__name__}: {error}); "
                                        "rerun `cogen card`")
    problems = [f"{name} missing from configs" for name in manifests if name not in listed]
    problems += [f"{name} listed but not built" for name in listed if name not in manifests]
    problems += [f"{name} row counts differ" for name, m in manifests.items()
                 if infos.get(name) != {s: v["rows"] for s, v in m["splits"].items()}]
    defaults = [name for name, c in listed.items() if c.get("default")]
    if len(defaults) != 1:
        problems.append(f"{len(defaults)} default configs (need exactly one)")
    problems += _manifest_checksum_problems(folder, manifests, manifest_checksums(text))
    return Check("", "card", not problems, "; ".join(problems) or f"{len(listed)} configs, counts and manifests match")


def _manifest_checksum_problems(folder: Path, manifests: dict, listed: dict[str, str]) -> list[str]:
    if not listed:
        return ["the card lists no manifest SHA-256 (written by an older cogen): rebuild, or rerun `cogen card`"]
    problems = []
    for name in manifests:
        if name not in listed:
            problems.append(f"the card lists no SHA-256 for manifests/{name}.json; rerun `cogen card`")
        elif manifest_sha256(folder, name) != listed[name]:
            problems.append(f"manifests/{name}.json changed after the card was written (its SHA-256 differs from "
                            "the card's); rebuild the config, or rerun `cogen card` if you changed it on purpose")
    return problems


def _file_checks(folder: Path, manifest: dict) -> tuple[Check, bool]:
    """The files-and-schema check, and whether every listed file has a readable footer."""
    config = manifest["config"]
    expected = arrow_schema(manifest["columns"])
    shards = config_dir(folder, config)
    listed = {f for split in manifest["splits"].values() for f in split["files"]}
    present = {p.relative_to(folder).as_posix() for p in shards.iterdir()} if shards.is_dir() else set()
    problems = [f"missing {f}" for f in sorted(listed - present)]
    problems += [f"unexpected {f}" for f in sorted(present - listed)]
    counts, readable = [], not (listed - present)
    for split, info in manifest["splits"].items():
        rows = 0
        for file in info["files"]:
            if file not in present:
                continue
            footer = _footer(folder / file, expected)
            if isinstance(footer, str):
                problems.append(f"{file}: {footer}")
                readable = False
            else:
                rows += footer
        counts.append(f"{split} {rows}")
        if readable and rows != info["rows"]:
            problems.append(f"{split}: {rows} rows in the files, {info['rows']} in the manifest")
    return Check(config, "files and schema", not problems, "; ".join(problems) or ", ".join(counts)), readable


def _footer(path: Path, expected) -> int | str:
    """The row count of a Parquet file whose schema is ``expected``, or what is wrong with it."""
    import pyarrow.parquet as pq

    try:
        metadata = pq.read_metadata(path)
        schema = metadata.schema.to_arrow_schema()
    except _read_errors() as error:
        return f"not a readable Parquet file ({_reason(error)})"
    if not schema.remove_metadata().equals(expected.remove_metadata()):
        return "schema differs from the manifest's columns"
    if (schema.metadata or {}).get(b"huggingface") != expected.metadata[b"huggingface"]:
        return "Hugging Face features metadata differs"
    return metadata.num_rows


def _hash_check(folder: Path, manifest: dict) -> tuple[Check, bool]:
    """The file-hashes check, and whether a file differs from its record (False for a legacy manifest)."""
    config = manifest["config"]
    if not has_shard_records(manifest):
        version = manifest.get("versions", {}).get("cogen", "an older version")
        return Check(config, "file hashes", False,
                     f"manifests/{config}.json records no file hashes (written by cogen {version}), so its files "
                     "cannot be checked byte for byte; rebuild it with the same `cogen build` command (same bytes) "
                     "to record them"), False
    records = shard_records(manifest)
    listed = [f for info in manifest["splits"].values() for f in info["files"]]
    problems = [f"{f}: no record in the manifest" for f in listed if f not in records]
    present = {f: r for f, r in records.items() if (folder / f).exists()}  # a missing file: "files and schema"
    problems += [p for f, r in present.items() if (p := record_problem(folder, f, r))]
    detail = "; ".join(problems) or f"{len(present)} files match their SHA-256"
    return Check(config, "file hashes", not problems, detail), bool(problems)


def _decode_and_check(data: ConfigData, progress: Progress | None) -> list[Check]:
    """Decode every row group of every file and feed it to the family's checks."""
    record = family(data.manifest.get("family"))
    checker: FamilyChecks | None = record.load("checks")(data)
    problems: list[str] = []
    stopped: str | None = None
    groups = rows = 0
    for split, info in data.manifest["splits"].items():
        start = 0
        for file in info["files"]:
            for table, problem in _row_groups(data.folder / file):
                if problem is not None:
                    problems.append(f"{file}: {problem}")
                    break
                groups, rows = groups + 1, rows + table.num_rows
                if checker is not None:
                    try:
                        checker.add(split, file, start, table)
                    except Exception as error:  # unexpected content: a failed check, never a traceback
                        stopped, checker = f"{file}: {_reason(error)}", None
                start += table.num_rows
                if progress:
                    progress("rows", table.num_rows, 0)
    detail = "; ".join(problems) or f"{groups} row groups, {rows:,} rows, every column decoded and valid"
    checks = [Check(data.config, "decoding", not problems, detail)]
    if problems:
        return checks
    if stopped is not None:
        return [*checks, Check(data.config, f"{record.title} checks", False,
                               f"the checks stopped on unexpected content: {stopped}")]
    return [*checks, *checker.finish()] if checker is not None else checks


def _row_groups(path: Path):
    """``(table, None)`` for every row group of a Parquet file, then ``(None, problem)`` if one cannot
    be decoded (the rest of the file is skipped)."""
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
        count = parquet.num_row_groups
    except _read_errors() as error:
        yield None, f"cannot be opened ({_reason(error)})"
        return
    for group in range(count):
        try:
            table = parquet.read_row_group(group)
            table.validate(full=True)
        except _read_errors() as error:
            yield None, f"row group {group} cannot be decoded ({_reason(error)})"
            return
        yield table.replace_schema_metadata(None), None


def _reason(error: BaseException) -> str:
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {text[:200]}" if text else type(error).__name__


class Determinism:
    """The determinism check, fed row groups: those of :meth:`ConfigData.regenerated_files` are
    regenerated from the manifest alone with ``regenerate(manifest, split, start, stop) ->
    pyarrow.Table`` and compared row for row."""

    def __init__(self, data: ConfigData, regenerate):
        self.data, self.regenerate = data, regenerate
        self.files = data.regenerated_files()
        self.seen: set[str] = set()
        self.differs: str | None = None

    def add(self, split: str, file: str, start: int, table) -> None:
        """Compare the rows of ``table`` with their regeneration (if ``file`` is one of the chosen)."""
        if file not in self.files or self.differs is not None:
            return
        self.seen.add(file)
        fresh = self.regenerate(self.data.manifest, split, start, start + table.num_rows)
        if not fresh.equals(table.cast(fresh.schema)):
            self.differs = file

    def check(self, problem: str | None = None) -> Check:
        """The check's result (``problem``: a reason it could not run)."""
        config = self.data.config
        if problem is not None:
            return Check(config, "determinism", False, problem)
        if self.differs is not None:
            return Check(config, "determinism", False, f"{self.differs} differs when regenerated")
        return Check(config, "determinism", True, f"{len(self.seen)} shard(s) regenerated byte for byte from the manifest")


def failed(checks: list[Check]) -> list[Check]:
    """The checks that did not pass."""
    return [c for c in checks if not c.ok]
