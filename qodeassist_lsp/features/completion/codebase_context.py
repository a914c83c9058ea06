"""Definitions from the codebase index for a completion prompt (issue 45, item 2).

The names near the cursor that are defined in *other* files of the workspace — the attribute
chain or call being typed (``Segment.`` → ``Segment``, ``foo(`` → ``foo``), the names used on
the cursor line and the few lines above, the names imported at the top of the file — are looked
up with one ``CodebaseIndex.definitions_of`` call, and their summaries (a function's signature
and first lines, a class's members' signatures) go into the prompt:

* for agents that send the extra context (``ctx.files_metadata``: llama.cpp ``/infill``'s
  ``input_extra``, ``fim_prompt(ctx)``), as extra files after the ring's chunks, right before
  the cursor window; ring chunks are dropped from the *newest* end while ring and definitions
  together exceed ``extra_context_tokens`` (the prompt's start, which the model server's prompt
  cache holds, stays the same);
* for agents whose prompt is the prefix alone (the Embedded Completion agent), with
  ``codebase_context_in_prefix``: a *file block* (`CodebaseContext.file_block`) in front of the
  prefix, which does not follow the cursor — the definitions of the names the file imports
  from other files of the workspace, the most used in the file first while they fit, as
  signatures (a class: its header and its ``__init__``; no annotations) under
  ``# file: <path>`` headers (the repository-level layout of Qwen2.5-Coder's
  ``<|file_sep|>`` and StarCoder2's ``<file_sep>``), closed by ``# file: <this file>``. It is
  computed once per file and recomputed only when the names the file imports change, when the
  index wrote another file since (`CodebaseIndex.generation`: a definition there may have
  changed; this file's own updates do not count), or the file is closed, or the index
  replaced — so every request in the file starts with the same text and llama.cpp's prompt
  cache keeps it (the cache warm-up reads it first).

A name defined in the current file is skipped (the local definition wins), and so is a bare
name that only names methods (``get`` is a method of many classes: too ambiguous). The most
relevant definition comes *last*, nearest the cursor, and those that do not fit
``codebase_context_tokens`` are left out. Lookups are cached per (document, line, names, index
generation): the keys typed on one line reuse the first lookup, and the part of the name being
typed is never a key. Nothing here runs when no index is given (the codebase feature off or not
built yet).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from qodeassist_lsp.context.codebase.model import CodebaseIndex, SymbolDefinition

__all__ = [
    "DEFINITION_LINES",
    "LINE_CHARS",
    "CodebaseContext",
    "CodebaseLookup",
    "Definitions",
    "FileBlock",
    "compact",
    "identifiers_near",
    "imported_names",
]

CodebaseLookup = Callable[[Path], "CodebaseIndex | None"]
"""The index of the workspace holding a file, or None while it is off or not built."""

DEFINITION_LINES: Final = 16
"""Most lines of one definition's summary in a prompt."""
LINES_ABOVE: Final = 3
"""Lines above the cursor line whose names are looked up."""
MAX_NAMES: Final = 24
"""Most names in one lookup."""
MAX_NEAR: Final = 12
"""Most names near the cursor in one lookup (the rest are imported names)."""
AROUND_CHARS: Final = 4096
"""Imported names are ordered by how often they occur this near the cursor (mostly above)."""
HEAD_CHARS: Final = 16_384
"""Imports are read from the first this-many characters of a file."""
_CACHE_SIZE: Final = 64
_LINE_CHARS: Final = 400

_IDENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CHAIN_TYPED: Final = re.compile(r"([A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)\s*\.\s*\w*$")
_CALLEE: Final = re.compile(r"([A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)\s*$")
_PY_FROM: Final = re.compile(r"^[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)", re.M)
_JS_IMPORT: Final = re.compile(
    r"^[ \t]*import[ \t]+(?:type[ \t]+)?([\w$]+)?[ \t]*,?[ \t]*(?:\{([^}]*)\})?[ \t]*from[ \t]",
    re.M,
)
_STRINGS: Final = re.compile(r"""(?:"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')""")
_SKIPPED: Final = frozenset(
    """
    and as assert async await break case catch class const continue def default del delete do
    elif else enum except export extends false finally for from function global if import in
    instanceof interface is lambda let match new nil none nonlocal not null or pass private
    protected public raise return self cls static struct super switch this throw true try type
    typeof undefined var void while with yield
    bool bytes dict float int len list object print range set str tuple isinstance
    """.split()  # noqa: SIM905 (a word list reads better than 80 quoted strings)
)
"""Keywords and builtins: never looked up (compared in lower case)."""


