"""Σn_z, Σm_z and L(P⁺) of a Python program, by static analysis with :mod:`ast` (seed 003, App. A).

A program P is read as a hypothetical mapping table P⁺; ``L(P⁺) = Σn_z + Σm_z``. The rules
(spec programs.md §B.2 and decision 2), all applied to the syntax tree, so comments never count:

* **Input and output values**: as :mod:`cogen.families.programs.values` defines them (a word of the letters
  A-H; each ``.``/``*``, a 0/1 grid string, the cells of a grid display; bits of an encoded dict key).
  Bare string statements (docstrings) write nothing and are skipped.
* **Combinations** (Σn_z): sets of input values that together determine output, of three kinds:

  1. the key of each entry of a dict display (an explicit mapping table);
  2. the values on one *row* that writes output values: a statement, or, inside it, each element
     of a list, tuple or set display of which two or more elements write output values (a table
     of (input, grid) pairs), and each A-H word of a string that also writes output values (pairs
     pasted as text);
  3. the values on the root-to-leaf path of nested ``if``/``elif``/``else`` (and ``match``)
     statements, joined to the values of the row that writes output under them.

  An ``elif`` starts a new branch of its chain (its path holds its own test, not the earlier
  ones); ``else`` (and a wildcard ``case``) holds one *hypothetical* value per component tested
  anywhere in the chain, ``(component, frozenset of the values tested)``, so two chains that test
  the same values share their ``else`` combination. A conditional expression ``a if c else b``
  is an ``if``/``else`` inside its row.
* **Variables** carry the input values of every right-hand side assigned to them (flow- and
  scope-insensitive, to a fixed point over the strongly connected parts of the assignment graph);
  a use of a variable contributes its values. Values inside dict displays are counted by rule 1
  and do not flow into variables.
* Combinations are deduplicated as sets; Σn_z is the total size of the distinct ones.
* **Σm_z** is the number of output values written, per occurrence (no dedup). In a dict display
  every *atomic unit* of an entry's value counts one: each non-blank character of a string, each
  number or boolean, a coordinate (a tuple or list of two integers) as one.

A program that builds code or decodes data at run time (:mod:`cogen.families.programs.obfuscation`)
is analysed as well, and marked ``obfuscated`` (its table is not in its text: C(P) is withheld).

Untrusted programs get bounded work: longer than :data:`MAX_SOURCE` characters is ``too long``, and
an analysis that visits more than :data:`MAX_STEPS` nodes stops as ``too complex`` (a count, not a
clock, so the result never depends on the machine). :func:`analyze` also names the program's entry
point (:func:`cogen.sandbox.entry.entry_point`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from cogen.families.programs.obfuscation import obfuscation
from cogen.families.programs.values import (
    grid_cells,
    hidden_bits,
    is_int,
    key_units,
    letters,
    literal_bits,
    output_count,
    token_text,
    words,
)
from cogen.families.programs.variables import variables as _variables

__all__ = ["MAX_SOURCE", "MAX_STEPS", "Analysis", "Combination", "Output", "analyze", "value_text"]

#: Longest program analysed (characters): as :data:`cogen.families.programs.code.MAX_PROGRAM`.
MAX_SOURCE = 100_000
#: Most syntax-tree nodes the analysis may visit (honest programs visit a few thousand).
MAX_STEPS = 2_000_000

value_text = token_text


@dataclass(frozen=True)
class Combination:
    """One combination of input values found at ``line``; ``counted`` is False for a repeat."""

    line: int
    values: frozenset
    counted: bool

    @property
    def size(self) -> int:
        """n_z of this combination (0 when it repeats an earlier one)."""
        return len(self.values) if self.counted else 0


@dataclass(frozen=True)
class Output:
    """Output values written at ``line``: ``count`` of them, in the source text ``text``."""

    line: int
    text: str
    count: int


@dataclass(frozen=True)
class Analysis:
    """What the static analysis found in a program (``error`` is set when it was not analysed: a
    syntax error, ``too long``, ``too complex``). ``entry`` and ``mode`` say what the sandbox runs:
    the function ``entry`` (``call``) or the module, once per input (``script``). ``obfuscated`` says
    where the program builds code or decodes data at run time (``line 1: calls exec()``), else None."""

    combinations: tuple[Combination, ...] = ()
    outputs: tuple[Output, ...] = ()
    error: str | None = None
    entry: str | None = None
    mode: str = "call"
    obfuscated: str | None = None

    @property
    def sum_n(self) -> int:
        """Σn_z: the total size of the distinct combinations."""
        return sum(c.size for c in self.combinations)

    @property
    def sum_m(self) -> int:
        """Σm_z: the output values written, per occurrence."""
        return sum(o.count for o in self.outputs)

    @property
    def length(self) -> int:
        """L(P⁺) = Σn_z + Σm_z."""
        return self.sum_n + self.sum_m


class TooComplex(Exception):
    """The analysis visited more than :data:`MAX_STEPS` nodes."""


_NONE: frozenset = frozenset()
# Leaves that hold no value and that every walk would otherwise visit (Load(), Add(), Eq(), ...).
_SILENT = (ast.expr_context, ast.operator, ast.cmpop, ast.boolop, ast.unaryop)
_DISPLAYS = (ast.List, ast.Tuple, ast.Set)


def _children(node: ast.AST) -> list[ast.AST]:
    """The child nodes that can hold values (operators and contexts left out)."""
    found = []
    for name in node._fields:
        value = getattr(node, name, None)
        if type(value) is list:
            found.extend(v for v in value if isinstance(v, ast.AST) and not isinstance(v, _SILENT))
        elif isinstance(value, ast.AST) and not isinstance(value, _SILENT):
            found.append(value)
    return found


class _Steps:
    """A count of visited nodes shared by every walk of one analysis (and each node's children, found once)."""

    def __init__(self, limit: int = MAX_STEPS):
        self.left = limit
        self.known: dict[ast.AST, list[ast.AST]] = {}

    def children(self, node: ast.AST) -> list[ast.AST]:
        found = self.known.get(node)
        if found is None:
            found = self.known[node] = _children(node)
        return found

    def spend(self, steps: int = 1) -> None:
        self.left -= steps
        if self.left < 0:
            raise TooComplex

    def walk(self, node: ast.AST, stop: tuple = ()):
        """Every node under ``node`` (itself included), not entering the types in ``stop`` below it."""
        stack = [node]
        while stack:
            current = stack.pop()
            self.spend()
            yield current
            children = self.children(current)
            stack.extend(c for c in children if not isinstance(c, stop)) if stop else stack.extend(children)


def _writes(node: ast.AST, steps: _Steps) -> bool:
    """Whether an expression writes output values (outside its dict displays)."""
    return any(output_count(n) or grid_cells(n) for n in steps.walk(node, stop=(ast.Dict,)))


def _table(node: ast.AST, steps: _Steps) -> bool:
    """A list, tuple or set display of which two or more elements write output values: a table of rows."""
    if not isinstance(node, _DISPLAYS) or len(node.elts) < 2 or grid_cells(node) is not None:
        return False
    writing = 0
    for element in node.elts:
        writing += _writes(element, steps)
        if writing >= 2:
            return True
    return False


# ---------------------------------------------------------------- the walk
@dataclass
class _Walker:
    variables: dict[str, frozenset]
    steps: _Steps
    lines: list[bytes] = field(default_factory=list)
    combinations: list[tuple[int, frozenset]] = field(default_factory=list)
    outputs: list[Output] = field(default_factory=list)

    def text(self, node: ast.AST) -> str:
        """The source of ``node`` on one line, shortened to 60 characters."""
        first, last = node.lineno - 1, min((node.end_lineno or node.lineno) - 1, node.lineno + 20)
        parts = self.lines[first: last + 1]
        if not parts:
            return ""
        if len(parts) == 1:
            parts = [parts[0][node.col_offset: node.end_col_offset]]
        else:
            parts = [parts[0][node.col_offset:], *parts[1:]]
        segment = " ".join(b" ".join(p[:200] for p in parts).decode("utf-8", "replace").split())
        return segment if len(segment) <= 60 else segment[:57] + "..."

    def combine(self, line: int, values: set) -> None:
        if values:
            self.combinations.append((line, frozenset(values)))

    def output(self, line: int, node: ast.AST, count: int) -> None:
        if count:
            self.outputs.append(Output(line, self.text(node), count))

    # -- statements
    def block(self, statements: list[ast.stmt], guard: frozenset) -> None:
        for statement in statements:
            self.statement(statement, guard)

    def statement(self, node: ast.stmt, guard: frozenset) -> None:
        if isinstance(node, ast.If):
            self.if_chain(node, guard)
        elif isinstance(node, ast.Match):
            self.match(node, guard)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a docstring or bare string writes nothing
        elif isinstance(node, ast.While):
            self.line(node.test, guard)
            self.block(node.body, guard | self.values(node.test))
            self.block(node.orelse, guard)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.AsyncFor,
                               ast.With, ast.AsyncWith, ast.Try, getattr(ast, "TryStar", ast.Try))):
            for header in self.headers(node):
                self.line(header, guard)
            for name in ("body", "orelse", "finalbody"):
                self.block(getattr(node, name, []), guard)
            for handler in getattr(node, "handlers", []):
                self.block(handler.body, guard)
        else:
            self.line(node, guard)

    @staticmethod
    def headers(node: ast.stmt) -> list[ast.AST]:
        """The expressions in a compound statement's header (iterables, context managers, decorators,
        defaults, bases)."""
        if isinstance(node, (ast.For, ast.AsyncFor)):
            return [node.iter]
        if isinstance(node, (ast.With, ast.AsyncWith)):
            return [item.context_expr for item in node.items]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defaults = [d for d in [*node.args.defaults, *node.args.kw_defaults] if d is not None]
            return [*node.decorator_list, *defaults]
        if isinstance(node, ast.ClassDef):
            return [*node.decorator_list, *node.bases]
        return []

    def is_elif(self, node: ast.If) -> bool:
        line = self.lines[node.lineno - 1] if node.lineno - 1 < len(self.lines) else b""
        return line[node.col_offset: node.col_offset + 4] == b"elif"

    def if_chain(self, node: ast.If, guard: frozenset) -> None:
        branches, tested = [], set()
        current: ast.If | None = node
        while current is not None:
            values = self.values(current.test)
            tested |= values
            self.line(current.test, guard)
            branches.append((current.body, guard | values))
            orelse = current.orelse
            if len(orelse) == 1 and isinstance(orelse[0], ast.If) and self.is_elif(orelse[0]):
                current = orelse[0]
            else:
                current = None
                if orelse:
                    branches.append((orelse, guard | self.hypothetical(tested)))
        for body, path in branches:
            self.block(body, path)

    def match(self, node: ast.Match, guard: frozenset) -> None:
        self.line(node.subject, guard)
        tested: set = set()
        cases = []
        for case in node.cases:
            values = {v for n in self.steps.walk(case.pattern) for v in letters(n)}
            if case.guard is not None:
                values |= self.values(case.guard)
            tested |= values
            wildcard = isinstance(case.pattern, ast.MatchAs) and case.pattern.pattern is None
            cases.append((case.body, None if wildcard else values))
        for body, values in cases:
            self.block(body, guard | (self.hypothetical(tested) if values is None else values))

    @staticmethod
    def hypothetical(tested: set) -> frozenset:
        components: dict[int, set] = {}
        for component, value in tested:
            if isinstance(value, str) and not value.startswith("="):
                components.setdefault(component, set()).add(value)
        return frozenset((c, frozenset(v)) for c, v in components.items())

    # -- expressions
    def values(self, node: ast.AST) -> set:
        """Input values of an expression, variables included (dict displays and conditional arms too)."""
        found: set = set()
        for current in self.steps.walk(node):
            found |= letters(current)
            if isinstance(current, ast.Name) and isinstance(current.ctx, ast.Load):
                found |= self.variables.get(current.id, _NONE)
        return found

    def line(self, node: ast.AST, guard: frozenset) -> None:
        """A statement (or header expression) as one row: its own values and outputs, then the dict
        displays, tables and conditional expressions inside it, each with the row's values on its path."""
        line, statement = getattr(node, "lineno", 0), node
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            if node.value is None:
                return
            node = node.value  # the assignment target never counts: its values come from this very row
        self.row(node, guard, line, statement)

    def row(self, node: ast.AST, guard: frozenset, line: int, shown: ast.AST) -> None:
        values, count, nested = self.scan(node)
        if count:
            self.combine(line, guard | values)
            self.output(line, shown, count)
        for inner in nested:
            self.inner(inner, guard | values, line)

    def inner(self, node: ast.AST, path: frozenset, line: int) -> None:
        """A dict display, conditional expression, text table or table display inside a row."""
        if isinstance(node, ast.Dict):
            self.mapping(node, path)
        elif isinstance(node, ast.IfExp):
            self.conditional(node, path)
        elif isinstance(node, ast.Constant):
            for word in words(node):  # pairs pasted as text: each word is an entry of the table
                self.combine(node.lineno, path | word)
        else:
            for element in node.elts:  # a table display: each element is a row
                self.row(element, path, getattr(element, "lineno", line), element)

    def scan(self, node: ast.AST) -> tuple[set, int, list[ast.AST]]:
        """Values and output count of ``node`` outside its dict displays, tables, text tables and
        conditional expressions, and those (outermost) nodes."""
        if isinstance(node, (ast.Dict, ast.IfExp)) or _table(node, self.steps):
            return set(), 0, [node]
        values: set = set()
        count = 0
        nested: list[ast.AST] = []
        stack = [node]
        while stack:
            current = stack.pop()
            self.steps.spend()
            if current is not node and (isinstance(current, (ast.Dict, ast.IfExp)) or _table(current, self.steps)):
                nested.append(current)
                continue
            cells = grid_cells(current)
            if cells is not None:
                count += cells
                continue
            if type(current) is ast.Constant:
                found, written = words(current), output_count(current)
                count += written
                if written and len(found) > 1:
                    nested.append(current)
                else:
                    values.update(*found)
            elif type(current) is ast.Name and type(current.ctx) is ast.Load:
                values |= self.variables.get(current.id, _NONE)
            stack.extend(self.steps.children(current))
        return values, count, sorted(nested, key=lambda n: (n.lineno, n.col_offset))

    def conditional(self, node: ast.IfExp, guard: frozenset) -> None:
        tested: set = set()
        current: ast.AST = node
        while isinstance(current, ast.IfExp):
            values = self.values(current.test)
            tested |= values
            self.line(current.test, guard)
            self.line(current.body, guard | values)
            current = current.orelse
        self.line(current, guard | self.hypothetical(tested))

    def mapping(self, node: ast.Dict, guard: frozenset) -> None:
        """A dict display: one combination per entry (its key's values on the path), and the atomic
        units of each value as output values."""
        for key, value in zip(node.keys, node.values, strict=True):
            keys = set() if key is None else (self.values(key) or set(key_units(key)))
            path = guard | keys
            if isinstance(value, ast.Dict):
                self.mapping(value, path)
                continue
            line = getattr(key, "lineno", None) or value.lineno
            units = self.units(value)
            hidden = 0 if key is None else self.hidden(key)  # data hidden in a key: output values too
            if hidden:
                self.outputs.append(Output(line, self.text(key), hidden))
            if units is None:  # not a display of constants: read it as a row of its own
                inner_values, units, nested = self.scan(value)
                path = path | inner_values
                for inner in nested:
                    self.inner(inner, path, line)
            self.combine(line, path)
            if units:
                self.outputs.append(Output(line, self.text(value) if key is None else
                                           f"{self.text(key)}: {self.text(value)}", units))

    def hidden(self, node: ast.AST) -> int:
        """Data hidden in the literals of an expression that is not read for output values (a dict key)."""
        return sum(literal_bits(n.value) + (hidden_bits(n.value) if type(n.value) is str else 0)
                   for n in self.steps.walk(node) if type(n) is ast.Constant)

    def units(self, node: ast.AST) -> int | None:
        """Atomic units of a dict value made of constants (None when it is any other expression); a
        number or bytes literal that holds data counts its bits (:func:`literal_bits`)."""
        self.steps.spend()
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                return len("".join(node.value.split()))
            return 0 if node.value is None else max(1, literal_bits(node.value))
        if is_int(node):
            return max(1, literal_bits(ast.literal_eval(node)))
        if isinstance(node, _DISPLAYS):
            if len(node.elts) == 2 and all(is_int(e) and not literal_bits(ast.literal_eval(e)) for e in node.elts):
                return 1  # a coordinate names one grid point
            parts = [self.units(e) for e in node.elts]
            return None if any(p is None for p in parts) else sum(parts)
        return None


