"""Languages as completion needs them: comment prefix, code-fence tags, extensions, MIME type.

The output handler turns prose outside code fences into comments of the file's language and
must recognise a fence's language tag (```` ```python ````) so the tag never leaks into a
suggestion. The table is the original plugin's (behaviour §6.4) plus a few obvious extensions
and tags; ``custom_languages`` from settings are consulted first, so a user entry overrides a
built-in one. The language name (``c-like``, ``python``, …) is also what agents' system prompts
see as ``language``.
"""

from __future__ import annotations

import functools
import mimetypes
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from qodeassist_lsp.features.completion.settings import DEFAULT_CUSTOM_LANGUAGES, CustomLanguage

__all__ = [
    "BUILTIN_LANGUAGES",
    "DEFAULT_COMMENT_PREFIX",
    "Language",
    "LanguageTable",
    "mime_type",
]

DEFAULT_COMMENT_PREFIX: Final = "//"


@dataclass(frozen=True, slots=True)
class Language:
    """One language: its name, line-comment prefix, fence tags and file extensions."""

    name: str
    comment_prefix: str
    fence_tags: frozenset[str]
    extensions: tuple[str, ...]
    """Lower-case extensions without the dot, or exact file names (``CMakeLists.txt``)."""


def _lang(name: str, prefix: str, tags: str, extensions: str) -> Language:
    return Language(name, prefix, frozenset(tags.split()), tuple(extensions.split()))


BUILTIN_LANGUAGES: Final = (
    _lang("python", "#", "python py python3", "py pyi pyw"),
    _lang("lua", "--", "lua", "lua"),
    _lang("js", "//", "javascript js jsx node", "js jsx mjs cjs"),
    _lang("ts", "//", "typescript ts tsx", "ts tsx mts cts"),
    _lang(
        "c-like",
        "//",
        "c cpp c++ cxx cc h hpp objective-c objc objectivec cuda",
        "c h cpp hpp cc cxx hh hxx c++ h++ ipp inl m mm cu",
    ),
    _lang("java", "//", "java", "java"),
    _lang("c#", "//", "csharp c# cs", "cs"),
    _lang("php", "//", "php", "php"),
    _lang("ruby", "#", "ruby rb", "rb"),
    _lang("go", "//", "go golang", "go"),
    _lang("swift", "//", "swift", "swift"),
    _lang("kotlin", "//", "kotlin kt", "kt kts"),
    _lang("scala", "//", "scala", "scala sc"),
    _lang("r", "#", "r", "r"),
    _lang("shell", "#", "shell sh bash zsh console shellscript", "sh bash zsh"),
    _lang("perl", "#", "perl pl", "pl pm"),
    _lang("hs", "--", "haskell hs", "hs"),
    _lang("qml", "//", "qml qmljs", "qml"),
)
"""The original's table (names, prefixes) with a few more extensions and fence tags."""

_EXTRA_FENCE_TAGS: Final = frozenset(
    (
        "text",
        "plaintext",
        "txt",
        "code",
        "diff",
        "patch",
        "json",
        "jsonc",
        "yaml",
        "yml",
        "toml",
        "ini",
        "xml",
        "html",
        "css",
        "scss",
        "sql",
        "rust",
        "rs",
        "markdown",
        "md",
        "dart",
        "elixir",
        "ex",
        "erlang",
        "clojure",
        "julia",
        "zig",
        "nim",
        "ocaml",
        "fsharp",
        "vb",
        "vbnet",
        "powershell",
        "ps1",
        "bat",
        "cmd",
        "makefile",
        "make",
        "dockerfile",
        "proto",
        "graphql",
        "gql",
        "vue",
        "svelte",
        "glsl",
        "hlsl",
        "asm",
        "nasm",
        "fortran",
        "pascal",
        "groovy",
        "gradle",
        "tex",
        "latex",
    )
)
"""Tags models use for languages outside the table: recognised (and dropped) on fences."""

_LSP_IDS: Final = {
    "python": "python",
    "lua": "lua",
    "javascript": "js",
    "javascriptreact": "js",
    "typescript": "ts",
    "typescriptreact": "ts",
    "c": "c-like",
    "cpp": "c-like",
    "objective-c": "c-like",
    "objective-cpp": "c-like",
    "cuda-cpp": "c-like",
    "java": "java",
    "csharp": "c#",
    "php": "php",
    "ruby": "ruby",
    "go": "go",
    "swift": "swift",
    "kotlin": "kotlin",
    "scala": "scala",
    "r": "r",
    "shellscript": "shell",
    "sh": "shell",
    "bash": "shell",
    "zsh": "shell",
    "perl": "perl",
    "haskell": "hs",
    "qml": "qml",
    "cmake": "cmake",
}
"""LSP ``languageId`` → language name, used when the file name says nothing."""

