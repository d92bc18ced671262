"""``cogen push``, ``cogen merge``, ``cogen render`` and ``cogen card``: publishing a build folder."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from cogen.cli import _console
from cogen.cli._help import complete_configs, examples
from cogen.cli._options import FolderArg, one_config


class VerifyLevel(str, Enum):
    default = "default"
    regenerate = "regenerate"


def register(app: typer.Typer) -> None:
    """Add the publishing commands to ``app``."""
    app.command("push", epilog=examples("cogen push cogen-data --repo org/benchmark --dry-run"))(push)
    app.command("merge", epilog=examples("cogen merge out/c1 out/g2 --into hub/benchmark"))(merge)
    app.command("render", epilog=examples("cogen render cogen-data --config C1-1 --split test_ood -n 8 --out previews"))(render)
    app.command("card", epilog=examples("cogen card cogen-data --license cc-by-4.0 --no-previews"))(card)


PrettyNameOpt = Annotated[str | None, typer.Option("--pretty-name", help="Card title.",
                                                    show_default="card.yaml, else cogen's", rich_help_panel="Card")]
LicenseOpt = Annotated[str | None, typer.Option("--license", help="Licence id for the card, e.g. cc-by-4.0.",
                                                show_default="card.yaml, else apache-2.0",
                                                rich_help_panel="Card")]
TagOpt = Annotated[list[str] | None, typer.Option("--tag", help="Card tag (repeat; replaces the default tags).",
                                                  rich_help_panel="Card")]
TaskCategoryOpt = Annotated[list[str] | None, typer.Option("--task-category", help="Hub task category (repeat).",
                                                           rich_help_panel="Card")]
SizeCategoryOpt = Annotated[str | None, typer.Option("--size-category", help="Hub size category, e.g. 10K<n<100K.",
                                                     show_default="from the row count",
                                                     rich_help_panel="Card")]
PaperOpt = Annotated[list[str] | None, typer.Option("--paper", help="Another paper to link: an arXiv id or a URL "
                                                                    "(repeat).", rich_help_panel="Card")]
ProseOpt = Annotated[str | None, typer.Option("--prose", help="Extra text under the card's summary (Markdown).",
                                              rich_help_panel="Card")]


def _card_settings(folder: Path, pretty_name, license, tags, task_categories, size_category, papers, prose):
    from cogen.card.settings import read_card_settings

    return read_card_settings(folder, pretty_name=pretty_name, license=license, tags=tags,
                              task_categories=task_categories, size_categories=size_category, papers=papers,
                              prose=prose)


def _size(num_bytes: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if num_bytes < 1000 or unit == "GB":
            return f"{num_bytes:,.0f} {unit}" if unit == "B" else f"{num_bytes:,.1f} {unit}"
        num_bytes /= 1000
    return f"{num_bytes:,.1f} GB"


def push(
    folder: FolderArg,
    repo: Annotated[str, typer.Option("--repo", "-r", help="Dataset repo id, owner/name (created if needed).")],
    private: Annotated[bool, typer.Option("--private", help="Create the repo private (if it does not exist).")] = False,
    token: Annotated[str | None, typer.Option(help="Hub token.", show_default="HF_TOKEN or the saved login")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print what would be uploaded; no network.")] = False,
    verify: Annotated[VerifyLevel, typer.Option("--verify", case_sensitive=False, help="Checks run first (also with "
                                                "--dry-run), refusing a folder that fails: `default` is `cogen "
                                                "verify`, `regenerate` is `cogen verify --regenerate` (every shard "
                                                "rebuilt; costs about a build).")] = VerifyLevel.default,
    no_verify: Annotated[bool, typer.Option("--no-verify", help="Push without any check.")] = False,
    message: Annotated[str | None, typer.Option("--message", "-m", help="Commit message.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the result as JSON (for scripts).")] = False,
    pretty_name: PrettyNameOpt = None,
    license: LicenseOpt = None,
    tag: TagOpt = None,
    task_category: TaskCategoryOpt = None,
    size_category: SizeCategoryOpt = None,
    paper: PaperOpt = None,
    prose: ProseOpt = None,
) -> None:
    """Publish a build folder to a Hugging Face dataset repo in one commit (honours HF_ENDPOINT, HF_TOKEN).

    The card (README.md) takes its metadata from card.yaml in the folder and the card options; text
    written between the card's `<!-- cogen:user NAME -->` markers, in the folder or on the Hub, is kept.
    """
    from cogen.folder import MANAGED_DIRS
    from cogen.hub.publish import push as run_push

    settings = _card_settings(folder, pretty_name, license, tag, task_category, size_category, paper, prose)
    result = run_push(folder, repo, token=token, private=private, dry_run=dry_run,
                      verify=False if no_verify else verify.value,
                      commit_message=message, card_settings=settings)
    plan = result.plan
    if json_output:
        _console.print_json(_push_json(result))
        return
    if dry_run:
        _print_plan(plan)
        diff = plan.readme_diff
        _console.out.print(f"README.md changes:\n{diff}" if diff else "README.md: unchanged", soft_wrap=True)
        _console.out.print(f"dry run: would upload {len(plan.files)} files ({_size(plan.total_bytes)}) to {repo} in "
                           f"one commit, and delete remote files under {', '.join(MANAGED_DIRS)} that are not listed")
        return
    _console.out.print(f"pushed {len(plan.files)} files ({_size(plan.total_bytes)}), {len(plan.configs)} configs "
                       f"to {repo} in one commit ({result.seconds:.1f} s)"
                       + (f"; deleted {len(result.deleted)} stale files" if result.deleted else ""))
    _console.out.print(f"commit: {result.commit_url}")
    _console.out.print(f'load with: datasets.load_dataset("{repo}", "{next(iter(plan.configs))}")')


def _push_json(result) -> dict:
    plan = result.plan
    return {"repo": result.repo_id, "dry_run": result.dry_run, "configs": plan.configs,
            "files": [{"path": f.path, "size": f.size} for f in plan.files], "total_bytes": plan.total_bytes,
            "readme_diff": plan.readme_diff, "commit_url": result.commit_url, "commit": result.commit_oid,
            "deleted": result.deleted, "seconds": round(result.seconds, 3)}


def _print_plan(plan) -> None:
    from rich.table import Table

    configs = Table(title=f"{len(plan.configs)} configs", title_justify="left")
    splits = list(dict.fromkeys(s for sizes in plan.configs.values() for s in sizes))
    for column in ("config", *splits):
        configs.add_column(column, justify="left" if column == "config" else "right")
    for name, sizes in plan.configs.items():
        configs.add_row(name, *(f"{sizes[s]:,}" if s in sizes else "–" for s in splits))
    _console.out.print(configs)
    files = Table(title=f"{len(plan.files)} files, {_size(plan.total_bytes)}", title_justify="left")
    files.add_column("path")
    files.add_column("size", justify="right")
    for file in plan.files:
        files.add_row(file.path, _size(file.size))
    _console.out.print(files)


def merge(
    sources: Annotated[list[Path], typer.Argument(help="Dataset folders to merge.")],
    into: Annotated[Path, typer.Option("--into", "-o", help="Destination dataset folder (created, or updated in place).")],
    link: Annotated[bool, typer.Option("--link", help="Hard-link shards instead of copying them.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Replace a config of --into built with other inputs (seed, "
                                        "scale, spec), or a README.md in --into that cogen did not write.")] = False,
) -> None:
    """Merge build folders into one Hub-ready folder with one dataset card listing every config."""
    from cogen.hub.merging import merge as run_merge

    report = run_merge(sources, into, link=link, force=force)
    for label, names in (("added", report.added), ("replaced", report.replaced), ("unchanged", report.unchanged)):
        if names:
            _console.out.print(f"{label} ({len(names)}): {', '.join(names)}")
    _console.out.print(f"merged into {report.folder} in {report.seconds:.1f} s; check with `cogen verify {report.folder}`")


def render(
    folder: FolderArg,
    config: Annotated[str | None, typer.Option("--config", "-c", callback=one_config,
                                               help="Comma-separated configs of the folder.", show_default="all",
                                               autocompletion=complete_configs)] = None,
    split: Annotated[str | None, typer.Option(help="Split to draw.", show_default="test_ood, else the last split")] = None,
    n: Annotated[int, typer.Option("-n", min=1, help="Pairs (of each kind) to draw.")] = 8,
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the PNG files.")] = Path("previews"),
    cell: Annotated[int | None, typer.Option(min=1, help="Pixels per grid cell.", show_default="fit ~100 px a grid")] = None,
) -> None:
    """Draw input/output pairs of built data as PNG images with the ARC colours (<config>-<split>.png)."""
    from cogen.card.preview import render_config

    names = [name.strip() for name in config.split(",") if name.strip()] if config else None
    for preview in render_config(folder, names, split, n, out, cell):
        _console.out.print(f"{preview.path}  ({', '.join(preview.labels)})")


def card(
    folder: FolderArg,
    previews: Annotated[bool, typer.Option("--previews/--no-previews", help="Bring preview images up to date.")] = True,
    force: Annotated[bool, typer.Option("--force", help="Replace a README.md that cogen did not write.")] = False,
    pretty_name: PrettyNameOpt = None,
    license: LicenseOpt = None,
    tag: TagOpt = None,
    task_category: TaskCategoryOpt = None,
    size_category: SizeCategoryOpt = None,
    paper: PaperOpt = None,
    prose: ProseOpt = None,
) -> None:
    """Rewrite the dataset card (README.md) and its preview images from the folder's manifests.

    Metadata comes from card.yaml in the folder (pretty_name, license, tags, task_categories,
    size_categories, papers, prose), overridden by the card options; text written between the
    card's `<!-- cogen:user NAME -->` and `<!-- cogen:end-user NAME -->` markers is kept.
    """
    from cogen.card.card import write_card
    from cogen.folder import folder_manifests

    folder_manifests(folder)  # a clear error when FOLDER is not a dataset folder
    settings = _card_settings(folder, pretty_name, license, tag, task_category, size_category, paper, prose)
    _console.out.print(f"wrote {write_card(folder, previews=previews, force=force, settings=settings)}")