def _names(text: str) -> list[str]:
    """Return the identifiers of ``text`` outside string literals, last first."""
    found = _IDENT.findall(_STRINGS.sub(" ", text[-_LINE_CHARS:]))
    return [name for name in reversed(found) if _wanted(name)]


def _wanted(name: str) -> bool:
    return len(name) > 1 and name.lower() not in _SKIPPED and not name.isdigit()


def _components(chain: str) -> list[str]:
    return [part.strip() for part in chain.split(".") if part.strip()]


def identifiers_near(line_before: str, lines_above: Sequence[str]) -> list[str]:
    """Return the names near the cursor, the most relevant first, without duplicates.

    The chain being typed (``a.Segment.`` → ``Segment``, then ``a``), the call being typed
    (``foo(x, `` → ``foo``), the other names of the cursor line right to left, then the lines
    above, nearest first. The word touching the cursor is left out (it is still being typed).
    """
    ordered: list[str] = []
    typed = re.search(r"[A-Za-z0-9_]+$", line_before)
    before = line_before[: typed.start()] if typed else line_before
    chain = _CHAIN_TYPED.search(line_before)
    if chain is not None:
        ordered.extend(reversed(_components(chain.group(1))))
    depth = 0
    for index in range(len(before) - 1, -1, -1):
        char = before[index]
        if char == ")":
            depth += 1
        elif char == "(":
            if depth == 0:
                callee = _CALLEE.search(before[:index])
                if callee is not None:
                    ordered.extend(reversed(_components(callee.group(1))))
                break
            depth -= 1
    ordered.extend(_names(before))
    for line in reversed(lines_above):
        ordered.extend(_names(line))
    return _unique(name for name in ordered if _wanted(name))


def imported_names(head: str) -> list[str]:
    """Return the names a file imports by name at its top (Python ``from``, JS ``import``).

    ``import x.y as z`` imports a module, not a definition: nothing. C's ``#include``: nothing.
    """
    names: list[str] = []
    for match in _PY_FROM.finditer(head):
        for item in re.sub(r"#[^\n]*", "", match.group(1)).strip("()").split(","):
            words = item.split()
            if words:
                names.append(words[-1] if len(words) == 3 and words[1] == "as" else words[0])
    for match in _JS_IMPORT.finditer(head):
        if match.group(1):
            names.append(match.group(1))
        for item in (match.group(2) or "").split(","):
            words = item.split()
            if words and words[0] != "type":
                names.append(words[0])
            elif len(words) > 1:
                names.append(words[1])
    return _unique(name for name in names if _IDENT.fullmatch(name) and _wanted(name))


def _unique(names: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(names))


@dataclass(frozen=True, slots=True)
class Definitions:
    """The definitions chosen for one request, the most relevant last, and how to show them."""

    items: tuple[SymbolDefinition, ...] = ()

    @property
    def tokens(self) -> int:
        """Estimated tokens of the summaries (about four characters a token)."""
        return sum(_tokens(_summary(item)) for item in self.items)

    def as_files(self) -> list[tuple[str, str]]:
        """Return ``(path, code)`` per definition, in prompt order (for ``files_metadata``)."""
        return [(item.path, _summary(item)) for item in self.items]


def _summary(item: SymbolDefinition) -> str:
    """Return the summary of a definition `CodebaseContext` found (compacted once, then)."""
    return item.summary


_DOCSTRING: Final = re.compile(r"""(?P<q>\"\"\"|\'\'\')(?P<body>.*?)(?P=q)""", re.DOTALL)
_MEMBER: Final = re.compile(r"\s*(?:async\s+)?(?:def|function)\s+(\w+)")
LINE_CHARS: Final = 120
"""Longer lines of a summary are cut (a long parameter list)."""


