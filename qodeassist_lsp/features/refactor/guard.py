"""``ResultGuard``: check a refactor answer before it may replace the user's code.

A small model says odd things — a list of numbers instead of a function, a paragraph about the
code, the same line a hundred times — and a refactor applies its answer as one undo step. The
guard compares the answer with the selection it would replace and returns a ``Verdict`` saying
why it must not be applied (or ``None``). Every check compares with the selection, so code that
was already repetitive, prose, or broken is not held against the answer:

- ``prose``: most lines read as sentences, where the selection was code;
- ``repetition``: the answer compresses far better than the selection (digits folded, so a
  counting run ``1.0, 2.0, … 87.0`` counts as one line repeated);
- ``size``: most of a sizeable selection is gone, or the answer is many times its size;
- ``definitions``: the selection defines functions or classes and the answer defines none;
- ``syntax``: the file parsed before and the answer spliced into it does not (tree-sitter; a
  language without a grammar skips this check). The whole file is parsed, so a fragment
  selection (an ``if`` body, half a class) is judged in its context.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import Final, Literal

from qodeassist_lsp.context.syntax import SyntaxChecker, grammar_name

__all__ = ["ResultGuard", "Verdict", "VerdictKind"]

VerdictKind = Literal["prose", "repetition", "size", "definitions", "syntax"]

_MIN_REPETITION_CHARS: Final = 200
"""Shorter answers are not judged for repetition: a few similar lines are normal code."""
_REPETITION_RATIO: Final = 0.12
"""zlib size / text size below which an answer is runaway repetition (code: 0.3–0.6)."""
_MIN_SHRINK_CHARS: Final = 200
"""Selections shorter than this may shrink to anything (a one-liner can become ``x``)."""
_SHRINK_FACTOR: Final = 5
_GROWTH_FACTOR: Final = 10
_GROWTH_SLACK: Final = 2000
"""An answer may add this much whatever the selection's size ("write tests" adds plenty)."""
_PROSE_SHARE: Final = 0.5
_COMMENT_PREFIXES: Final = ("#", "//", "/*", "*", "--", ";", "%", "'", "<!--", '"""', "'''")
_SENTENCE: Final = re.compile(r"^[A-Z][a-z']*(?:[ ,]+[A-Za-z'`-]+){3,}[^(){}\[\];=<>]*[.!?:]?$")
_CODE_CHARS: Final = frozenset("(){}[];=<>")


@dataclass(frozen=True, slots=True)
class Verdict:
    """Why an answer was refused: a kind for programs and a sentence for people."""

    kind: VerdictKind
    reason: str


class ResultGuard:
    """Judges refactor answers against the selection they would replace."""

    def __init__(self, syntax: SyntaxChecker | None = None) -> None:
        """Create the guard; ``syntax`` parses (one checker keeps its parsers across calls)."""
        self._syntax = syntax or SyntaxChecker()

    def check(
        self,
        text: str,
        start: int,
        end: int,
        new_text: str,
        *,
        language_id: str = "",
        path: str = "",
    ) -> Verdict | None:
        """Return why ``new_text`` must not replace ``text[start:end]``, or ``None``."""
        selection = text[start:end]
        for verdict in (
            _prose(selection, new_text),
            _size(selection, new_text),
            _repetition(selection, new_text),
        ):
            if verdict is not None:
                return verdict
        grammar = grammar_name(language_id, path)
        if grammar is None:
            return None
        return self._structure(grammar, text, selection, text[:start] + new_text + text[end:])

    def _structure(self, grammar: str, text: str, selection: str, spliced: str) -> Verdict | None:
        before = self._syntax.summarise(grammar, text)
        after = self._syntax.summarise(grammar, spliced)
        if before is None or after is None:
            return None
        if after.errors > before.errors:
            state = "parsed" if before.errors == 0 else f"had {before.errors} syntax error(s)"
            return Verdict(
                "syntax",
                f"the file {state} before and has {after.errors} syntax error(s) with the "
                f"result ({grammar})",
            )
        selected = self._syntax.summarise(grammar, selection)
        lost = before.definitions - after.definitions
        if selected is not None and selected.definitions and lost >= selected.definitions:
            return Verdict(
                "definitions",
                f"the selection defines {selected.definitions} function(s) or class(es) and "
                "the result none",
            )
        return None


def _prose_share(text: str) -> float:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return 0.0
    sentences = sum(
        1
        for line in lines
        if not line.startswith(_COMMENT_PREFIXES)
        and _SENTENCE.match(line)
        and not _CODE_CHARS.intersection(line)
    )
    return sentences / len(lines)


def _prose(selection: str, new_text: str) -> Verdict | None:
    share = _prose_share(new_text)
    if share >= _PROSE_SHARE and _prose_share(selection) < _PROSE_SHARE:
        return Verdict(
            "prose", f"{share:.0%} of the result's lines are prose, not code or comments"
        )
    return None


def _compression(text: str) -> float:
    folded = re.sub(r"\s+", " ", re.sub(r"\d+", "0", text)).encode("utf-8", "surrogatepass")
    return len(zlib.compress(folded, 9)) / max(1, len(folded))


def _repetition(selection: str, new_text: str) -> Verdict | None:
    if len(new_text) < _MIN_REPETITION_CHARS:
        return None
    ratio = _compression(new_text)
    if ratio >= _REPETITION_RATIO:
        return None
    if len(selection) >= _MIN_REPETITION_CHARS and _compression(selection) < 2 * ratio:
        return None  # the selection was itself a table or a run of similar lines
    return Verdict(
        "repetition",
        f"the result repeats itself ({len(new_text)} characters that compress to {ratio:.0%})",
    )


def _size(selection: str, new_text: str) -> Verdict | None:
    old = len(selection.strip())
    new = len(new_text.strip())
    if old >= _MIN_SHRINK_CHARS and new * _SHRINK_FACTOR < old:
        return Verdict("size", f"the result has {new} characters where the selection had {old}")
    if old and new > old * _GROWTH_FACTOR and new - old > _GROWTH_SLACK:
        return Verdict(
            "size", f"the result has {new} characters, {new // old}× the selection's {old}"
        )
    return None
