"""Σn_z, Σm_z and L(P⁺) of a Python program, by static analysis with :mod:`ast` (seed 003, App. A).

A program P is read as a hypothetical mapping table P⁺; ``L(P⁺) = Σn_z + Σm_z``. The rules
(spec programs.md §B.2 and decision 2), all applied to the syntax tree, so comments never count:

* **Input value.** A string constant made only of the letters A-H; each of its characters is
  one value of one input component (A/B: component 0, C/D: 1, E/F: 2, G/H: 3), so ``"ACEG"``
  holds 4 values.
* **Output value.** Each ``.`` or ``*`` inside a string constant (``".*.*\\n"`` holds 4).
  Bare string statements (docstrings) write nothing and are skipped.
* **Combinations** (Σn_z): sets of input values that together determine output, of three kinds:

  1. the key of each entry of a dict display (an explicit mapping table);
  2. the values on one statement (a "row") that writes output values;
  3. the values on the root-to-leaf path of nested ``if``/``elif``/``else`` (and ``match``)
     statements, joined to the values of the statement that writes output under them.

  An ``elif`` starts a new branch of its chain (its path holds its own test, not the earlier
  ones); ``else`` (and a wildcard ``case``) holds one *hypothetical* value per component tested
  anywhere in the chain, ``(component, frozenset of the values tested)``, so two chains that test
  the same values share their ``else`` combination. A conditional expression ``a if c else b``
  is an ``if``/``else`` inside its statement.
* **Variables** carry the input values of every right-hand side assigned to them (flow- and
  scope-insensitive, to a fixed point); a use of a variable contributes its values. Values
  inside dict displays are counted by rule 1 and do not flow into variables.
* Combinations are deduplicated as sets; Σn_z is the total size of the distinct ones.
* **Σm_z** is the number of output values written, per occurrence (no dedup). In a dict display
  every *atomic unit* of an entry's value counts one: each non-blank character of a string, each
  number or boolean, a coordinate (a tuple or list of two integers) as one.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

__all__ = ["MAX_SOURCE", "Analysis", "Combination", "Output", "analyze", "value_text"]

#: Longest program analysed (characters); longer ones are refused as a syntax error would be.
MAX_SOURCE = 1_000_000
_LETTERS = "ABCDEFGH"

# A value token: (component, letter) for a real input value; (component, frozenset) for the
# hypothetical value of an ``else``.
Token = tuple


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
    """What the static analysis found in a program (``error`` is set when it cannot be parsed)."""

    combinations: tuple[Combination, ...] = ()
    outputs: tuple[Output, ...] = ()
    error: str | None = None

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


def value_text(token: Token) -> str:
    """A value as ``explain`` prints it: ``A``, or ``else@2{C,D}`` (position 2, values C and D tested)."""
    component, value = token
    return value if isinstance(value, str) else f"else@{component + 1}{{{','.join(sorted(value))}}}"


_NONE: frozenset = frozenset()
# Leaves that hold no value and that every walk would otherwise visit (Load(), Add(), Eq(), ...).
_SILENT = (ast.expr_context, ast.operator, ast.cmpop, ast.boolop, ast.unaryop)


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


def _walk(node: ast.AST, stop: tuple = ()):
    """Every node under ``node`` (itself included), not entering the types in ``stop`` below it."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(c for c in _children(current) if not isinstance(c, stop))


