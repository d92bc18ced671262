"""Family options on the command line: what each family's record declares becomes a typer option.

A family declares its options in its record (:class:`cogen.family.Option`: name, type, default, help,
checks), for the commands they belong to. :func:`with_family_options` adds every option the families
declare for some commands to a typer command, after its own parameters: one option per name, whose
help says, family by family, what it does there. The command receives the options given (not the
ones left out) as ``family_options``; the library checks them against the family of the data
(:meth:`cogen.family.Family.check_options`), which knows it only once the data is read. Typer stays
the one parser: the options are ordinary typer parameters of a signature made here.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Any

import typer

import cogen.family
from cogen.family import Family, Option

__all__ = ["declared_options", "with_family_options"]


def declared_options(commands: Iterable[str], records: Iterable[Family] | None = None,
                     accepts: Callable[[Option], bool] | None = None) -> dict[str, list[tuple[Family, Option]]]:
    """Name -> every (family, option) that declares it for one of ``commands`` (all families unless
    ``records``; only options ``accepts`` keeps), in the registry's order; a family that declares a name
    for several of ``commands`` is listed with its declaration for the first of them."""
    found: dict[str, list[tuple[Family, Option]]] = {}
    for record in cogen.family.FAMILIES.values() if records is None else records:
        for command in commands:
            for option in record.options_for(command).values():
                pairs = found.setdefault(option.name, [])
                if (accepts is None or accepts(option)) and not any(r is record for r, _ in pairs):
                    pairs.append((record, option))
    return {name: pairs for name, pairs in found.items() if pairs}


def _default_text(option: Option) -> str:
    if option.default is None or (option.type is bool and not option.negatable and option.default is False):
        return ""
    value = ("on" if option.default else "off") if option.type is bool else option.default
    return f" ({value} when not given)"


def _help(pairs: list[tuple[Family, Option]]) -> str:
    return " ".join(f"{record.title}: {option.help}{_default_text(option)}" for record, option in pairs)


def _parameter(name: str, pairs: list[tuple[Family, Option]]) -> inspect.Parameter:
    """The typer parameter of one option name (its declarations must agree on type and flag)."""
    first = pairs[0][1]
    for record, option in pairs[1:]:
        if (option.type, option.option, option.short, option.negatable) != \
                (first.type, first.option, first.short, first.negatable):
            raise TypeError(f"option {name!r} of {record.title} is declared unlike {pairs[0][0].title}'s "
                            "(type, flag, short name and negation must agree)")
    names = [first.option] + ([first.short] if first.short else [])
    if first.type is bool and first.negatable:
        names = [f"{first.option}/--no-{first.option.removeprefix('--')}"] + names[1:]
        hint: Any = bool | None
    elif first.type is bool:
        hint = bool
    else:
        hint = first.type | None
    info = typer.Option(*names, help=_help(pairs), show_default=False,
                        metavar=None if first.type is bool else _metavar(first))
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[hint, info],
                             default=False if first.type is bool and not first.negatable else None)


def _metavar(option: Option) -> str:
    if option.choices:
        return "[" + "|".join(map(str, option.choices)) + "]"
    return {int: "INTEGER", float: "FLOAT", Path: "PATH"}.get(option.type, "TEXT")


def with_family_options(*commands: str, records: Iterable[Family] | None = None,
                        accepts: Callable[[Option], bool] | None = None) -> Callable:
    """Decorate a typer command so that it takes every family option declared for ``commands``
    (see the module docstring); it receives them as ``family_options`` (a dict of the options given)."""

    def decorate(func: Callable) -> Callable:
        own = inspect.signature(func, eval_str=True)
        declared = declared_options(commands, records, accepts)
        clash = sorted(set(declared) & set(own.parameters))
        if clash:
            raise TypeError(f"family option {clash[0]!r} has the name of an option of {func.__name__}")
        extra = [_parameter(name, pairs) for name, pairs in declared.items()]

        @functools.wraps(func)
        def command(**values):
            given = {p.name: values.pop(p.name) for p in extra}
            given = {k: v for k, v in given.items() if v is not None and v is not False}
            for name, value in given.items():
                _check_early(value, declared[name])
            return func(**values, family_options=given)

        params = [p for p in own.parameters.values() if p.name != "family_options"]
        command.__signature__ = own.replace(parameters=params + extra)
        return command

    return decorate


def _check_early(value: Any, pairs: list[tuple[Family, Option]]) -> None:
    """Refuse a value that no family declaring the option would take, before any data is read (which
    family's rules apply is known only then)."""
    from cogen.errors import CogenError

    reasons = []
    for _, option in pairs:
        try:
            option.check(value)
            return
        except CogenError as error:
            reasons.append(str(error))
    raise typer.BadParameter(reasons[0])
