"""Python-only checks of a refactor answer, on the whole file before and after the change.

Python's indentation is its block structure, so a refactor answer can compile and still have
moved code: a method answered at column 0 turns the methods after it into nested functions.
These checks use the standard library's own parsers (``ast``, ``symtable``) on files that
``compile()`` accepted; each says why the answer is wrong, or nothing (also when it cannot
judge: a file that does not compile, a star import).
"""

from __future__ import annotations

import ast
import builtins
import symtable
from collections.abc import Iterator
from typing import Final

from qodeassist_lsp.context.parse_check import python_compile_error

__all__ = ["dangling", "placement", "program"]

_DEFINITIONS: Final = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _statements(text: str, start: int, end: int) -> list[ast.stmt]:
    """Return the statements starting on the lines of ``text[start:end]`` (none: no parse)."""
    if end <= start or python_compile_error(text) is not None:
        return []
    first = text.count("\n", 0, start) + 1
    last = text.count("\n", 0, end - 1) + 1
    return [
        node
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.stmt) and first <= node.lineno <= last
    ]


def placement(text: str, start: int, end: int, spliced: str, new_end: int) -> str | None:
    """Say why the answer's code sits left of the selection's block (a dedented method)."""
    before = min((node.col_offset for node in _statements(text, start, end)), default=0)
    if not before:
        return None  # nothing indented was selected (or the file did not compile)
    answered = _statements(spliced, start, new_end)
    after = min((node.col_offset for node in answered), default=before)
    if after < before:
        return (
            f"the selected code is indented {before} column(s) inside its block and the answer "
            f"has code at column {after}: it would move out of the class or function"
        )
    return None


def _runs_on_import(node: ast.stmt) -> bool:
    """Whether ``node`` is a module-level expression other than a string: ``print(…)``."""
    return (
        isinstance(node, ast.Expr)
        and node.col_offset == 0
        and not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str))
    )


def program(text: str, start: int, end: int, spliced: str, new_end: int) -> str | None:
    """Say why an answer to a selection of definitions adds code that runs on import."""
    top = [node for node in _statements(text, start, end) if node.col_offset == 0]
    if not any(isinstance(node, _DEFINITIONS) for node in top):
        return None
    if any(_runs_on_import(node) for node in top):
        return None  # the selection ran code at module level itself
    added = [node for node in _statements(spliced, start, new_end) if _runs_on_import(node)]
    if not added:
        return None
    source = ast.get_source_segment(spliced, added[0]) or "…"
    return (
        "the selection defines code and the answer also runs code at module level "
        f"(`{source.splitlines()[0][:60]}`): an example or a new program, not a rewrite"
    )


def _scopes(table: symtable.SymbolTable) -> Iterator[symtable.SymbolTable]:
    yield table
    for child in table.get_children():
        yield from _scopes(child)


def _names_of(text: str) -> tuple[set[str], set[str]] | None:
    """Return the names ``text`` binds anywhere and the global names it uses but never binds."""
    if "import *" in text:
        return None  # the names a star import binds are unknown
    try:
        top = symtable.symtable(text, "<file>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    module = {
        symbol.get_name()
        for symbol in top.get_symbols()
        if symbol.is_assigned() or symbol.is_imported() or symbol.is_namespace()
    }
    bound: set[str] = set()
    unbound: set[str] = set()
    for scope in _scopes(top):
        for symbol in scope.get_symbols():
            name = symbol.get_name()
            if symbol.is_assigned() or symbol.is_parameter() or symbol.is_imported():
                bound.add(name)
            global_use = scope is top or (symbol.is_global() and not symbol.is_declared_global())
            if (
                symbol.is_referenced()
                and global_use
                and name not in module
                and not hasattr(builtins, name)
            ):
                unbound.add(name)
    return bound, unbound


def dangling(text: str, spliced: str) -> list[str]:
    """Return the names ``spliced`` uses unbound that ``text`` bound somewhere (sorted)."""
    before, after = _names_of(text), _names_of(spliced)
    if before is None or after is None:
        return []
    return sorted((after[1] - before[1]) & before[0])
