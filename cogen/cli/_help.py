"""Help conventions every command follows, and the completions of option values.

* Every command's ``--help`` (and ``-h``) ends with examples: ``epilog=examples("cogen ...")``.
  ``tests/test_cli_conventions.py`` parses every example against its command, so they stay true.
* Defaults are shown by typer itself: give an option its real default, or, where the default
  depends on something else, ``show_default="..."``; never a ``[default: ...]`` in the help text
  (typer renders help as rich markup, which eats square brackets).
* ``--json`` is a flag that prints the result as JSON on stdout; a file of JSON is ``--json-out FILE``.

Completions (``cogen --install-completion``) offer packaged spec names, the configs of the
``--data`` folder, export formats, column views and transformation names. They never raise: a
completion that cannot be computed offers nothing.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["complete_columns", "complete_configs", "complete_formats", "complete_specs", "complete_transforms",
           "examples"]


def examples(*commands: str) -> str:
    """A command's epilog: its examples, one per line, shown verbatim at the end of its help."""
    title = "Examples:" if len(commands) > 1 else "Example:"
    return "\b\n" + title + "\n" + "\n".join(f"  {command}" for command in commands)


def _matching(names, incomplete: str) -> list[str]:
    return [name for name in names if name.startswith(incomplete)]


def complete_specs(incomplete: str) -> list[str]:
    """Packaged spec names and the configs they hold (``--config`` of ``build`` and ``stream``)."""
    try:
        from cogen._resources import packaged_specs
        from cogen.specs import load_spec

        specs = packaged_specs()
        configs = [config.name for path in specs.values() for config in load_spec(path).configs]
        return _matching([*specs, *configs], incomplete)
    except Exception:  # noqa: BLE001 - a completion must never raise into the shell
        return []


def complete_configs(ctx, incomplete: str) -> list[str]:
    """The configs of the ``--data`` folder (or the ``FOLDER`` argument) given before on the command line."""
    try:
        from cogen.folder import is_dataset_folder, read_manifests

        # while an option's value is completed, the arguments before it are left unparsed in ctx.args
        given = [ctx.params.get(name) for name in ("data", "folder", "source")] + list(ctx.args)
        source = next((str(path) for path in given if path and is_dataset_folder(str(path))), None)
        if source is None:
            return []
        return _matching(read_manifests(Path(source).expanduser()), incomplete)
    except Exception:  # noqa: BLE001 - a completion must never raise into the shell
        return []


def complete_formats(incomplete: str) -> list[str]:
    """Export formats."""
    from cogen.export import formats

    return _matching(formats(), incomplete)


def complete_columns(incomplete: str) -> list[str]:
    """Column views of ``export --columns``."""
    from cogen.io.views import column_views

    return _matching(column_views(), incomplete)


def complete_transforms(incomplete: str) -> list[str]:
    """Transformation names, for a comma-separated sequence (completes its last name)."""
    from cogen.engine.registry import TRANSFORMS

    done, _, last = incomplete.rpartition(",")
    prefix = f"{done}," if done else ""
    return [prefix + name for name in TRANSFORMS if name.startswith(last)]
