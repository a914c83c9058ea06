"""Syntax checks with tree-sitter: does a text parse, which definitions does it hold.

The quick refactor refuses a model's answer that breaks code which parsed before; that needs a
real parser per language. Each grammar is its own PyPI wheel (``tree-sitter-python``,
``tree-sitter-cpp``, …) with the compiled parser inside, so nothing is fetched at run time
(``tree-sitter-language-pack`` downloads its grammars on first use and fails offline). The set is
deliberately modest; a language without an installed grammar gets ``None`` from ``parser_for``
and its callers skip the parse check. Parsers are built once per language and reused.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Final

__all__ = ["GRAMMARS", "Definition", "ParseSummary", "SyntaxChecker", "grammar_name"]

log = logging.getLogger("qodeassist.syntax")


@dataclass(frozen=True, slots=True)
class _Grammar:
    module: str
    function: str = "language"


GRAMMARS: Final[dict[str, _Grammar]] = {
    "python": _Grammar("tree_sitter_python"),
    "c": _Grammar("tree_sitter_c"),
    "cpp": _Grammar("tree_sitter_cpp"),
    "javascript": _Grammar("tree_sitter_javascript"),
    "typescript": _Grammar("tree_sitter_typescript", "language_typescript"),
    "tsx": _Grammar("tree_sitter_typescript", "language_tsx"),
    "rust": _Grammar("tree_sitter_rust"),
    "go": _Grammar("tree_sitter_go"),
    "java": _Grammar("tree_sitter_java"),
}
"""Grammar name → the wheel's module and its language function."""

_BY_LANGUAGE_ID: Final = {
    "python": "python",
    "c": "c",
    "cpp": "cpp",
    "cuda-cpp": "cpp",
    "objective-cpp": "cpp",
    "javascript": "javascript",
    "javascriptreact": "tsx",
    "typescript": "typescript",
    "typescriptreact": "tsx",
    "rust": "rust",
    "go": "go",
    "java": "java",
}
_BY_EXTENSION: Final = {
    ".py": "python",
    ".pyi": "python",
    ".c": "c",
    ".h": "cpp",  # a C header parses as C++ too; the reverse is not true
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "tsx",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".rs": "rust",
    ".go": "go",
    ".java": "java",
}
_DEFINITION_WORDS: Final = ("function", "method", "class", "struct", "impl", "interface", "enum")
_DEFINITION_SUFFIXES: Final = ("_definition", "_declaration", "_item", "_specifier")
_LOCAL_SCOPES: Final = ("function", "method")
"""Definitions inside a function or method are local: a refactor may inline or drop them."""
_PYTHON_SCOPES: Final = ("module", "class_definition")


def grammar_name(language_id: str, path: str) -> str | None:
    """Return the grammar for an LSP ``languageId`` or, failing that, the file's extension."""
    by_id = _BY_LANGUAGE_ID.get(language_id.lower())
    if by_id is not None:
        return by_id
    return _BY_EXTENSION.get(PurePath(path).suffix.lower()) if path else None


@dataclass(frozen=True, slots=True)
class ParseSummary:
    """What one parse found: syntax errors and the kinds of definitions in the text."""

    errors: int
    """``ERROR`` and ``MISSING`` nodes: 0 means the text parses cleanly."""
    definitions: int
    """Functions, methods, classes, structs … anywhere in the text."""


@dataclass(frozen=True, slots=True)
class Definition:
    """A named definition: ``Outer.inner`` qualified by the definitions around it."""

    name: str
    start: int
    """Byte offset (UTF-8) where the definition starts."""
    end: int
    local: bool
    """Inside a function or method (a local helper, not part of the file's interface)."""