def analyze(source: str, function: str = "f") -> Analysis:
    """The combinations, output values and L(P⁺) of a program's source (see the module docstring),
    and its entry point (``function`` is the one the prompt asks for)."""
    from cogen.sandbox.entry import entry_point

    if not isinstance(source, str):
        return Analysis(error="no program")
    if len(source) > MAX_SOURCE:
        return Analysis(error=f"too long: a program of {len(source):,} characters (at most {MAX_SOURCE:,})")
    try:
        source = source.replace("\r\n", "\n").replace("\r", "\n")
        tree = ast.parse(source)
        steps = _Steps()
        walker = _Walker(_variables(tree, steps.walk), steps, source.encode("utf-8").split(b"\n"))
        walker.block(tree.body, frozenset())
        hidden = obfuscation(tree, steps.walk)
        entry, mode = entry_point(tree, function, source)
    except SyntaxError as error:
        return Analysis(error=f"syntax error, line {error.lineno}: {error.msg}")
    except TooComplex:
        return Analysis(error=f"too complex: the analysis stopped after {MAX_STEPS:,} steps")
    except (ValueError, RecursionError, MemoryError) as error:
        return Analysis(error=f"cannot parse the program ({type(error).__name__})")
    seen: set = set()
    combinations = []
    for line, values in walker.combinations:
        combinations.append(Combination(line, values, values not in seen))
        seen.add(values)
    return Analysis(tuple(combinations), tuple(walker.outputs), entry=entry, mode=mode, obfuscated=hidden)
