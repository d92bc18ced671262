"""The input values each variable of a program carries (flow- and scope-insensitive), in linear time.

A binding ``x = <expression>`` gives ``x`` the input values written in the expression (outside its
dict displays) and those of every variable it reads; :func:`variables` computes the least fixed
point over the strongly connected parts of the graph "variable read -> variable bound", so a
program of n bindings reading m names costs O(n + m), whatever the order of its bindings.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from cogen.families.programs.values import letters

__all__ = ["variables"]


def _bound_names(target: ast.AST) -> list[str]:
    """Names a target binds (the base name of ``a[i]`` or ``a.b`` too)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _bound_names(e)]
    if isinstance(target, ast.Starred):
        return _bound_names(target.value)
    if isinstance(target, (ast.Subscript, ast.Attribute)):
        return _bound_names(target.value)
    return []


def _assignments(tree: ast.AST, walk: Callable) -> Iterator[tuple[list[str], ast.AST]]:
    """``(target names, value)`` of every binding in the program."""
    for node in walk(tree):
        if isinstance(node, ast.Assign):
            yield [n for t in node.targets for n in _bound_names(t)], node.value
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            yield _bound_names(node.target), node.value
        elif isinstance(node, ast.NamedExpr):
            yield _bound_names(node.target), node.value
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            yield _bound_names(node.target), node.iter
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            yield _bound_names(node.optional_vars), node.context_expr


def _reads(node: ast.AST, walk: Callable) -> tuple[frozenset, set]:
    """Input values written in an expression and the names it reads, outside dict displays."""
    if isinstance(node, ast.Dict):
        return frozenset(), set()
    found: set = set()
    names: set = set()
    for current in walk(node, (ast.Dict,)):
        found |= letters(current)
        if type(current) is ast.Name:
            names.add(current.id)
    return frozenset(found), names


def _components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components, each after every component it reaches (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph[nxt])))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    found.append(component)
    return found


def variables(tree: ast.AST, walk: Callable) -> dict[str, frozenset]:
    """Every variable's input values (``walk(node, stop)`` visits the nodes of an expression)."""
    own: dict[str, set] = {}
    reads: dict[str, set[str]] = {}  # variable -> the variables its right-hand sides read
    for targets, value in _assignments(tree, walk):
        found, names = _reads(value, walk)
        for target in targets:
            own.setdefault(target, set()).update(found)
            reads.setdefault(target, set()).update(names)
    graph = {name: {n for n in reads.get(name, ()) if n in own} for name in own}
    result: dict[str, frozenset] = {}
    for component in _components(graph):  # a component comes after every component it reads
        members = set(component)
        values = set().union(*(own[m] for m in component))
        for member in component:
            values.update(*(result[n] for n in graph[member] if n not in members))
        for member in component:
            result[member] = frozenset(values)
    return result
