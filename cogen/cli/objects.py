"""``cogen objects``: build, count, check and look at the object bank."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cogen.cli import _console
from cogen.cli._help import examples

BankPathOpt = Annotated[Path | None, typer.Option("--path", help="Bank folder.", show_default="the one shipped with cogen")]


def _build(out: Annotated[Path | None, typer.Option("--out", help="Folder to write.", show_default="the shipped objects/")] = None) -> None:
    """Rebuild the bank from scratch (deterministic) and print its counts and checksums."""
    from rich.table import Table

    from cogen._resources import objects_dir
    from cogen.bank import build_bank, write_bank

    directory = out if out is not None else objects_dir()
    with _console.err.status("building the object bank (the first run compiles Numba kernels)"):
        manifest = write_bank(build_bank(), directory)
    counts = ", ".join(f"{value:,} {key}" for key, value in manifest["counts"].items())
    _console.out.print(f"wrote {directory}: {counts}")
    table = Table("file", "bytes", "sha256", box=None)
    for name, entry in manifest["files"].items():
        table.add_row(name, f"{entry['bytes']:,}", entry["sha256"])
    _console.out.print(table)


def _info(
    path: BankPathOpt = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the counts as JSON on stdout (for scripts).")] = False,
) -> None:
    """Counts per property and metadata value, and the experiment pool sizes."""
    from rich.table import Table

    from cogen.bank import POOLS, load_bank, pool_sizes

    bank = load_bank(path)
    if json_output:
        _console.print_json({
            "objects": len(bank), "sha256": bank.sha256, "builder": bank.meta.get("builder_version"),
            "pools": {name: {"filter": POOLS[name].description, "objects": size, "reference": POOLS[name].reference}
                      for name, size in pool_sizes(bank).items()},
            "properties": [{"column": name, "value": value, "objects": count}
                           for name in bank.column_names for value, count in _counts(bank, name)]})
        return
    _console.out.print(f"{len(bank):,} objects, sha256 {bank.sha256}, builder {bank.meta.get('builder_version')}")
    pools = Table("pool", "filter", "objects", "reference", title="experiment pools", title_justify="left")
    for name, size in pool_sizes(bank).items():
        pools.add_row(name, POOLS[name].description, f"{size:,}", f"{POOLS[name].reference:,}")
    _console.out.print(pools)
    table = Table("column", "value", "objects", "share", title="properties and metadata", title_justify="left")
    for name in bank.column_names:
        for value, count in _counts(bank, name):
            table.add_row(name, value, f"{count:,}", f"{count / len(bank):.1%}")
    _console.out.print(table)


def _counts(bank, name: str) -> list[tuple[str, int]]:
    """(value, objects) of one bank column: true count, each string value, or the numeric range."""
    import numpy as np

    column = bank.column(name)
    if column.dtype == bool:
        return [("true", int(column.sum()))]
    if column.dtype.kind in "US":
        return [(str(v), int(c)) for v, c in zip(*np.unique(column, return_counts=True), strict=True)]
    return [(f"{column.min()}..{column.max()} (mean {column.mean():.1f})", len(bank))]


def _verify(
    path: BankPathOpt = None,
    regenerate: Annotated[bool, typer.Option("--regenerate", help="Also rebuild the bank from scratch and compare: "
                                             "catches files changed with their manifest re-signed.")] = False,
) -> None:
    """Check every bank file against the checksums of its manifest (and, with --regenerate, against a fresh build)."""
    from cogen.bank import check_rebuilt, verify_bank
    from cogen.errors import BankError

    manifest = verify_bank(path)
    _console.out.print(f"ok: {len(manifest['files'])} files match manifest.json")
    if regenerate:
        with _console.err.status("rebuilding the object bank to compare (the first run compiles Numba kernels)"):
            problem = check_rebuilt(path)
        if problem is not None:
            raise BankError(problem)
        _console.out.print("ok: the bank is the one `cogen objects build` makes, byte for byte")


def _show(
    ids: Annotated[list[int] | None, typer.Option("--id", help="Object id (repeatable).")] = None,
    where: Annotated[str | None, typer.Option("--where", help="e.g. 'is_shape_fully_connected, rows<6, !is_shape_hollow'.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Most objects to draw for --where.")] = 12,
    path: BankPathOpt = None,
) -> None:
    """Draw objects in the terminal with their colours."""
    from cogen.bank import load_bank, parse_where
    from cogen.cli._display import grids_side_by_side

    if not ids and where is None:
        raise typer.BadParameter("give --id N (repeatable) or --where '...'")
    bank = load_bank(path)
    chosen = list(ids or [])
    for i in chosen:
        bank.object(i)  # out-of-range ids raise a clear BankError
    if where is not None:
        matches = bank.select(parse_where(where))
        _console.out.print(f"{len(matches):,} objects match; showing {min(limit, len(matches))}")
        chosen += [int(i) for i in matches[:limit]]
    for start in range(0, len(chosen), 6):
        batch = chosen[start:start + 6]
        titles = [f"#{i} {bank.shapes[i][0]}x{bank.shapes[i][1]}" for i in batch]
        _console.out.print(grids_side_by_side([bank.object(i) for i in batch], titles))


def register(app: typer.Typer) -> None:
    """Add the ``objects`` command group to ``app``."""
    objects = typer.Typer(help="The object bank: build it, count it, check it, look at it.", no_args_is_help=True,
                          epilog=examples("cogen objects info", "cogen objects show --where 'rows<6, !is_shape_hollow'"))
    objects.command("build", epilog=examples("cogen objects build --out my-objects"))(_build)
    objects.command("info", epilog=examples("cogen objects info", "cogen objects info --json"))(_info)
    objects.command("verify", epilog=examples("cogen objects verify"))(_verify)
    objects.command("show", epilog=examples("cogen objects show --id 12 --id 40",
                                            "cogen objects show --where 'rows<6, is_shape_fully_connected' --limit 6"))(_show)
    app.add_typer(objects, name="objects")
