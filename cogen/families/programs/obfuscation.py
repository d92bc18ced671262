"""Programs whose mapping table no reading of their text can see: code built, or data decoded, at run time.

Seed 003 reads L(P⁺) off the program text ("by parsing P for locations involving values of the input
and output components", App. A). A program that runs code it builds from a string (the second red
team's A02: an enumeration ``exec``'d from a hex string scored L(P⁺) = 0 and C = 100) or decodes its
data at run time keeps its table where no parser finds it, so its P⁺ is unknown: such a program is
``obfuscated`` (:func:`obfuscation`), its E is counted, its C(P) withheld (docs/evaluation.md,
"Obfuscation"). The constructs, anywhere in the program:

* **code from text or namespaces**: calls of ``exec``, ``eval``, ``compile``, ``__import__``,
  ``globals``, ``locals``, ``vars``, ``breakpoint``; ``getattr``, ``setattr``, ``delattr`` or
  ``hasattr`` with a name that is not a string constant; the names ``__builtins__``, ``__doc__``,
  ``__annotations__``, ``__loader__``, ``__spec__``;
* **attributes that reach code, frames or hidden text**: ``__code__``, ``__globals__``, ``__dict__``,
  ``__builtins__``, ``__subclasses__``, ``__getattribute__``, ``__doc__``, ``__annotations__``,
  ``__import__``, ``_getframe``, ``f_back``, ``f_globals``, ``f_locals``, ``co_code``,
  ``co_consts``, ``gi_frame``, ``tb_frame``, ``fromhex``, ``from_bytes``, ``eval`` and ``exec``
  as attributes, and ``sys.modules``; a string that names one of these dunder attributes (reached
  through ``getattr`` with a constant, ``attrgetter`` or a format string);
* **decoders**: ``int(text, base)`` with a base other than 2 or 10; ``.decode(...)`` or
  ``.encode(...)`` with a codec that is not a text encoding (``hex``, ``base64``, ``rot13``,
  ``zlib``, ...);
* **modules that decode data or code**: :data:`MODULES` (``marshal``, ``pickle``, ``base64``,
  ``binascii``, ``zlib``, ``codecs``, ``importlib``, ``types``, ``ctypes``, ``inspect``, ...).

What stays visible is still counted: a literal that hides data counts its bits
(:func:`cogen.families.programs.values.literal_bits`, :func:`~cogen.families.programs.values.hidden_bits`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

__all__ = ["MODULES", "obfuscation"]

#: Modules a program imports only to decode data or build code at run time.
MODULES = frozenset({
    "marshal", "pickle", "_pickle", "pickletools", "copyreg", "shelve", "dill", "cloudpickle", "base64", "binascii",
    "zlib", "gzip", "bz2", "lzma", "zipfile", "tarfile", "zipimport", "codecs", "encodings", "quopri", "uu",
    "importlib", "imp", "pkgutil", "runpy", "types", "code", "codeop", "ctypes", "_ctypes", "inspect", "gc",
    "builtins", "__builtin__", "dis", "opcode", "ast", "symtable",
})
_CALLS = frozenset({"exec", "eval", "compile", "__import__", "globals", "locals", "vars", "breakpoint"})
_NAMES = frozenset({"__builtins__", "__doc__", "__annotations__", "__loader__", "__spec__"})
_NAMED = frozenset({"getattr", "setattr", "delattr", "hasattr"})
_ATTRIBUTES = frozenset({
    "__code__", "__globals__", "__dict__", "__builtins__", "__subclasses__", "__getattribute__", "__doc__",
    "__annotations__", "__import__", "_getframe", "f_back", "f_globals", "f_locals", "co_code", "co_consts",
    "gi_frame", "tb_frame", "fromhex", "from_bytes", "eval", "exec",
})
_DUNDERS = tuple(sorted(name for name in _ATTRIBUTES | _NAMES if name.startswith("__")))
_TEXT_CODECS = frozenset({"utf-8", "utf8", "ascii", "latin-1", "latin1", "iso-8859-1", "utf-16", "utf-32", "cp1252"})


def _constant_text(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _call(node: ast.Call) -> str | None:
    function = node.func
    if isinstance(function, ast.Name):
        if function.id in _CALLS:
            return f"calls {function.id}()"
        if function.id in _NAMED and (len(node.args) < 2 or _constant_text(node.args[1]) is None):
            return f"calls {function.id}() with a computed name"
        if function.id == "int" and (len(node.args) > 1 or node.keywords):
            base = node.args[1] if len(node.args) > 1 else node.keywords[0].value
            if not (isinstance(base, ast.Constant) and base.value in (2, 10)):
                return "decodes a number from text (int with a base)"
    if isinstance(function, ast.Attribute) and function.attr in ("decode", "encode") and node.args:
        codec = _constant_text(node.args[0])
        if codec is None or codec.lower().replace("_", "-") not in _TEXT_CODECS:
            return f"calls .{function.attr}() with the codec {codec!r}" if codec else \
                f"calls .{function.attr}() with a computed codec"
    return None


def _imported(node: ast.AST) -> str | None:
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
        names = [node.module or ""]
    else:
        return None
    found = [name for name in names if name.split(".")[0] in MODULES]
    return f"imports {found[0]}" if found else None


def _construct(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        return _call(node)
    if isinstance(node, ast.Name) and node.id in _NAMES:
        return f"uses {node.id}"
    if isinstance(node, ast.Attribute):
        if node.attr in _ATTRIBUTES or node.attr == "modules" and isinstance(node.value, ast.Name) and \
                node.value.id == "sys":
            return f"uses .{node.attr}"
        return None
    text = _constant_text(node)
    if text is not None and "__" in text:
        named = next((name for name in _DUNDERS if name in text[:100_000]), None)
        return None if named is None else f"names {named} in a string"
    return _imported(node)


def obfuscation(tree: ast.AST, walk: Callable) -> str | None:
    """``line N: <what>`` for the first construct (in source order) that builds code or decodes data at
    run time (see the module docstring), or None; ``walk(node)`` visits the nodes (the analysis's
    bounded walk)."""
    found = [(getattr(node, "lineno", 0), getattr(node, "col_offset", 0), what) for node in walk(tree)
             if (what := _construct(node)) is not None]
    if not found:
        return None
    line, _, what = min(found)
    return f"line {line}: {what}"