@functools.lru_cache(maxsize=1024)
def compact(summary: str, kind: str, width: int = LINE_CHARS) -> str:
    """Return ``summary`` the way a prompt shows it: short, signatures on one line each.

    Multi-line signatures are joined; docstrings keep their first line (a class's are
    dropped); a class keeps its header and its public members' signatures (``__init__``
    included, decorators and a property's setter left out); at most `DEFINITION_LINES` lines
    of at most ``width`` characters (0: no cut).
    """
    cls = kind == "class"

    def docstring(match: re.Match[str]) -> str:
        if cls:
            return ""
        first = next((line.strip() for line in match.group("body").split("\n") if line.strip()), "")
        return f"{match.group('q')}{first}{match.group('q')}" if first else ""

    text = _join_brackets(_DOCSTRING.sub(docstring, summary.strip("\n")))
    lines = [line.rstrip() for line in text.split("\n")]
    if cls:
        kept = lines[:1]
        seen: set[str] = set()
        for line in lines[1:]:
            member = _MEMBER.match(line)
            if member is None:
                continue
            name = member.group(1)
            if name in seen or (name.startswith("_") and name != "__init__"):
                continue
            seen.add(name)
            kept.append(line)
        lines = kept
    lines = [line for line in lines if line.strip() and not line.lstrip().startswith("@")]
    if width > 0:
        lines = [_cut(line, width) for line in lines]
    return "\n".join(lines[:DEFINITION_LINES])


def _cut(line: str, width: int = LINE_CHARS) -> str:
    return line if len(line) <= width else line[: width - 3] + "..."


def _join_brackets(text: str) -> str:
    """Join the lines of a bracketed expression (a parameter list) into one."""
    out: list[str] = []
    depth = 0
    for line in text.split("\n"):
        if depth > 0 and out:
            out[-1] = out[-1] + ("" if out[-1].endswith(("(", "[", "{")) else " ") + line.strip()
        else:
            out.append(line)
        opened = line.count("(") + line.count("[") + line.count("{")
        closed = line.count(")") + line.count("]") + line.count("}")
        depth = max(depth + opened - closed, 0)
    return _BEFORE_CLOSER.sub(r"\1", "\n".join(out))


_BEFORE_CLOSER: Final = re.compile(r",?\s+([)\]}])")


def _tokens(text: str) -> int:
    return (len(text) + 3) // 4


@dataclass(frozen=True, slots=True)
class FileBlock:
    """The definitions a file's imports name, as code in front of its prompt (cached per file)."""

    text: str = ""
    names: tuple[str, ...] = ()
    """The imported names it was made for (it is made again when they change)."""

    @property
    def tokens(self) -> int:
        """Estimated tokens of the block."""
        return _tokens(self.text)


def _block_summary(item: SymbolDefinition) -> list[str]:
    """Return a definition's lines in a file block: its signature, a class's constructor's too.

    Without parameter annotations (their defaults kept), docstrings or bodies: a file block
    names many definitions in few tokens (every token of it is attended to by every token the
    model writes after it); a class's other members come after every name, where room is left
    (`_block_members`).
    """
    lines = compact(item.summary or item.signature, item.kind, 0).split("\n")
    kept = lines[:1]
    if item.kind == "class":
        kept += [line for line in lines[1:] if _INIT_WITH_PARAMETERS.match(line)][:1]
    return [_cut(_without_annotations(line)) for line in kept]


def _block_members(item: SymbolDefinition) -> list[str]:
    """Return a class's public members' signatures (not ``__init__``) for a file block."""
    if item.kind != "class":
        return []
    lines = compact(item.summary or item.signature, item.kind, 0).split("\n")[1:]
    return [_cut(_without_annotations(line)) for line in lines if "__init__(" not in line]


