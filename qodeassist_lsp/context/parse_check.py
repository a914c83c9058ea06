"""The whole-file parse check: a file must parse at least as well after a change as before.

A quick refactor and a chat edit block both change part of a file; whether the change broke
the file can only be judged on the whole file (a method dedented out of its class is valid code
on its own). ``FileParseCheck`` parses the text before and after the change and says ``broken``
when the change added syntax errors, so code that was already broken is not held against it:

- tree-sitter ``ERROR`` and ``MISSING`` nodes are counted over the whole file, before vs after
  (every language with an installed grammar, see ``syntax.py``);
- a Python file is also compiled with ``compile()``, which catches what tree-sitter's forgiving
  parser lets through (``IndentationError``, ``return`` outside a function, …). The compiler is
  the running Python's, so a file using newer syntax fails before and after and is not judged.

A language without a grammar is ``unchecked``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from qodeassist_lsp.context.syntax import SyntaxChecker, grammar_name
from qodeassist_lsp.core.events import ParseStatus

__all__ = ["FileParse", "FileParseCheck", "file_parse_check", "python_compile_error"]


@dataclass(frozen=True, slots=True)
class FileParse:
    """The verdict of one whole-file parse check, with a sentence when ``broken``."""

    status: ParseStatus
    reason: str = ""


class FileParseCheck:
    """Compares the parse of a whole file before and after a change."""

    def __init__(self, syntax: SyntaxChecker | None = None) -> None:
        """Create the check; ``syntax`` keeps its parsers across calls."""
        self.syntax = syntax or SyntaxChecker()

    def compare(
        self, before: str | None, after: str, *, language_id: str = "", path: str = ""
    ) -> FileParse:
        """Judge ``after`` against ``before`` (``None``: a new file, judged on its own)."""
        grammar = grammar_name(language_id, path)
        if grammar is None:
            return FileParse("unchecked")
        checked = False
        old = self.syntax.summarise(grammar, before) if before is not None else None
        new = self.syntax.summarise(grammar, after)
        if new is not None:
            checked = True
            old_errors = old.errors if old is not None else 0
            if new.errors > old_errors:
                state = "parsed" if old_errors == 0 else f"had {old_errors} syntax error(s)"
                return FileParse(
                    "broken",
                    f"the file {state} before and has {new.errors} syntax error(s) after the "
                    f"change ({grammar})",
                )
        if grammar == "python":
            checked = True
            name = path or "<file>"
            if before is None or python_compile_error(before, name) is None:
                error = python_compile_error(after, name)
                if error is not None:
                    return FileParse("broken", f"the file compiled before and not after: {error}")
        return FileParse("ok" if checked else "unchecked")


def file_parse_check() -> Callable[[Path, str | None, str], tuple[ParseStatus, str]]:
    """Return the check of chat edits (``tools.edits.ports.ParseCheck``): by file extension."""
    check = FileParseCheck()

    def judge(path: Path, before: str | None, after: str) -> tuple[ParseStatus, str]:
        verdict = check.compare(before, after, path=str(path))
        return verdict.status, verdict.reason

    return judge


def python_compile_error(text: str, filename: str = "<file>") -> str | None:
    """Return why Python cannot compile ``text`` (``IndentationError: … (line 3)``), or None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and such are not errors
            compile(text, filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        return f"{type(exc).__name__}: {exc.msg}{where}"
    except (ValueError, OverflowError, RecursionError, MemoryError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None