_MIME_BY_EXTENSION: Final = {
    "c": "text/x-csrc",
    "h": "text/x-chdr",
    "cpp": "text/x-c++src",
    "cc": "text/x-c++src",
    "cxx": "text/x-c++src",
    "c++": "text/x-c++src",
    "hpp": "text/x-c++hdr",
    "hh": "text/x-c++hdr",
    "hxx": "text/x-c++hdr",
    "m": "text/x-objcsrc",
    "mm": "text/x-objc++src",
    "py": "text/x-python",
    "pyi": "text/x-python",
    "js": "application/javascript",
    "mjs": "application/javascript",
    "jsx": "text/jsx",
    "ts": "application/typescript",
    "tsx": "text/tsx",
    "java": "text/x-java",
    "cs": "text/x-csharp",
    "php": "application/x-php",
    "rb": "application/x-ruby",
    "go": "text/x-go",
    "swift": "text/x-swift",
    "kt": "text/x-kotlin",
    "scala": "text/x-scala",
    "r": "text/x-r",
    "sh": "application/x-shellscript",
    "bash": "application/x-shellscript",
    "pl": "application/x-perl",
    "hs": "text/x-haskell",
    "lua": "text/x-lua",
    "qml": "text/x-qml",
    "rs": "text/rust",
    "pro": "application/vnd.qt.qmakeprofile",
    "pri": "application/vnd.qt.qmakeprofile",
    "cmake": "text/x-cmake",
    "json": "application/json",
    "toml": "application/toml",
    "yaml": "application/x-yaml",
    "yml": "application/x-yaml",
    "md": "text/markdown",
}


@functools.lru_cache(maxsize=256)
def mime_type(path: str, language_id: str = "") -> str:
    """Return the MIME type of a file, as the original's "File information" reports it."""
    name = os.path.basename(path)
    if name == "CMakeLists.txt":
        return "text/x-cmake"
    extension = os.path.splitext(name)[1][1:].lower()
    known = _MIME_BY_EXTENSION.get(extension)
    if known:
        return known
    if extension:
        guessed, _ = mimetypes.guess_type(name, strict=False)
        if guessed:
            return guessed
    if language_id in _MIME_BY_EXTENSION:
        return _MIME_BY_EXTENSION[language_id]
    return "text/plain"


class LanguageTable:
    """Built-in languages plus ``custom_languages``; lookups by file, LSP id or fence tag."""

    def __init__(self, custom: Iterable[CustomLanguage] = DEFAULT_CUSTOM_LANGUAGES) -> None:
        """Build the table; ``custom`` entries take precedence over built-in ones."""
        customs = tuple(
            Language(
                c.name,
                c.comment_prefix,
                frozenset(tag.lower() for tag in c.model_names),
                tuple(c.extensions),
            )
            for c in custom
        )
        self.languages: tuple[Language, ...] = customs + BUILTIN_LANGUAGES
        self._by_name: dict[str, Language] = {}
        self._by_file: dict[str, Language] = {}
        self._by_extension: dict[str, Language] = {}
        for language in reversed(self.languages):  # earlier entries win
            self._by_name[language.name] = language
            for entry in language.extensions:
                extension = entry[1:] if entry.startswith(".") else entry
                if "." in extension or extension[:1].isupper():
                    self._by_file[extension] = language
                else:
                    self._by_extension[extension.lower()] = language
        tags: set[str] = set(_EXTRA_FENCE_TAGS)
        for language in self.languages:
            tags.update(language.fence_tags)
            tags.add(language.name.lower())
        self.fence_tags: frozenset[str] = frozenset(tags)

    def by_name(self, name: str) -> Language | None:
        """Return the language called ``name`` (``c-like``, ``python``, …)."""
        return self._by_name.get(name)

    def for_path(self, path: str) -> Language | None:
        """Return the language of a file by its exact name, then its extension."""
        name = os.path.basename(path)
        exact = self._by_file.get(name)
        if exact is not None:
            return exact
        extension = os.path.splitext(name)[1][1:].lower()
        return self._by_extension.get(extension) if extension else None

    def detect(self, path: str, language_id: str = "") -> Language | None:
        """Return the language of a document from its path, else its LSP ``languageId``."""
        language = self.for_path(path) if path else None
        if language is None and language_id:
            name = _LSP_IDS.get(language_id.lower(), language_id.lower())
            language = self._by_name.get(name)
        return language

    def is_fence_tag(self, tag: str) -> bool:
        """Whether ``tag`` (the text after an opening fence) names a language."""
        return tag.strip().lower() in self.fence_tags