BLOCK_CLASS_MEMBERS: Final = 6
"""Most member signatures of a class in a file block (where the budget leaves room)."""
_INIT_WITH_PARAMETERS: Final = re.compile(r"\s*def __init__\(\s*self\s*,")
_SIGNATURE: Final = re.compile(
    r"(?P<head>\s*(?:async\s+)?def\s+\w+\()(?P<params>.*)\)(?:\s*->\s*(?P<returns>.*?))?\s*:(?P<body>\s*\.\.\.)?\s*$"
)


def _without_annotations(line: str) -> str:
    """Return a one-line Python ``def`` without its parameters' annotations (``-> None`` too).

    ``def f(a: int, *, b: str | None = None) -> str:`` → ``def f(a, *, b=None) -> str:``; any
    other line as it is.
    """
    match = _SIGNATURE.match(line)
    if match is None:
        return line
    parameters = []
    for parameter in _top_level_split(match.group("params"), ","):
        name, _, default = (part.strip() for part in _top_level_split_once(parameter, "="))
        name = _top_level_split_once(name, ":")[0].strip()
        if name:
            parameters.append(f"{name}={default}" if default else name)
    returns = match.group("returns")
    arrow = f" -> {returns.strip()}" if returns and returns.strip() != "None" else ""
    return f"{match.group('head')}{', '.join(parameters)}){arrow}:{match.group('body') or ''}"


def _top_level_split(text: str, separator: str) -> list[str]:
    """Split ``text`` at ``separator`` outside brackets and string literals."""
    parts: list[str] = []
    depth, quote, start = 0, "", 0
    for position, char in enumerate(text):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif char == separator and depth == 0:
            parts.append(text[start:position])
            start = position + 1
    parts.append(text[start:])
    return parts


def _top_level_split_once(text: str, separator: str) -> tuple[str, str, str]:
    parts = _top_level_split(text, separator)
    if len(parts) == 1:
        return text, "", ""
    return parts[0], separator, text[len(parts[0]) + 1 :]


_BARE_NAME: Final = re.compile(r"(?<![\w.])[A-Za-z_]\w*")
"""A name not after a dot (``Request``, not ``self.request``)."""


