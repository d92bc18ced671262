"""``cogen transforms``: list the 28 transformations of the engine's registry as a table."""

from __future__ import annotations

from typing import Annotated

import typer

from cogen.cli._help import examples

__all__ = ["register"]


def transforms(
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the Markdown table (docs/specs.md, dataset card).")] = False,
    examples: Annotated[bool, typer.Option("--examples", help="Print each transformation's worked example.")] = False,
) -> None:
    """List every transformation: token, name, family, preconditions, algebra, description."""
    from rich.table import Table
    from rich.text import Text

    from cogen.cli import _console
    from cogen.engine.registry import TRANSFORMS, markdown_table

    if markdown or examples:  # plain text: rich would wrap the long lines
        text = markdown_table() if markdown else "\n\n".join(t.__doc__ for t in TRANSFORMS.values()) + "\n"
        typer.echo(text, nl=False)
        return
    table = Table(title="Transformations (token 0 = identity)", header_style="bold")
    table.add_column("token", justify="right", no_wrap=True)
    table.add_column("name", no_wrap=True)
    table.add_column("family", no_wrap=True)
    for column in ("preconditions (initial object)", "algebra", "description"):
        table.add_column(column)
    for t in TRANSFORMS.values():
        name = Text(t.name)
        for alias in t.aliases:
            name.append(f"\n= {alias}", style="dim")
        table.add_row(str(t.token), name, t.family, t.precondition_text().replace(", ", "\n"),
                      t.algebra(), t.description)
    _console.out.print(table)


def register(app: typer.Typer) -> None:
    """Add the ``transforms`` command to the ``cogen`` app."""
    app.command("transforms", epilog=examples("cogen transforms", "cogen transforms --markdown"))(transforms)