def _letters(node: ast.AST) -> frozenset:
    if type(node) is ast.Constant and type(node.value) is str and node.value and \
            all(c in _LETTERS for c in node.value):
        return frozenset(((ord(c) - 65) // 2, c) for c in node.value)
    return _NONE


def _output_chars(node: ast.AST) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.count(".") + node.value.count("*")
    return 0


def _is_int(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int or \
        isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and _is_int(node.operand)


# ---------------------------------------------------------------- variables
def _assignments(tree: ast.AST):
    """``(target names, value)`` of every binding in the program."""
    for node in _walk(tree):
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


def _reads(node: ast.AST) -> tuple[set, set]:
    """Input values written in an expression and the names it reads, outside dict displays."""
    letters: set = set()
    names: set = set()
    if isinstance(node, ast.Dict):
        return letters, names
    for current in _walk(node, stop=(ast.Dict,)):
        letters |= _letters(current)
        if type(current) is ast.Name:
            names.add(current.id)
    return letters, names


def _variables(tree: ast.AST) -> dict[str, set]:
    """Every variable's input values, to a fixed point (a worklist: a variable's set grows at most
    eight times, once per letter, so this is linear in the program)."""
    bindings = [(targets, *_reads(value)) for targets, value in _assignments(tree)]
    variables: dict[str, set] = {}
    readers: dict[str, list[int]] = {}
    for k, (_, _, names) in enumerate(bindings):
        for name in names:
            readers.setdefault(name, []).append(k)
    pending = list(range(len(bindings)))
    while pending:
        targets, letters, names = bindings[pending.pop()]
        values = letters.union(*(variables.get(name, ()) for name in names))
        for target in targets:
            known = variables.setdefault(target, set())
            if not values <= known:
                known |= values
                pending.extend(readers.get(target, ()))
    return variables


# ---------------------------------------------------------------- the walk
@dataclass
class _Walker:
    variables: dict[str, set]
    lines: list[bytes] = field(default_factory=list)
    combinations: list[tuple[int, frozenset]] = field(default_factory=list)
    outputs: list[Output] = field(default_factory=list)

    def text(self, node: ast.AST) -> str:
        """The source of ``node`` on one line, shortened to 60 characters."""
        first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        parts = self.lines[first: last + 1]
        if not parts:
            return ""
        if len(parts) == 1:
            parts = [parts[0][node.col_offset: node.end_col_offset]]
        else:
            parts = [parts[0][node.col_offset:], *parts[1:-1], parts[-1][: node.end_col_offset]]
        segment = " ".join(b" ".join(parts).decode("utf-8", "replace").split())
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
            values = {v for n in _walk(case.pattern) for v in _letters(n)}
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
            if isinstance(value, str):
                components.setdefault(component, set()).add(value)
        return frozenset((c, frozenset(v)) for c, v in components.items())

    # -- expressions
    def values(self, node: ast.AST) -> set:
        """Input values of an expression, variables included (dict displays and conditional arms too)."""
        found: set = set()
        for current in _walk(node):
            found |= _letters(current)
            if isinstance(current, ast.Name) and isinstance(current.ctx, ast.Load):
                found |= self.variables.get(current.id, set())
        return found

    def line(self, node: ast.AST, guard: frozenset) -> None:
        """A statement (or header expression) as one row: its own values and outputs, then the dict
        displays and conditional expressions inside it, each with the row's values on its path."""
        line, statement = getattr(node, "lineno", 0), node
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            if node.value is None:
                return
            node = node.value  # the assignment target never counts: its values come from this very row
        values, count, nested = self.scan(node)
        if count:
            self.combine(line, guard | values)
            self.output(line, statement, count)
        for inner in nested:
            if isinstance(inner, ast.Dict):
                self.mapping(inner, guard | values)
            else:
                self.conditional(inner, guard | values)

    def scan(self, node: ast.AST) -> tuple[set, int, list[ast.AST]]:
        """Values and output count of ``node`` outside its dict displays and conditional expressions,
        and those (outermost) displays and expressions."""
        if isinstance(node, (ast.Dict, ast.IfExp)):
            return set(), 0, [node]
        values: set = set()
        count = 0
        nested: list[ast.AST] = []
        stack = [node]
        while stack:
            current = stack.pop()
            if current is not node and isinstance(current, (ast.Dict, ast.IfExp)):
                nested.append(current)
                continue
            if type(current) is ast.Constant:
                values |= _letters(current)
                count += _output_chars(current)
            elif type(current) is ast.Name and type(current.ctx) is ast.Load:
                values |= self.variables.get(current.id, _NONE)
            stack.extend(_children(current))
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
            path = guard | (self.values(key) if key is not None else set())
            if isinstance(value, ast.Dict):
                self.mapping(value, path)
                continue
            line = getattr(key, "lineno", None) or value.lineno
            units = self.units(value)
            if units is None:  # not a display of constants: read it as a row of its own
                inner_values, count, nested = self.scan(value)
                units = count
                path = path | inner_values
                for inner in nested:
                    (self.mapping if isinstance(inner, ast.Dict) else self.conditional)(inner, path)
            self.combine(line, path)
            if units:
                self.outputs.append(Output(line, self.text(value) if key is None else
                                           f"{self.text(key)}: {self.text(value)}", units))

    def units(self, node: ast.AST) -> int | None:
        """Atomic units of a dict value made of constants (None when it is any other expression)."""
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                return len("".join(node.value.split()))
            return 0 if node.value is None else 1
        if _is_int(node):
            return 1
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            if len(node.elts) == 2 and all(_is_int(e) for e in node.elts):
                return 1  # a coordinate names one grid point
            parts = [self.units(e) for e in node.elts]
            return None if any(p is None for p in parts) else sum(parts)
        return None


def analyze(source: str) -> Analysis:
    """The combinations, output values and L(P⁺) of a program's source (see the module docstring)."""
    if not isinstance(source, str):
        return Analysis(error="no program")
    if len(source) > MAX_SOURCE:
        return Analysis(error=f"program longer than {MAX_SOURCE:,} characters")
    try:
        source = source.replace("\r\n", "\n").replace("\r", "\n")
        tree = ast.parse(source)
        walker = _Walker(_variables(tree), source.encode("utf-8").split(b"\n"))
        walker.block(tree.body, frozenset())
    except SyntaxError as error:
        return Analysis(error=f"syntax error, line {error.lineno}: {error.msg}")
    except (ValueError, RecursionError, MemoryError) as error:
        return Analysis(error=f"cannot parse the program ({type(error).__name__})")
    seen: set = set()
    combinations = []
    for line, values in walker.combinations:
        combinations.append(Combination(line, values, values not in seen))
        seen.add(values)
    return Analysis(tuple(combinations), tuple(walker.outputs))
