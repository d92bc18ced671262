"""``cogen verify``: re-check a built folder — card, files, bytes, decoding, then the family's checks.

Nothing here trusts the build. The **card** check compares the card with the manifests: the
SHA-256 it lists for each manifest, and its YAML header (``configs``, ``data_files``,
``dataset_info``: what ``datasets.load_dataset`` loads) with the header ``cogen card`` renders from
the manifests now. Then, for every config:

1. **files and schema**: the files the manifest lists, and no others (no link among them); their
   schema and row counts, read from the Parquet footers;
2. **file hashes**: every file's size and SHA-256 against the manifest's shard records (and the
   manifest's own SHA-256 against the card, in the **card** check), so any changed byte is
   reported with the file it is in;
3. **spec**: the manifest's spec gives the manifest's fingerprint and split sizes, and a
   manifest that names a packaged spec (``packaged_spec``) holds exactly what that spec makes at
   the recorded scale and seed (description included); one that names none is said to be built
   from a user's spec file (the card says so too);
4. **decoding**: every column of every row group is decoded and validated, one row group at a
   time, and handed to the family's checks (:attr:`cogen.families.Family.checks`), which
   recompute what the build claims from the rows: leak-freedom and uniqueness with an
   independent hash, outputs re-derived from inputs by the engine (on a sample of rows, or every
   row with ``full``), and determinism by regenerating a sample of rows of every split from the
   manifest alone (every row of a split that fits in :data:`REGENERATED_ROWS`, else random rows
   of every row group, drawn afresh each run so no forger can know which);
5. **preview**: the card's preview image is the one cogen draws from these rows.

The family's checks run only on configs whose files are whole. A manifest written before file
hashes existed fails the *file hashes* check with the fix (rebuild: same command, same bytes);
its other checks still run.

``regenerate`` adds the check no re-signing can fool: every shard rebuilt in memory from the
spec and compared row for row, and the object bank rebuilt (:mod:`cogen.pipeline.regenerate`).
A folder that a running build is writing is refused (its files are changing).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Protocol

import numpy as np
import yaml

from cogen._version import __version__
from cogen.errors import CogenError
from cogen.family import family
from cogen.folder import (
                          CARD_FILE,
                          CROISSANT_FILE,
                          arrow_schema,
                          config_dir,
                          folder_manifests,
                          has_shard_records,
                          manifest_sha256,
                          record_problem,
                          shard_records,
)
from cogen.pipeline.check import Check

__all__ = ["REGENERATED_ROWS", "SAMPLE_ROWS", "Check", "ConfigData", "Determinism", "FamilyChecks", "card_problems",
           "failed", "verify"]

#: Rows per config whose outputs are re-derived when ``full`` is not asked for.
SAMPLE_ROWS = 10_000
#: Rows per config that the determinism check regenerates from the manifest (``cogen verify --sample``).
REGENERATED_ROWS = 10_000
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

    ``sample``: rows the determinism check regenerates (:meth:`regeneration_window`; 0: none);
    ``full``: re-derive the outputs of every row instead of a sample (:meth:`rederive_mask`).
    """

    folder: Path
    manifest: dict
    sample: int = REGENERATED_ROWS
    full: bool = False
    #: Where the regenerated rows are drawn from: fresh entropy each run (the rows re-derived by
    #: :meth:`rederive_mask` are the same every time; these are not, so a forger cannot avoid them).
    rng: np.random.Generator = field(default_factory=np.random.default_rng, compare=False, repr=False)

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

    def allotments(self) -> dict[str, int]:
        """Rows of each split the determinism check regenerates: :attr:`sample` shared so that the
        smallest splits (the evaluation splits) are regenerated whole and the rest goes to the others."""
        rows = {split: int(info["rows"]) for split, info in self.manifest["splits"].items()}
        allotted, left = {}, self.sample
        for position, split in enumerate(sorted(rows, key=lambda name: rows[name])):
            share = -(-left // (len(rows) - position))  # rounded up: a split with rows gets one at least
            allotted[split] = min(rows[split], share) if left > 0 else 0
            left -= allotted[split]
        return allotted

    def regeneration_window(self, split: str, start: int, count: int) -> tuple[int, int] | None:
        """The rows of the row group ``[start, start + count)`` of ``split`` to regenerate, as (offset
        in the group, rows): a run of the split's share of the group at a random place (every row
        when the whole split is regenerated); None for none."""
        allotted, rows = self.allotments().get(split, 0), self.manifest["splits"][split]["rows"]
        if not allotted or not count:
            return None
        length = count if allotted >= rows else min(count, max(1, -(-count * allotted // max(1, rows))))
        return int(self.rng.integers(0, count - length + 1)), length


class FamilyChecks(Protocol):
    """A family's checks of one config (``Family.checks(data) -> FamilyChecks``).

    :meth:`add` gets every row group of every file, decoded, in split and file order (``start``:
    the split-level index of the table's first row); :meth:`finish` returns the checks.
    """

    def add(self, split: str, file: str, start: int, table) -> None: ...

    def finish(self) -> list[Check]: ...


def verify(folder: str | Path, sample: int = REGENERATED_ROWS, *, full: bool = False, regenerate: bool = False,
           workers: int = 1, progress: Progress | None = None, storage_options: dict | None = None,
           shards_per_config: int | None = None) -> list[Check]:
    """Run every check on the dataset folder ``folder`` (see the module docstring).

    ``sample``: rows of each config the determinism check regenerates from the manifest, spread
    over every split (0: none); ``full``: re-derive every row's outputs, not a sample;
    ``regenerate``: rebuild every shard (with ``workers`` processes) and the object bank, and
    compare (the determinism check is then left to it); ``progress`` hears of every decoded row
    group (and regenerated shard). ``shards_per_config`` is the older spelling of the
    determinism check's size: 0 turns it off, any other number keeps the default sample.
    ``folder`` may be an fsspec URL (``s3://bucket/c3``, with ``storage_options``): the folder is
    copied into a temporary folder first, since every byte is read anyway.
    """
    from cogen.pipeline.stores import download_folder, is_url

    if is_url(folder):
        import tempfile

        with tempfile.TemporaryDirectory(prefix="cogen-verify-") as local:
            download_folder(str(folder), local, storage_options)
            return verify(local, sample, full=full, regenerate=regenerate, workers=workers, progress=progress,
                          shards_per_config=shards_per_config)
    folder = Path(folder)
    _refuse_while_written(folder)
    manifests = folder_manifests(folder)
    if progress:
        progress("rows", 0, sum(info["rows"] for m in manifests.values() for info in m["splits"].values()))
    checks = [_card_check(folder, manifests)]
    if shards_per_config is not None and not shards_per_config:
        sample = 0
    for manifest in manifests.values():
        checks += _config_checks(ConfigData(folder, manifest, 0 if regenerate else sample, full), progress)
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
    checks = [files_check, hash_check, spec_check(data.manifest)]
    if readable and not changed:
        decoded = _decode_and_check(data, progress)
        checks += decoded
        if decoded[0].ok:
            checks.append(_preview_check(data.folder, data.manifest))
    elif progress:
        progress("rows", data.total_rows(), 0)
    return checks


def _card_check(folder: Path, manifests: dict) -> Check:
    problems = card_problems(folder, manifests)
    return Check("", "card", not problems, "; ".join(problems) or
                 f"{len(manifests)} configs: the YAML header and croissant.json's files and records are the ones "
                 "the manifests give, and every manifest's SHA-256 matches")


def card_problems(folder: Path, manifests: dict[str, dict]) -> list[str]:
    """What is wrong with the card of ``folder`` (empty when nothing is): a missing or unreadable card,
    a YAML header whose ``configs`` (names, default, ``data_files``) or ``dataset_info`` (features,
    splits, sizes) are not what ``cogen card`` renders from the manifests now, or a manifest whose
    SHA-256 is not the one the card lists. ``cogen merge`` refuses a source with any of them."""
    from cogen.card.body import manifest_checksums

    readme = folder / CARD_FILE
    if readme.is_symlink() or not readme.is_file():
        return [f"{CARD_FILE} is missing; rerun `cogen build` or `cogen card`" if not readme.is_symlink() else
                f"{CARD_FILE} is a symbolic link; cogen writes the card as a file: rerun `cogen card`"]
    try:
        text = readme.read_text(encoding="utf-8")
        header = yaml.safe_load(text.split("---", 2)[1])
        if not isinstance(header, dict):
            raise TypeError("the header is not a mapping")
    except (OSError, UnicodeDecodeError, IndexError, TypeError, yaml.YAMLError) as error:
        return [f"README.md has no readable YAML header ({type(error).__name__}: {error}); rerun `cogen card`"]
    problems = _header_problems(header, manifests)
    if problems:
        problems.append("the card must load what the manifests describe: rerun `cogen card` to write its header from "
                        "them")
    return problems + _croissant_problems(folder) + _manifest_checksum_problems(folder, manifests,
                                                                               manifest_checksums(text))


#: The parts of ``croissant.json`` that say what a Croissant reader loads (the rest is the card's metadata).
CROISSANT_DATA = ("distribution", "recordSet")


def _croissant_problems(folder: Path) -> list[str]:
    """What ``croissant.json`` says of the files and records that the one rendered from the manifests now
    does not (its files with their SHA-256, its record sets: what ``mlcroissant`` loads)."""
    from cogen.card.card import render_croissant

    path = folder / CROISSANT_FILE
    if path.is_symlink() or not path.is_file():
        return [f"{CROISSANT_FILE} is missing; rerun `cogen card`"]
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        return [f"{CROISSANT_FILE} is not readable JSON ({type(error).__name__}); rerun `cogen card`"]
    fresh = json.loads(render_croissant(folder))
    differing = [key for key in CROISSANT_DATA if not isinstance(stored, dict) or stored.get(key) != fresh.get(key)]
    verb = "differs" if len(differing) == 1 else "differ"
    return [f"{CROISSANT_FILE}: its {' and '.join(differing)} {verb} from what the manifests give; rerun `cogen card`"] \
        if differing else []


def _header_problems(header: dict, manifests: dict[str, dict]) -> list[str]:
    """How the card's ``configs`` and ``dataset_info`` differ from the header rendered from the manifests."""
    from cogen.card import card_header

    fresh = yaml.safe_load(yaml.safe_dump(card_header(manifests), sort_keys=False, allow_unicode=True))
    listed = _by_name(header.get("configs"))
    wanted = _by_name(fresh.get("configs"))
    if listed is None:
        return ["the card's `configs` is not a list of configs"]
    problems = [f"{name} missing from configs" for name in wanted if name not in listed]
    problems += [f"{name} listed but not built" for name in listed if name not in wanted]
    defaults = [name for name, entry in listed.items() if entry.get("default")]
    if len(defaults) != 1:
        problems.append(f"{len(defaults)} default configs (need exactly one)")
    elif defaults != [name for name, entry in wanted.items() if entry.get("default")]:
        problems.append(f"the default config is {defaults[0]}, the first built config is the default")
    for name in [n for n in wanted if n in listed]:
        problems += _entry_problems(name, listed[name], wanted[name])
    entries = header.get("dataset_info", [])
    if isinstance(entries, dict):  # the mapping `datasets` writes for one config (an edited card may hold it)
        entries = [{"config_name": entries.get("config_name", next(iter(listed), "default")), **entries}]
    infos, fresh_infos = _by_name(entries) or {}, _by_name(fresh.get("dataset_info")) or {}
    for name, info in fresh_infos.items():
        found = infos.get(name)
        if found is None:
            problems.append(f"{name} has no dataset_info")
            continue
        splits = {s.get("name"): s.get("num_examples") for s in found.get("splits", []) if isinstance(s, dict)} \
            if isinstance(found.get("splits"), list) else None
        if splits != {s["name"]: s["num_examples"] for s in info["splits"]}:
            problems.append(f"{name} row counts differ")
        differing = sorted(key for key in {*info, *found} if key != "config_name" and found.get(key) != info.get(key))
        if differing:
            problems.append(f"{name}: dataset_info's {', '.join(differing)} differ from the manifests'")
    problems += [f"{name} has a dataset_info but is not built" for name in infos if name not in fresh_infos]
    return problems


def _by_name(entries) -> dict[str, dict] | None:
    """``config_name`` -> entry of a list of mappings (None when it is not one)."""
    if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("config_name"), str)
                                                for e in entries):
        return None
    return {entry["config_name"]: entry for entry in entries}


def _entry_problems(name: str, listed: dict, wanted: dict) -> list[str]:
    """How one entry of the card's ``configs`` differs from the rendered one (``data_files`` first)."""
    files = listed.get("data_files")
    paths = {f.get("split"): f.get("path") for f in files if isinstance(f, dict)} if isinstance(files, list) else {}
    fresh = {f["split"]: f["path"] for f in wanted["data_files"]}
    problems = [f"{name} {split}: the card loads {paths.get(split, 'nothing')}, the manifests give {path}"
                for split, path in fresh.items() if paths.get(split) != path]
    problems += [f"{name}: the card loads a split {split} that was not built" for split in paths if split not in fresh]
    if not problems and files != wanted["data_files"]:
        problems.append(f"{name}: the card's data_files are not the manifests'")
    extra = sorted(key for key in listed if key not in ("config_name", "data_files", "default"))
    if extra:
        problems.append(f"{name}: the card's configs entry has fields cogen does not write ({', '.join(extra)})")
    return problems


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
    links = [shards.relative_to(folder).as_posix()] if shards.is_symlink() else []
    problems += [f"{f} is a symbolic link (a build writes real folders and files, and never follows a link)"
                 for f in links + sorted(f for f in present if (folder / f).is_symlink())]
    counts, readable = [], not (listed - present)
    for split, info in manifest["splits"].items():
        rows, footers = 0, []
        for file in info["files"]:
            if file not in present:
                continue
            footer = _footer(folder / file, expected)
            if isinstance(footer, str):
                problems.append(f"{file}: {footer}")
                readable = False
            else:
                rows += footer.num_rows
                footers.append((file, footer))
        counts.append(f"{split} {rows}")
        if readable and rows != info["rows"]:
            problems.append(f"{split}: {rows} rows in the files, {info['rows']} in the manifest")
        if readable:
            problems += _footer_problems(manifest, split, footers)
    return Check(config, "files and schema", not problems, "; ".join(problems) or ", ".join(counts)), readable


def _footer(path: Path, expected):
    """The Parquet metadata of a file whose schema is ``expected``, or what is wrong with it."""
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
    return metadata


def _footer_problems(manifest: dict, split: str, footers: list) -> list[str]:
    """What the footers of a split's files say that the manifest does not: each file's stamp names the
    config, split, fingerprint and format, and the rows it holds, the files in order covering the
    split from row 0."""
    problems, start = [], 0
    wanted = {"fingerprint": manifest.get("fingerprint"), "config": manifest["config"], "split": split}
    if "parquet_format" in manifest:
        wanted.update(parquet_format=manifest["parquet_format"], cdc=manifest.get("parquet_cdc", False))
    for file, metadata in footers:
        try:
            stamp = json.loads((metadata.metadata or {})[b"cogen"])
        except (KeyError, ValueError):
            problems.append(f"{file}: no cogen stamp in its footer")
            continue
        differing = [key for key, value in wanted.items() if not isinstance(stamp, dict) or stamp.get(key) != value]
        if not differing and (stamp.get("start"), stamp.get("stop")) != (start, start + metadata.num_rows):
            differing = ["rows"]
        if differing:
            problems.append(f"{file}: its footer stamp is not the one of this file of {split} ({', '.join(differing)})")
        start += metadata.num_rows
    return problems


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
    """The determinism check, fed row groups: in each, the rows :meth:`ConfigData.regeneration_window`
    picks are regenerated from the manifest alone with ``regenerate(manifest, split, start, stop) ->
    pyarrow.Table`` and compared with the stored rows, row for row (ids, order and every column)."""

    def __init__(self, data: ConfigData, regenerate):
        self.data, self.regenerate = data, regenerate
        self.rows: dict[str, int] = {}
        self.differs: str | None = None

    def add(self, split: str, file: str, start: int, table) -> None:
        """Compare the chosen rows of ``table`` (rows ``start...`` of ``split``) with their regeneration."""
        window = self.data.regeneration_window(split, start, table.num_rows)
        if window is None or self.differs is not None:
            return
        offset, length = window
        fresh = self.regenerate(self.data.manifest, split, start + offset, start + offset + length)
        stored = table.slice(offset, length)
        if fresh.num_rows != length or not fresh.equals(stored.cast(fresh.schema)):
            first = start + offset + next((i for i in range(min(length, fresh.num_rows))
                                           if not fresh.slice(i, 1).equals(stored.slice(i, 1).cast(fresh.schema))), 0)
            self.differs = f"{file}: row {first} of {split} differs from the row its manifest regenerates"
        self.rows[split] = self.rows.get(split, 0) + length

    def check(self, problem: str | None = None) -> Check:
        """The check's result (``problem``: a reason it could not run)."""
        config = self.data.config
        if problem is not None:
            return Check(config, "determinism", False, problem)
        if self.differs is not None:
            return Check(config, "determinism", False, self.differs)
        if not self.rows:
            return Check(config, "determinism", True, "no rows regenerated (sample 0)")
        splits = self.data.manifest["splits"]
        whole = [split for split, rows in self.rows.items() if rows == splits[split]["rows"]]
        part = [f"{rows:,} of {split}'s {splits[split]['rows']:,}" for split, rows in self.rows.items()
                if split not in whole]
        shown = ([f"every row of {', '.join(whole)}"] if whole else []) + \
            ([f"{', '.join(part)} (random rows of each row group)"] if part else [])
        return Check(config, "determinism", True, f"{sum(self.rows.values()):,} rows regenerated from the manifest and "
                                                   f"equal: {'; '.join(shown)}")


def spec_check(manifest: dict) -> Check:
    """The **spec** check of one config (see the module docstring), from its manifest alone."""
    config = manifest["config"]
    try:
        problems, origin = _spec_problems(manifest)
    except (CogenError, KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
        problems, origin = [f"the manifest's spec cannot be read ({_reason(error)})"], ""
    if problems:
        return Check(config, "spec", False, "; ".join(problems))
    return Check(config, "spec", True, f"{origin}; its fingerprint and split sizes are the manifest's")


def _spec_problems(manifest: dict) -> tuple[list[str], str]:
    """What the manifest's spec does not give as the manifest says, and where the spec came from."""
    record = family(manifest.get("family"))
    rows_per_shard = int(manifest.get("rows_per_shard", 50_000))
    setting = record.load("builder").settings_from_manifests([manifest])[0]
    builder = record.make_builder(setting, rows_per_shard)
    problems = []
    fingerprint = builder.fingerprints().get(manifest["config"])
    if fingerprint != manifest.get("fingerprint"):
        problems.append(f"the spec, seed, generator version and object bank in the manifest give the fingerprint "
                        f"{str(fingerprint)[:12]}..., the manifest records {str(manifest.get('fingerprint'))[:12]}...")
    config = next(c for c in setting.configs if c.name == manifest["config"])
    sizes = builder.split_sizes(config) if hasattr(builder, "split_sizes") else None
    recorded = {split: info.get("rows") for split, info in manifest["splits"].items()}
    if sizes and dict(sizes) != recorded:  # empty: only the family's first pass knows them
        problems.append(f"the spec makes splits of {_sizes(sizes)} rows, the manifest records {_sizes(recorded)}")
    packaged = manifest.get("packaged_spec")
    if packaged is None:
        return problems, (f"built from {str(manifest.get('spec_file', 'a spec file'))[:80]!r}, a user's spec file, not "
                          "recorded as one of cogen's packaged specs (the card says so)")
    return problems + _packaged_problems(manifest, str(packaged), rows_per_shard), \
        f"cogen's packaged spec {packaged!r} (scale {manifest['inputs']['scale']}, seed {manifest.get('seed')})"


def _packaged_problems(manifest: dict, name: str, rows_per_shard: int) -> list[str]:
    """How the manifest differs from what the packaged spec ``name`` makes at the recorded scale and seed."""
    from cogen.specs import load_spec, packaged_specs

    if name not in packaged_specs():
        return [f"the manifest names the packaged spec {name[:80]!r}, which this cogen does not ship"]
    inputs = manifest.get("inputs")
    if not isinstance(inputs, dict) or "scale" not in inputs:
        return ["the manifest records no scale (written by an older cogen), so it cannot be compared with the packaged "
                f"spec {name}: rebuild it"]
    setting = load_spec(name).scaled(inputs["scale"]).with_seed(manifest.get("seed"))
    config = next((c for c in setting.configs if c.name == manifest["config"]), None)
    if config is None:
        return [f"the packaged spec {name} makes no config {manifest['config']}"]
    builder = family(setting.family).make_builder(setting.only([config.name]), rows_per_shard)
    made = json.loads(json.dumps({**builder.info(config), "fingerprint": builder.fingerprints()[config.name]}))
    differing = [key for key, value in made.items() if manifest.get(key) != value]
    if not differing:
        return []
    return [f"the manifest names the packaged spec {name} but is not what it makes at scale {inputs['scale']}, seed "
            f"{manifest.get('seed')} ({', '.join(differing)} differ"
            + (f"; written by cogen {manifest.get('versions', {}).get('cogen')}, this is cogen {__version__}"
               if manifest.get("versions", {}).get("cogen") != __version__ else "") + ")"]


def _sizes(splits: dict) -> str:
    return ", ".join(f"{split} {rows}" for split, rows in splits.items())


def _preview_check(folder: Path, manifest: dict) -> Check:
    """The **preview** check: ``previews/<config>.png`` shows what cogen draws from the config's rows now."""
    from cogen.card.preview import preview_problem

    config = manifest["config"]
    try:
        problem = preview_problem(folder, manifest)
    except _read_errors() as error:
        problem = f"the preview cannot be checked ({_reason(error)})"
    if problem is not None:
        return Check(config, "preview", False, problem)
    return Check(config, "preview", True, "the card's preview image is the one cogen draws from these rows, or there is "
                                          "none")


def failed(checks: list[Check]) -> list[Check]:
    """The checks that did not pass."""
    return [c for c in checks if not c.ok]
