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
- ``fence``: the answer opens a Markdown code fence and never closes it (cut off mid-answer);
- ``syntax``: the whole file with the answer in place parses worse than it did
  (``context/parse_check.py``: tree-sitter errors counted over the file, and for Python
  ``compile()``, which catches an ``IndentationError``); a language without a grammar skips it;
- ``placement`` (Python): the answer has statements left of where the selection's were, so code
  of a class or function body would land outside it (a method answered with a top-level
  ``def``);
- ``program`` (Python): a selection of definitions answered with code that runs at module level
  as well (``# Example usage:`` and a ``print(…)``): a new program, not a rewrite;
- ``dangling`` (Python): the answer uses a name that the file bound before (a parameter, a
  variable, an import) and no longer binds where it is used — ``w.wrap(**kwargs)`` after
  ``**kwargs`` was dropped from the signature. Names the file never bound (a missing
  ``import math``) are left to the user's linter;
- ``definitions``: a name the selection defined (function, class, method, struct …, for Python
  also module- and class-level assignments; qualified, ``Queue._put``) is no longer defined in
  the file, or a definition outside the selection is gone or moved (``Queue._get`` became a
  local of the new code). Names local to a function may come and go. An instruction that asks
  for such a change (it says rename, remove, delete, inline, extract, move, merge, split,
  replace, convert, combine, drop or consolidate) skips this check and ``dangling`` (the
  callers of a renamed function are left behind on purpose).
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import Final, Literal

from qodeassist_lsp.context.parse_check import FileParseCheck
from qodeassist_lsp.context.syntax import SyntaxChecker, grammar_name
from qodeassist_lsp.features.refactor import python_checks

__all__ = ["RESTRUCTURING", "ResultGuard", "Verdict", "VerdictKind"]

VerdictKind = Literal[
    "prose",
    "repetition",
    "size",
    "fence",
    "syntax",
    "placement",
    "program",
    "dangling",
    "definitions",
]

RESTRUCTURING: Final = re.compile(
    r"\b(?:renam|remov|delet|inlin|extract|mov|merg|split|replac|convert|combin|drop|consolidat)"
    r"(?:e|es|ed|ing|s|ped|ping|ting|al|als|ion|ions)?\b",
    re.IGNORECASE,
)
"""Instruction words that ask for definitions to change: their check is skipped."""
_FENCE_LINE: Final = re.compile(r"^\s*```", re.MULTILINE)

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
        self._files = FileParseCheck(self._syntax)

    def check(
        self,
        text: str,
        start: int,
        end: int,
        new_text: str,
        *,
        language_id: str = "",
        path: str = "",
        instruction: str = "",
    ) -> Verdict | None:
        """Return why ``new_text`` must not replace ``text[start:end]``, or ``None``."""
        selection = text[start:end]
        for verdict in (
            _prose(selection, new_text),
            _size(selection, new_text),
            _repetition(selection, new_text),
            _fence(selection, new_text),
        ):
            if verdict is not None:
                return verdict
        spliced = text[:start] + new_text + text[end:]
        parsed = self._files.compare(text, spliced, language_id=language_id, path=path)
        if parsed.status == "broken":
            return Verdict("syntax", parsed.reason)
        grammar = grammar_name(language_id, path)
        if grammar is None:
            return None
        new_end = start + len(new_text)
        if grammar == "python":
            checks: tuple[tuple[VerdictKind, str | None], ...] = (
                ("placement", python_checks.placement(text, start, end, spliced, new_end)),
                ("program", python_checks.program(text, start, end, spliced, new_end)),
            )
            for kind, reason in checks:
                if reason is not None:
                    return Verdict(kind, reason)
        if RESTRUCTURING.search(instruction):
            return None  # renaming or removing leaves callers behind: the user asked for it
        if grammar == "python":
            dangling = python_checks.dangling(text, spliced)
            if dangling:
                return Verdict(
                    "dangling",
                    f"the answer uses {_names(dangling)}, which the file defined before and no "
                    "longer defines there",
                )
        return self._definitions(grammar, text, start, end, spliced)

    def _definitions(
        self, grammar: str, text: str, start: int, end: int, spliced: str
    ) -> Verdict | None:
        before = self._syntax.definitions(grammar, text)
        after = self._syntax.definitions(grammar, spliced)
        if before is None or after is None:
            return None
        first, last = _byte_offset(text, start), _byte_offset(text, end)
        kept = {d.name for d in after if not d.local}
        selected = [d.name for d in before if not d.local and first <= d.start < last]
        lost = [name for name in dict.fromkeys(selected) if name not in kept]
        if lost:
            return Verdict(
                "definitions",
                f"the selection defines {_names(lost)} and the file no longer would (say "
                "rename, remove, inline, … in the instruction to allow that)",
            )
        around = [d.name for d in before if not d.local and not first <= d.start < last]
        gone = [name for name in dict.fromkeys(around) if name not in kept]
        if gone:
            return Verdict(
                "definitions",
                f"{_names(gone)}, outside the selection, would no longer be defined where it "
                "was (the answer changes the code around it)",
            )
        return None


def _byte_offset(text: str, offset: int) -> int:
    return len(text[:offset].encode("utf-8", "surrogatepass"))


def _names(names: list[str]) -> str:
    shown = ", ".join(f"`{name}`" for name in names[:3])
    return shown + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _fence(selection: str, new_text: str) -> Verdict | None:
    # An odd number of fence lines leaves one open; a selection with one open already may stay so.
    if len(_FENCE_LINE.findall(new_text)) % 2 and not len(_FENCE_LINE.findall(selection)) % 2:
        return Verdict(
            "fence", "the answer opens a code fence (```) and never closes it: it was cut off"
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