class CodebaseContext:
    """Looks up the definitions a completion at some line needs; one per completion service."""

    def __init__(self, lookup: CodebaseLookup | None = None) -> None:
        """``lookup``: the index of a file's workspace (None: no index, nothing is added)."""
        self.lookup = lookup
        self._cache: OrderedDict[
            tuple[str, int, tuple[str, ...], int], tuple[SymbolDefinition, ...]
        ]
        self._cache = OrderedDict()
        self._imports: dict[str, tuple[str, tuple[str, ...]]] = {}
        self._paths: dict[tuple[str, str], str] = {}
        self._blocks: dict[str, tuple[tuple[int, str, int, str, int], FileBlock]] = {}
        self.lookups = 0
        """Index queries made (the cache's misses)."""

    def definitions(
        self,
        *,
        uri: str,
        path: str | None,
        text: str,
        line: int,
        line_start: int,
        line_before: str,
        budget: int,
    ) -> Definitions:
        """Return the definitions for a cursor at ``line`` of a file, within ``budget`` tokens.

        ``line_start``: the offset of the cursor line in ``text``; ``path``: the file on disk
        (None: an unsaved buffer, which no workspace index holds: nothing).
        """
        if self.lookup is None or not path or budget <= 0:
            return Definitions()
        index = self.lookup(Path(path))
        if index is None:
            return Definitions()
        above = _lines_above(text, line_start, LINES_ABOVE)
        near = identifiers_near(line_before, above)[:MAX_NEAR]
        around = text[max(line_start - AROUND_CHARS, 0) : line_start + AROUND_CHARS // 4]
        imported = sorted(self._imported(uri, text), key=lambda name: -around.count(name))
        names = _unique([*near, *imported])[:MAX_NAMES]
        if not names:
            return Definitions()
        key = (uri, line, tuple(names), index.generation(os.path.abspath(path)))
        found = self._cache.get(key)
        if found is None:
            found = self._query(index, Path(path), names, frozenset(near))
            self._cache[key] = found
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(key)
        return _within(found, budget)

    def file_block(
        self, *, uri: str, path: str | None, text: str, budget: int, comment_prefix: str
    ) -> FileBlock:
        """Return the file block of ``uri`` (the same text until the names it imports change).

        The names the file imports by name that another file of the workspace defines, the
        most used in the file first while they fit ``budget`` tokens (a class cut to its first
        members when that is what fits), grouped per file under ``{comment_prefix} file:
        <path>``, the most used group last; then ``{comment_prefix} file: <this file>``. Empty
        with no index, an unsaved buffer, or nothing imported from the workspace.
        """
        if self.lookup is None or not path or budget <= 0:
            return FileBlock()
        index = self.lookup(Path(path))
        if index is None:
            return FileBlock()
        names = self._imported(uri, text)
        # What other files define changes with the index: the block is made again after any
        # write but this file's own updates (typing here keeps it, and the prompt cache).
        generation = index.generation(os.path.abspath(path))
        key = (id(index), comment_prefix, budget, str(path), generation)
        cached = self._blocks.get(uri)
        if cached is not None and cached[0] == key and cached[1].names == names:
            return cached[1]
        block = self._make_block(index, Path(path), text, names, budget, comment_prefix)
        if len(self._blocks) >= _CACHE_SIZE and uri not in self._blocks:
            self._blocks.pop(next(iter(self._blocks)))
        self._blocks[uri] = (key, block)
        return block

    def _make_block(
        self,
        index: CodebaseIndex,
        path: Path,
        text: str,
        names: tuple[str, ...],
        budget: int,
        comment_prefix: str,
    ) -> FileBlock:
        if not names:
            return FileBlock(names=names)
        self.lookups += 1
        # The import itself counts once for every name: the order holds. Ranked before the
        # cap, or a file importing many names would only ever show its first imports.
        uses = Counter(_BARE_NAME.findall(text))
        order = {name: number for number, name in enumerate(names)}
        ranked_names = sorted(names, key=lambda name: (-uses[name], order[name]))[:MAX_NAMES]
        found = index.definitions_of(ranked_names, limit=max(len(ranked_names) * 2, 8))
        own = self._relative(index, path)
        by_name: dict[str, SymbolDefinition] = {}
        for item in found:
            if item.path != own and item.container is None and item.name in order:
                by_name.setdefault(item.name, item)
        ranked = sorted(by_name.values(), key=lambda d: (-uses[d.name], order[d.name]))
        closing = f"{comment_prefix} file: {own or path.name}"
        used = _tokens(closing) + 1
        chosen: list[tuple[SymbolDefinition, list[str]]] = []
        paths: set[str] = set()
        for item in ranked:
            lines = _block_summary(item)
            header = 0 if item.path in paths else _tokens(f"{comment_prefix} file: {item.path}") + 1
            while lines and used + header + _tokens("\n".join(lines)) + 1 > budget:
                lines.pop()
            if not lines:
                continue
            used += header + _tokens("\n".join(lines)) + 1
            paths.add(item.path)
            chosen.append((item, lines))
        # Every name first; what is left shows the most used classes' members (after
        # ``Segment.`` the model sees which methods it has).
        for item, lines in chosen:
            for member in _block_members(item)[:BLOCK_CLASS_MEMBERS]:
                if used + _tokens(member) + 1 > budget:
                    break
                used += _tokens(member) + 1
                lines.append(member)
        if not chosen:
            return FileBlock(names=names)
        best: dict[
            str, int
        ] = {}  # a file's group goes where its most used definition ranks: that one last
        for rank, (item, _) in enumerate(chosen):
            best.setdefault(item.path, rank)
        out: list[str] = []
        for group in sorted(best, key=lambda group: -best[group]):
            out.append(f"{comment_prefix} file: {group}")
            for item, lines in reversed(chosen):
                if item.path == group:
                    out.extend(lines)
        out.append(closing)
        return FileBlock("\n".join(out) + "\n", names)

    def forget(self, uri: str) -> None:
        """Drop what is kept for ``uri`` (closed)."""
        self._blocks.pop(uri, None)
        self._imports.pop(uri, None)
        for key in [key for key in self._cache if key[0] == uri]:
            del self._cache[key]

    def clear(self) -> None:
        """Drop every cached lookup (the index or the settings changed)."""
        self._cache.clear()
        self._blocks.clear()
        self._imports.clear()
        self._paths.clear()

    def _relative(self, index: CodebaseIndex, path: Path) -> str:
        """Return ``path`` as the index names it (relative to its root), "" when outside."""
        key = (str(index.root), str(path))
        own = self._paths.get(key)
        if own is None:
            try:
                own = path.resolve().relative_to(index.root.resolve()).as_posix()
            except ValueError:
                own = ""
            if len(self._paths) >= _CACHE_SIZE:
                self._paths.clear()
            self._paths[key] = own
        return own

    def _imported(self, uri: str, text: str) -> tuple[str, ...]:
        head = _import_region(text[:HEAD_CHARS])
        cached = self._imports.get(uri)
        if cached is not None and cached[0] == head:
            return cached[1]
        names = tuple(imported_names(head))
        self._imports[uri] = (head, names)
        return names

    def _query(
        self, index: CodebaseIndex, path: Path, names: list[str], near: frozenset[str]
    ) -> tuple[SymbolDefinition, ...]:
        """Look ``names`` up; a name not ``near`` the cursor (only imported) keeps one line."""
        self.lookups += 1
        found = index.definitions_of(names, limit=max(len(names) * 2, 8))
        own = self._relative(index, path)
        local = {item.name for item in found if item.path == own}
        by_name: dict[str, SymbolDefinition] = {}
        for item in found:
            if item.name in local or item.path == own or item.container is not None:
                continue
            by_name.setdefault(item.name, item)
        chosen: list[SymbolDefinition] = []
        for name in names:
            definition = by_name.get(name)
            if definition is not None:
                summary = compact(definition.summary or definition.signature, definition.kind)
                if name not in near:
                    summary = summary.split("\n", 1)[0]
                chosen.append(dataclasses.replace(definition, summary=summary))
        return tuple(chosen)


_IMPORT_STARTS: Final = ("from ", "import ", "import{", "export ")


def _import_region(head: str) -> str:
    """Return ``head`` up to the end of the line of its last ``import`` (and its brackets).

    Every import statement is in it, and a key typed below it leaves it the same: the names are
    parsed again only when it changes (a regex over the whole head costs milliseconds).
    """
    last = len(head)
    while True:
        last = head.rfind("import", 0, last)
        if last < 0:
            return ""
        end = head.find("\n", last)
        end = len(head) if end < 0 else end
        line = head[head.rfind("\n", 0, last) + 1 : end]
        if line.lstrip().startswith(_IMPORT_STARTS):  # not "important" in a comment
            break
    for opener, closer in (("(", ")"), ("{", "}")):
        if opener in line and closer not in line[line.index(opener) :]:
            closed = head.find(closer, end)
            end = len(head) if closed < 0 else head.find("\n", closed)
            end = len(head) if end < 0 else end
    return head[:end]


def _lines_above(text: str, line_start: int, count: int) -> list[str]:
    """Return up to ``count`` lines above the line starting at ``line_start``, top first."""
    lines: list[str] = []
    end = line_start - 1
    while end >= 0 and len(lines) < count:
        start = text.rfind("\n", 0, end) + 1
        lines.append(text[start:end])
        end = start - 1
    return lines[::-1]


def _within(found: Sequence[SymbolDefinition], budget: int) -> Definitions:
    """Take definitions in order of relevance while they fit; return the most relevant last.

    A long one is cut to the lines that fit (a class's first members), when that leaves it at
    least its header and one more line.
    """
    chosen: list[SymbolDefinition] = []
    used = 0
    for item in found:
        head = _tokens(item.path) + 1
        lines = _summary(item).split("\n")
        while lines and used + head + _tokens("\n".join(lines)) > budget:
            lines.pop()
        if not lines or (len(lines) < 2 and len(_summary(item).split("\n")) > 1):
            continue
        text = "\n".join(lines)
        chosen.append(dataclasses.replace(item, summary=text, signature=lines[0]))
        used += head + _tokens(text)
    return Definitions(tuple(reversed(chosen)))
