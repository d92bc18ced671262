"""``cogen view``: serve one page that draws a dataset's rows, and a model's mistakes, as grids."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cogen.cli import _console
from cogen.cli._help import complete_configs, examples
from cogen.cli._options import one_config

__all__ = ["register", "view"]


def view(
    source: Annotated[str, typer.Argument(metavar="DIR_OR_REPO", help="A dataset folder (`cogen build` output) "
                                                                      "or a Hub dataset repo id (owner/name).")],
    predictions: Annotated[Path | None, typer.Option("--predictions", "-p", help="A predictions file, as `cogen eval` "
                                                     "scores it: each prediction is drawn beside the truth.")] = None,
    config: Annotated[str | None, typer.Option("--config", "-c", callback=one_config, autocompletion=complete_configs,
                                               help="The config to open (with --predictions: the one it answers).",
                                               show_default="read from the predictions' ids")] = None,
    split: Annotated[str | None, typer.Option("--split", "-s", help="The split to open.",
                                              show_default="the first, or the one the predictions answer")] = None,
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port on 127.0.0.1 (0: a free one).")] = 0,
    browser: Annotated[bool, typer.Option("--browser/--no-browser", help="Open the page in the browser.")] = True,
) -> None:
    """Browse a dataset in the browser, grids drawn as grids (127.0.0.1 only, read-only; Ctrl-C stops)."""
    from cogen.view import ViewApp, make_server

    app = ViewApp(source, predictions=predictions, config=config, split=split)
    server = make_server(app, port)
    app.start_scoring()
    _console.out.print(f"cogen view: {app.source.name} at {server.url} (Ctrl-C stops)", soft_wrap=True)
    if browser:
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        _console.out.print("cogen view: stopped", soft_wrap=True)
    finally:
        server.server_close()


def register(root: typer.Typer) -> None:
    """Add ``cogen view`` to the ``cogen`` app."""
    root.command("view", epilog=examples("cogen view cogen-data",
                                         "cogen view cogen-data -p preds.jsonl -c C1-1 -s test_ood --no-browser"))(view)