class SyntaxChecker:
    """Parses texts with the installed tree-sitter grammars (one parser per language)."""

    def __init__(self, loader: Callable[[str], Any] | None = None) -> None:
        """Create the checker; ``loader`` imports a grammar module (tests replace it)."""
        self._load = loader or importlib.import_module
        self._parsers: dict[str, Any | None] = {}

    def parser_for(self, grammar: str) -> Any | None:
        """Return a tree-sitter parser for ``grammar``, or ``None`` when it is not installed."""
        if grammar in self._parsers:
            return self._parsers[grammar]
        parser = None
        spec = GRAMMARS.get(grammar)
        if spec is not None:
            try:
                tree_sitter = self._load("tree_sitter")
                module = self._load(spec.module)
                language = tree_sitter.Language(getattr(module, spec.function)())
                parser = tree_sitter.Parser(language)
            except (ImportError, AttributeError, ValueError, TypeError) as exc:
                log.info("no %s grammar (%s): the parse check is skipped", grammar, exc)
        self._parsers[grammar] = parser
        return parser

    def summarise(self, grammar: str, text: str) -> ParseSummary | None:
        """Parse ``text``; ``None`` when the grammar is not installed."""
        parser = self.parser_for(grammar)
        if parser is None:
            return None
        root = parser.parse(text.encode("utf-8", "surrogatepass")).root_node
        errors = 0
        definitions = 0
        for node in _walk(root):
            if node.is_error or node.is_missing:
                errors += 1
            elif node.is_named and _is_definition(node.type):
                definitions += 1
        return ParseSummary(errors, definitions)

    def definitions(self, grammar: str, text: str) -> list[Definition] | None:
        """Return the named definitions of ``text``; ``None`` when the grammar is not installed.

        Functions, methods, classes, structs …, and for Python also names assigned at module or
        class level (``TIMEOUT = 3``), each qualified by the definitions around it.
        """
        parser = self.parser_for(grammar)
        if parser is None:
            return None
        root = parser.parse(text.encode("utf-8", "surrogatepass")).root_node
        found: list[Definition] = []
        stack: list[tuple[Any, str, bool]] = [(root, "", False)]
        while stack:
            node, prefix, local = stack.pop()
            name = _definition_name(node, grammar)
            if name is not None:
                found.append(Definition(prefix + name, node.start_byte, node.end_byte, local))
                prefix = f"{prefix}{name}."
                local = local or any(word in node.type for word in _LOCAL_SCOPES)
            stack.extend((child, prefix, local) for child in reversed(node.named_children))
        return found


def _is_definition(kind: str) -> bool:
    return kind.endswith(_DEFINITION_SUFFIXES) and any(w in kind for w in _DEFINITION_WORDS)


def _text(node: Any) -> str:
    return bytes(node.text or b"").decode("utf-8", "replace")


def _definition_name(node: Any, grammar: str) -> str | None:
    """Return the name a definition node defines, or ``None`` (not one, or nameless)."""
    if grammar == "python" and node.type == "assignment":
        left = node.child_by_field_name("left")
        statement = node.parent
        scope = statement.parent if statement is not None else None
        if scope is not None and scope.type == "block":
            scope = scope.parent
        if (
            left is not None
            and left.type == "identifier"
            and statement is not None
            and statement.type == "expression_statement"
            and scope is not None
            and scope.type in _PYTHON_SCOPES
        ):
            return _text(left)
        return None
    if not node.is_named or not _is_definition(node.type):
        return None
    if node.type.endswith("_specifier") and node.child_by_field_name("body") is None:
        return None  # ``struct S s;`` uses S, it does not define it
    name = node.child_by_field_name("name")
    if name is None and node.type == "impl_item":
        name = node.child_by_field_name("type")
    declarator = node.child_by_field_name("declarator")
    while name is None and declarator is not None:
        inner = declarator.child_by_field_name("declarator")
        if inner is None:
            name = declarator
        declarator = inner
    return _text(name) if name is not None else None


def _walk(root: Any) -> Iterator[Any]:
    cursor = root.walk()
    while True:
        yield cursor.node
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return
