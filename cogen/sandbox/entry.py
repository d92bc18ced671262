"""Which function of a program is "the program" P, or whether P is a script (F2, F5 of the fidelity review).

Seed 003 asks for a program P that outputs y_i on input x_i; models write it in several shapes. By
the source alone (:func:`entry_point`):

1. a top-level function named as the prompt asks (``f``) is called, once per input;
2. else the top-level function of one argument that no *other* top-level function uses (helpers are
   used by the main function); among several, one that returns a value before one that only
   prints, then the last defined;
3. else the program is a **script**: run once per input as ``__main__`` with the input on stdin
   (for ``input()`` or ``sys.stdin``); its printed grid is its output. A program that reads its
   input at import time is a script even when it defines a function.

A called function's output is what it returns or, when it returns nothing, what it prints.
"""

from __future__ import annotations

import ast

__all__ = ["entry_point"]


def _definitions(body: list[ast.stmt]):
    """Top-level function definitions, also inside top-level ``if``/``try``/``with`` blocks."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            for name in ("body", "orelse", "finalbody"):
                yield from _definitions(getattr(node, name, []))
            for handler in getattr(node, "handlers", []):
                yield from _definitions(handler.body)


def _one_argument(node: ast.FunctionDef) -> bool:
    args = node.args
    positional = len(args.posonlyargs) + len(args.args)
    required = positional - len(args.defaults)
    kw_required = sum(default is None for default in args.kw_defaults)
    return kw_required == 0 and (1 <= positional and required <= 1 or positional == 0 and args.vararg is not None)


def _reads_input(node: ast.AST, skip: tuple = ()) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Call) and isinstance(current.func, ast.Name) and current.func.id == "input":
            return True
        if isinstance(current, ast.Attribute) and current.attr in ("stdin", "buffer") and \
                isinstance(current.value, ast.Name) and current.value.id == "sys":
            return True
        stack.extend(c for c in ast.iter_child_nodes(current) if not isinstance(c, skip))
    return False


def _main_guard(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "__name__" in ast.unparse(node.test) and "__main__" in ast.unparse(node.test)


def _reads_at_import(tree: ast.Module) -> bool:
    """Whether module-level code outside ``if __name__ == "__main__":`` and outside definitions reads input."""
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
    return any(_reads_input(node, definitions) for node in tree.body
               if not _main_guard(node) and not isinstance(node, definitions))


def _users(functions: list[ast.FunctionDef]) -> dict[str, set[str]]:
    """For each function name, the other top-level functions that use it."""
    names = {f.name for f in functions}
    used: dict[str, set[str]] = {name: set() for name in names}
    for function in functions:
        for node in ast.walk(function):
            if isinstance(node, ast.Name) and node.id in names and node.id != function.name:
                used[node.id].add(function.name)
    return used


def _rank(function: ast.FunctionDef) -> int:
    """2 when it returns a value, 1 when it prints, else 0."""
    nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    stack, prints = list(function.body), False
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return) and node.value is not None and \
                not (isinstance(node.value, ast.Constant) and node.value.value is None):
            return 2
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            prints = True
        stack.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, nested))
    return int(prints)


def entry_point(program: str | ast.Module, preferred: str = "f", source: str | None = None) -> tuple[str | None, str]:
    """``(function name, "call")`` or ``(None, "script")`` (see the module docstring); ``source``, the
    text of a parsed ``program``, lets a program that never names its input skip a walk. A source
    that does not parse is ``(preferred, "call")``: running it reports its syntax error."""
    if isinstance(program, str):
        source = program
        try:
            program = ast.parse(program)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return preferred, "call"
    functions = list(_definitions(program.body))
    reads = source is None or "input" in source or "stdin" in source
    script = reads and _reads_at_import(program)
    if any(f.name == preferred for f in functions):
        return (None, "script") if script else (preferred, "call")
    candidates = [f for f in functions if _one_argument(f)]
    users = _users(functions)
    roots = [f for f in candidates if not users[f.name]] or candidates
    if roots and not script:
        best = max(_rank(f) for f in roots)
        return [f for f in roots if _rank(f) == best][-1].name, "call"
    return None, "script"
