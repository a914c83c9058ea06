"""Cutting a file into what the index stores: definition chunks, line windows and symbols.

A file with an installed grammar (``context.syntax``) is cut by tree-sitter into functions,
classes and methods with their line ranges; a class's chunk is its header, fields and members'
signatures (method bodies are their own chunks, so no text is indexed twice); the lines no
definition covers — a module's docstring, imports, constants — become ``lines`` chunks, so a
question about a module finds it too. A file without a grammar becomes overlapping windows of
lines. Each definition also gives a `Symbol`: its signature (the text up to its body) and a
summary a prompt can show instead of the whole definition. So does each top-level assignment,
constant and type alias (``DEFAULT_TIMEOUT = Timeout(5.0)``, ``export const x``, ``#define``,
Go's ``const``/``var``/``type``, Rust's ``const``/``static``/``type``): a symbol only, its text
being in the module's ``lines`` chunks already.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from qodeassist_lsp.context.codebase.limits import IndexLimits
from qodeassist_lsp.context.codebase.model import ChunkKind
from qodeassist_lsp.context.syntax import SyntaxChecker, grammar_name
from qodeassist_lsp.context.text_compare import common_ends

__all__ = ["Chunk", "Chunker", "FileChunks", "Symbol"]

_FUNCTIONS: Final[dict[str, frozenset[str]]] = {
    "python": frozenset({"function_definition"}),
    "javascript": frozenset(
        {"function_declaration", "generator_function_declaration", "method_definition"}
    ),
    "c": frozenset({"function_definition"}),
    "cpp": frozenset({"function_definition"}),
    "go": frozenset({"function_declaration", "method_declaration"}),
    "rust": frozenset({"function_item", "function_signature_item"}),
    "java": frozenset({"method_declaration", "constructor_declaration"}),
}
_FUNCTIONS["typescript"] = _FUNCTIONS["tsx"] = _FUNCTIONS["javascript"] | {"method_signature"}
_CLASSES: Final[dict[str, frozenset[str]]] = {
    "python": frozenset({"class_definition"}),
    "javascript": frozenset({"class_declaration"}),
    "c": frozenset({"struct_specifier", "union_specifier", "enum_specifier"}),
    "cpp": frozenset({"struct_specifier", "union_specifier", "enum_specifier", "class_specifier"}),
    "go": frozenset({"type_spec"}),
    "rust": frozenset({"struct_item", "enum_item", "union_item", "trait_item"}),
    "java": frozenset(
        {"class_declaration", "interface_declaration", "enum_declaration", "record_declaration"}
    ),
}
_CLASSES["typescript"] = _CLASSES["tsx"] = _CLASSES["javascript"] | {
    "abstract_class_declaration",
    "interface_declaration",
    "enum_declaration",
}
_SCOPE_ONLY: Final = frozenset({"impl_item"})
"""Nodes that name the container of the functions inside without being a definition (Rust)."""
_FUNCTION_VALUES: Final = frozenset({"arrow_function", "function_expression", "function"})
_SUMMARY_BODY_LINES: Final = 6
_SUMMARY_MEMBERS: Final = 40
_SUMMARY_DOCSTRING_LINES: Final = 3
"""A class's docstring in its summary: the first lines; the members' signatures matter more."""
_SIGNATURE_CHARS: Final = 400
_ASSIGNMENT_LINES: Final = 6
"""Lines of a top-level assignment in its summary (a long literal's first lines)."""
_ASSIGNMENT_SIGNATURE_CHARS: Final = 200
_ASSIGNMENT_SUMMARY_CHARS: Final = 600
_ASSIGNMENTS: Final[dict[str, frozenset[str]]] = {
    "python": frozenset({"expression_statement", "type_alias_statement"}),
    "javascript": frozenset({"lexical_declaration", "variable_declaration"}),
    "c": frozenset({"declaration", "preproc_def", "type_definition"}),
    "go": frozenset({"const_declaration", "var_declaration", "type_declaration"}),
    "rust": frozenset({"const_item", "static_item", "type_item"}),
}
_ASSIGNMENTS["typescript"] = _ASSIGNMENTS["tsx"] = _ASSIGNMENTS["javascript"] | {
    "type_alias_declaration"
}
_ASSIGNMENTS["cpp"] = _ASSIGNMENTS["c"] | {"alias_declaration"}
"""Top-level statements that may name module-level values or type aliases, per grammar."""
_TYPE_ALIASES: Final = frozenset(
    {
        "type_alias_statement",
        "type_alias_declaration",
        "type_definition",
        "alias_declaration",
        "type_declaration",
        "type_item",
    }
)
_KEPT_TREES: Final = 4
_SLICE_BYTES: Final = 8192
_WHOLE_BYTES: Final = 32 * 1024
_NEVER_HOLDING: Final = frozenset(
    {
        "expression_statement",
        "assignment",
        "augmented_assignment",
        "return_statement",
        "call",
        "arguments",
        "argument_list",
        "dictionary",
        "list",
        "tuple",
        "set",
        "array",
        "object",
        "initializer_list",
        "import_statement",
        "import_from_statement",
        "import_declaration",
        "preproc_include",
        "use_declaration",
        "field_declaration",
    }
)
"""Values, imports and fields: what a definition cannot hide in (not walked, for speed)."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """A searchable piece of a file (lines 0-based, ``end_line`` inclusive)."""

    start_line: int
    end_line: int
    kind: ChunkKind
    name: str | None
    """Qualified by the enclosing class (``Segment.split``); None for a window of lines."""
    text: str


@dataclass(frozen=True, slots=True)
class Symbol:
    """A definition for the symbol table."""

    name: str
    container: str | None
    kind: ChunkKind
    start_line: int
    end_line: int
    signature: str
    summary: str


@dataclass(slots=True)
class FileChunks:
    """What one file gives the index."""

    chunks: list[Chunk] = field(default_factory=list)
    symbols: list[Symbol] = field(default_factory=list)
    grammar: str | None = None


@dataclass(slots=True)
class _Definition:
    node: Any
    start: int
    """First line, decorators included."""
    end: int
    kind: ChunkKind
    name: str
    container: str | None
    members: list[_Definition] = field(default_factory=list)


class Chunker:
    """Cuts texts into chunks and symbols; safe to share between threads."""

    def __init__(self, limits: IndexLimits, checker: SyntaxChecker | None = None) -> None:
        """Create a chunker using ``checker``'s parsers (one per grammar, built once)."""
        self._limits = limits
        self._checker = checker or SyntaxChecker()
        self._lock = threading.Lock()  # a tree-sitter parser is not reentrant
        self._trees: dict[str, tuple[str, str, Any]] = {}
        """The files being edited, oldest first: their grammar, last text and its tree."""

    def grammar_for(self, relative: str) -> str | None:
        """Return the grammar used for a file, or None (line windows)."""
        grammar = grammar_name("", relative)
        languages = self._limits.languages
        if grammar is None or (languages is not None and grammar not in languages):
            return None
        return grammar

    def chunk(self, relative: str, text: str, *, incremental: bool = False) -> FileChunks:
        """Return the chunks and symbols of ``text``, the content of the file ``relative``.

        ``incremental``: the file is being edited; its tree is kept (for the last few such
        files) and the next text of the same file is parsed from it, in a fraction of the time.
        """
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if "\r" in text:  # CRLF: the chunks' text has plain line ends, the line numbers agree
            lines = [line.removesuffix("\r") for line in lines]
        grammar = self.grammar_for(relative)
        if grammar is not None:
            source = text.encode("utf-8", "surrogatepass")
            with self._lock:
                tree = self._parse(relative, grammar, text, source, incremental)
            if tree is not None:
                result = FileChunks(grammar=grammar)
                definitions = list(_definitions(tree.root_node, grammar, None, source))
                self._add_definitions(result, definitions, lines, source, grammar)
                self._add_gaps(result, definitions, lines)
                result.symbols.extend(_assignments(tree.root_node, grammar, lines, definitions))
                result.chunks.sort(key=lambda chunk: (chunk.start_line, chunk.end_line))
                return result
        result = FileChunks()
        if not lines:
            return result
        result.chunks.extend(
            _windows(
                lines, 0, len(lines) - 1, "lines", None, self._limits.window_lines, self._overlap
            )
        )
        return result

    def _parse(
        self, relative: str, grammar: str, text: str, source: bytes, incremental: bool
    ) -> Any | None:
        parser = self._checker.parser_for(grammar)
        if parser is None:
            return None
        kept = self._trees.pop(relative, None)
        if not incremental:
            return parser.parse(_slices(source))
        if kept is not None and kept[0] == grammar:
            old_tree = kept[2]
            _edit(old_tree, kept[1], text)
            tree = parser.parse(_slices(source), old_tree)
        else:
            tree = parser.parse(_slices(source))
        self._trees[relative] = (grammar, text, tree)
        while len(self._trees) > _KEPT_TREES:
            self._trees.pop(next(iter(self._trees)))
        return tree

    @property
    def _overlap(self) -> int:
        return max(0, min(self._limits.window_overlap, self._limits.window_lines - 1))

    def _add_definitions(
        self,
        result: FileChunks,
        definitions: list[_Definition],
        lines: list[str],
        source: bytes,
        grammar: str,
    ) -> None:
        for definition in definitions:
            signature = _signature(definition.node, source)
            qualified = (
                f"{definition.container}.{definition.name}"
                if definition.container
                else definition.name
            )
            members: list[_Definition] = []
            if definition.kind == "class":
                member_lines, summary_lines = _class_lines(definition, lines, source)
                summary = "\n".join(summary_lines[:_SUMMARY_MEMBERS])
                result.chunks.append(
                    Chunk(
                        definition.start,
                        definition.end,
                        "class",
                        qualified,
                        "\n".join(member_lines),
                    )
                )
                members = definition.members
            else:
                summary = _function_summary(definition, lines, source)
                result.chunks.extend(
                    _windows(
                        lines,
                        definition.start,
                        definition.end,
                        definition.kind,
                        qualified,
                        self._limits.max_chunk_lines,
                        self._overlap,
                    )
                )
            result.symbols.append(
                Symbol(
                    definition.name,
                    definition.container,
                    definition.kind,
                    definition.start,
                    definition.end,
                    signature,
                    summary,
                )
            )
            if members:
                self._add_definitions(result, members, lines, source, grammar)

    def _add_gaps(
        self, result: FileChunks, definitions: list[_Definition], lines: list[str]
    ) -> None:
        """Add ``lines`` chunks for the runs of lines no top-level definition covers."""
        spans = sorted((d.start, min(d.end, len(lines) - 1)) for d in definitions)
        start = 0
        for first, last in [*spans, (len(lines), len(lines))]:
            end = first - 1
            if start <= end and any(lines[line].strip() for line in range(start, end + 1)):
                result.chunks.extend(
                    _windows(
                        lines, start, end, "lines", None, self._limits.window_lines, self._overlap
                    )
                )
            start = max(start, last + 1)


def _slices(source: bytes) -> bytes | Callable[[int, Any], bytes]:
    """Return what tree-sitter parses: a big ``source`` as a reader of `_SLICE_BYTES` slices.

    tree-sitter keeps Python's GIL for the whole parse of a bytestring: parsing a big file in a
    worker thread would stop the event loop for as long (a third of a second for 700 KB on a
    busy machine). Read through a Python callback, it gives the other threads their turn at
    every slice. A small file is handed over whole: its parse is short, and the callback's
    copies cost memory.
    """
    if len(source) <= _WHOLE_BYTES:
        return source

    def read(offset: int, _point: Any) -> bytes:
        return source[offset : offset + _SLICE_BYTES]

    return read


def _edit(tree: Any, old: str, new: str) -> None:
    """Tell ``tree`` (parsed from ``old``) where ``new`` differs: one span between common ends."""
    prefix, suffix = common_ends(old, new)

    def point(text: str, offset: int) -> tuple[int, int]:
        line_start = text.rfind("\n", 0, offset) + 1
        return text.count("\n", 0, offset), _utf8_length(text[line_start:offset])

    start_byte = _utf8_length(old[:prefix])
    tree.edit(
        start_byte=start_byte,
        old_end_byte=start_byte + _utf8_length(old[prefix : len(old) - suffix]),
        new_end_byte=start_byte + _utf8_length(new[prefix : len(new) - suffix]),
        start_point=point(old, prefix),
        old_end_point=point(old, len(old) - suffix),
        new_end_point=point(new, len(new) - suffix),
    )


def _utf8_length(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _windows(
    lines: list[str],
    start: int,
    end: int,
    kind: ChunkKind,
    name: str | None,
    size: int,
    overlap: int,
) -> Iterator[Chunk]:
    """Yield chunks of at most ``size`` lines covering ``start..end`` (blank edges trimmed)."""
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end].strip():
        end -= 1
    size = max(1, size)
    step = max(1, size - overlap)
    first = start
    while True:
        last = min(end, first + size - 1)
        yield Chunk(first, last, kind, name, "\n".join(lines[first : last + 1]))
        if last >= end:
            return
        first += step


def _text(node: Any) -> str:
    return bytes(node.text or b"").decode("utf-8", "replace")


def _end_line(node: Any) -> int:
    row: int = node.end_point[0]
    if node.end_point[1] == 0 and row > node.start_point[0]:
        row -= 1
    return row


def _definitions(
    node: Any, grammar: str, container: str | None, source: bytes
) -> Iterator[_Definition]:
    """Yield the definitions among ``node``'s descendants (not inside functions)."""
    functions = _FUNCTIONS.get(grammar, frozenset())
    classes = _CLASSES.get(grammar, frozenset())
    for child in node.named_children:
        target, start = child, child.start_point[0]
        if child.type == "decorated_definition":
            inner = child.child_by_field_name("definition")
            if inner is None:
                continue
            target = inner
        kind: ChunkKind | None = None
        value = None
        if target.type in functions:
            kind = "method" if container is not None else "function"
        elif target.type in classes and _has_body(target, grammar):
            kind = "class"
        elif target.type == "variable_declarator":
            value = target.child_by_field_name("value")
            if value is not None and value.type in _FUNCTION_VALUES:
                kind = "function"
        if kind is None:
            if target.type in _SCOPE_ONLY:
                owner = _impl_type(target)
                yield from _definitions(target, grammar, owner or container, source)
            elif _may_hold_definitions(target.type):
                yield from _definitions(target, grammar, container, source)
            continue
        name, owner = _name_of(target, grammar)
        if not name:
            continue
        parent = container
        if owner is not None:  # ``void A::f() {}``, a Go method's receiver
            parent, kind = owner, "method"
        if target.type == "variable_declarator" and node.type == "lexical_declaration":
            start = node.start_point[0]
        if target.type == "type_spec" and len(node.named_children) == 1:
            start = node.start_point[0]  # ``type S struct {…}``: the Go keyword is in the line
        definition = _Definition(target, start, _end_line(child), kind, name, parent)
        if kind == "class":
            qualified = f"{parent}.{name}" if parent else name
            definition.members = list(_definitions(target, grammar, qualified, source))
        yield definition


def _assignments(
    root: Any, grammar: str, lines: list[str], definitions: list[_Definition]
) -> Iterator[Symbol]:
    """Yield a symbol per name a top-level assignment, constant or type alias defines.

    Only the file's own top level (and JavaScript's ``export``): a name assigned in a function
    or a class is not the module's. A name is given once (its first assignment), and not when a
    function or class of the file has it (``f = decorate(f)`` does not hide ``def f``).
    """
    kinds = _ASSIGNMENTS.get(grammar)
    if not kinds:
        return
    seen = {d.name for d in definitions if d.container is None}
    for child in _top_level(root):
        statement = child
        if child.type == "export_statement":
            inner = child.child_by_field_name("declaration")
            if inner is None:
                continue
            statement = inner
        if statement.type not in kinds:
            continue
        kind: ChunkKind = "type" if statement.type in _TYPE_ALIASES else "variable"
        if kind == "variable" and _annotation(statement).endswith("TypeAlias"):
            kind = "type"
        for name, node in _assigned_names(statement):
            if name in seen:
                continue
            seen.add(name)
            span = child if node is None else node
            start, end = span.start_point[0], min(_end_line(span), len(lines) - 1)
            if start >= len(lines):
                continue
            signature = lines[start].strip()
            if len(signature) > _ASSIGNMENT_SIGNATURE_CHARS:
                signature = signature[: _ASSIGNMENT_SIGNATURE_CHARS - 1] + "…"
            summary = "\n".join(lines[start : min(end, start + _ASSIGNMENT_LINES - 1) + 1])
            if len(summary) > _ASSIGNMENT_SUMMARY_CHARS:
                summary = summary[: _ASSIGNMENT_SUMMARY_CHARS - 1] + "…"
            yield Symbol(name, None, kind, start, end, signature, summary)


def _top_level(node: Any) -> Iterator[Any]:
    """Yield a file's top-level statements, those of C++ namespaces and ``extern "C"`` too."""
    for child in node.named_children:
        if child.type in ("namespace_definition", "linkage_specification"):
            body = child.child_by_field_name("body")
            if body is not None:
                yield from _top_level(body)
        else:
            yield child


def _assigned_names(statement: Any) -> Iterator[tuple[str, Any | None]]:
    """Yield the names a top-level statement assigns (see `_ASSIGNMENTS`).

    Each with the node whose lines it takes (one spec of a Go group), or None: the statement.
    """
    kind = statement.type
    if kind == "expression_statement":  # Python: ``X = …``, ``a, b = …``, ``X: T = …``
        node = statement.named_child(0) if statement.named_child_count else None
        while node is not None and node.type == "assignment":
            yield from ((name, None) for name in _identifiers(node.child_by_field_name("left")))
            node = node.child_by_field_name("right")
    elif kind in ("lexical_declaration", "variable_declaration"):
        for declarator in statement.named_children:
            if declarator.type != "variable_declarator":
                continue
            value = declarator.child_by_field_name("value")
            if value is not None and value.type in _FUNCTION_VALUES:
                continue  # a function: already a definition
            yield from ((n, None) for n in _identifiers(declarator.child_by_field_name("name")))
    elif kind == "declaration":  # C: ``static const int LIMIT = 5;``, not a prototype
        for declarator in statement.children_by_field_name("declarator"):
            while declarator is not None and declarator.type in (
                "init_declarator",
                "array_declarator",
                "pointer_declarator",
            ):
                declarator = declarator.child_by_field_name("declarator")
            if declarator is not None and declarator.type == "identifier":
                yield _text(declarator), None
    elif kind == "type_definition":  # C: ``typedef struct s S;``
        for declarator in statement.children_by_field_name("declarator"):
            if declarator.type in ("type_identifier", "primitive_type"):
                yield _text(declarator), None
    elif kind in ("const_declaration", "var_declaration", "type_declaration"):  # Go
        specs = [
            item
            for spec in statement.named_children
            for item in (spec.named_children if spec.type.endswith("_spec_list") else [spec])
        ]
        for item in specs:
            if item.type == "type_spec" and _has_body(item, "go"):
                continue  # a struct or an interface: already a definition
            for name in item.children_by_field_name("name"):
                if name.type in ("identifier", "type_identifier"):
                    yield (
                        _text(name),
                        (item if item.start_point[0] != statement.start_point[0] else None),
                    )
    elif kind == "type_alias_statement":  # Python 3.12: ``type X = …``
        yield from ((n, None) for n in _identifiers(statement.child_by_field_name("left")))
    else:  # ``#define``, TS ``type``, Rust ``const``/``static``/``type``, C++ ``using X = …``
        name = statement.child_by_field_name("name")
        if name is not None and name.type in ("identifier", "type_identifier"):
            yield _text(name), None


def _annotation(statement: Any) -> str:
    """Return a Python assignment's annotation (``X: TypeAlias = …`` → ``TypeAlias``), or ""."""
    if statement.type != "expression_statement" or not statement.named_child_count:
        return ""
    annotation = statement.named_child(0).child_by_field_name("type")
    return _text(annotation).strip() if annotation is not None else ""


def _identifiers(node: Any | None) -> Iterator[str]:
    """Yield a target's plain names: ``X``, ``a, b``, ``(a, b)``; not ``x.y`` or ``x[0]``."""
    if node is None:
        return
    if node.type == "identifier":
        yield _text(node)
    elif node.type in ("type", "pattern_list", "tuple_pattern", "list_pattern"):
        for child in node.named_children:
            yield from _identifiers(child)


def _may_hold_definitions(kind: str) -> bool:
    """Whether a node that is no definition is worth walking into (statements, not values)."""
    return not (
        kind in _FUNCTION_VALUES
        or kind in _NEVER_HOLDING
        or kind.startswith("lambda")
        or kind.endswith(("expression", "_literal", "string", "comment", "_operator"))
    )


def _has_body(node: Any, grammar: str) -> bool:
    if grammar == "go":
        kind = node.child_by_field_name("type")
        return kind is not None and kind.type in ("struct_type", "interface_type")
    if grammar in ("c", "cpp") and node.type.endswith("_specifier"):
        return node.child_by_field_name("body") is not None
    return True


def _impl_type(node: Any) -> str | None:
    kind = node.child_by_field_name("type")
    if kind is None:
        return None
    if kind.type == "generic_type":
        kind = kind.child_by_field_name("type") or kind
    return _text(kind)


def _name_of(node: Any, grammar: str) -> tuple[str | None, str | None]:
    """Return (name, container it names itself, as ``A::f`` or a Go receiver, or None)."""
    if grammar == "go" and node.type == "method_declaration":
        name = node.child_by_field_name("name")
        receiver = node.child_by_field_name("receiver")
        owner = None
        if receiver is not None:
            for parameter in receiver.named_children:
                kind = parameter.child_by_field_name("type")
                while kind is not None and kind.type in ("pointer_type", "generic_type"):
                    inner = kind.named_children[0] if kind.named_children else None
                    if kind.type == "generic_type":
                        inner = kind.child_by_field_name("type")
                    kind = inner
                if kind is not None:
                    owner = _text(kind)
        return (_text(name) if name is not None else None), owner
    name = node.child_by_field_name("name")
    declarator = node.child_by_field_name("declarator")
    while name is None and declarator is not None:
        inner = declarator.child_by_field_name("declarator")
        if inner is None:
            name = declarator
        declarator = inner
    if name is None:
        return None, None
    text = _text(name)
    if name.type == "qualified_identifier" and "::" in text:
        owner, _, simple = text.rpartition("::")
        return simple, owner.replace("::", ".")
    return text, None


def _signature(node: Any, source: bytes) -> str:
    """Return a definition's text up to its body (``def f(x: int) -> str:``), one line."""
    body = node.child_by_field_name("body")
    if node.type == "variable_declarator":
        value = node.child_by_field_name("value")
        body = value.child_by_field_name("body") if value is not None else None
    end = body.start_byte if body is not None else node.end_byte
    if node.type == "class_definition" and body is not None:
        end = body.start_byte
    head = source[node.start_byte : end].decode("utf-8", "replace")
    if body is None:
        head = head.split("\n", 1)[0]
    joined = " ".join(part.strip() for part in head.strip().splitlines() if part.strip())
    joined = joined.rstrip(" {")
    if len(joined) > _SIGNATURE_CHARS:
        joined = joined[: _SIGNATURE_CHARS - 1] + "…"
    return joined


def _docstring(node: Any) -> Any | None:
    # ``named_child(0)``, not ``named_children[0]``: that builds a node for every statement
    body = node.child_by_field_name("body")
    if body is None or not body.named_child_count:
        return None
    first = body.named_child(0)
    is_string = first.named_child_count and first.named_child(0).type == "string"
    return first if first.type == "expression_statement" and is_string else None


def _signature_end(node: Any, lines: list[str]) -> int:
    """Return the last line of a definition's signature (the line before its body's lines)."""
    body = node.child_by_field_name("body")
    if body is None:
        return _end_line(node)
    row, column = int(body.start_point[0]), int(body.start_point[1])
    before = lines[row][:column] if row < len(lines) else ""
    return row if before.strip() or row == node.start_point[0] else row - 1


def _function_summary(definition: _Definition, lines: list[str], source: bytes) -> str:
    """Return the definition's first lines: decorators, signature, docstring or first body lines."""
    node = definition.node
    head_end = _signature_end(node, lines)
    last = min(definition.end, head_end + _SUMMARY_BODY_LINES)
    docstring = _docstring(node)
    if docstring is not None:
        last = max(last, min(_end_line(docstring), head_end + 2 * _SUMMARY_BODY_LINES))
    return "\n".join(lines[definition.start : last + 1])


def _skip_bodies(
    definition: _Definition, lines: list[str], source: bytes, skip: set[int], keep: dict[int, str]
) -> None:
    """Mark the lines of ``definition``'s methods' bodies (nested classes' too) to leave out."""
    for member in definition.members:
        if member.kind == "class":
            _skip_bodies(member, lines, source, skip, keep)
            continue
        head_end = _signature_end(member.node, lines)
        skip.update(range(head_end + 1, member.end + 1))
        if head_end >= member.end:
            # ``def f(): return 1`` / ``void m() { … }`` on one line: show the signature only
            line = lines[member.end] if member.end < len(lines) else ""
            indent = line[: len(line) - len(line.lstrip())]
            keep[member.end] = indent + _signature(member.node, source)


def _class_lines(
    definition: _Definition, lines: list[str], source: bytes
) -> tuple[list[str], list[str]]:
    """Return a class's lines with its methods' bodies left out (their signatures kept).

    Twice: whole, and for its summary with its own docstring cut to its first lines.
    """
    skip: set[int] = set()
    keep: dict[int, str] = {}
    _skip_bodies(definition, lines, source, skip, keep)
    cut: set[int] = set()
    cut_line: tuple[int, str] | None = None
    docstring = _docstring(definition.node)
    if docstring is not None:
        first, last = docstring.start_point[0], _end_line(docstring)
        if last - first + 1 > _SUMMARY_DOCSTRING_LINES:
            cut.update(range(first + _SUMMARY_DOCSTRING_LINES, last + 1))
            shown = first + _SUMMARY_DOCSTRING_LINES - 1
            cut_line = (shown, lines[shown] + " …")
    whole: list[str] = []
    summary: list[str] = []
    for number in range(definition.start, min(definition.end, len(lines) - 1) + 1):
        if number in keep:
            line = keep[number]
        elif number not in skip and lines[number].strip():
            line = lines[number]
        else:
            continue
        whole.append(line)
        if cut_line is not None and number == cut_line[0]:
            summary.append(cut_line[1])
        elif number not in cut:
            summary.append(line)
    return whole, summary
