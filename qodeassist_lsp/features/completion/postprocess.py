"""Model output → suggestion text: code fences, prose, echoes, stop rules, whitespace.

Order of the rules (behaviour §6.4 plus Continue's stream filters):

0. The whitespace or the half-typed word left out of the prompt (``healing``) comes off the
   start of the answer; an answer that does not start with that word is no answer.
1. ``output_handler``: ``raw`` keeps the text; ``auto`` processes it only when a line starts
   with a code fence; ``force`` always does. Processing keeps fenced lines verbatim, drops fence
   lines whose tag names a language (a tag that is not a language is code and is kept), and
   turns prose outside fences into comments of the file's language — or drops it with
   ``drop_prose``, and always in single-line mode, where a comment is never a useful
   suggestion. Leading and trailing blank lines of processed output go.
2. After the indentation of a fresh line, blank lines the answer starts with go, and so does
   the indentation of the code line after them: the model skipped a line, but the cursor's
   line is where the code goes. An echo of the cursor line's text before the cursor is
   removed from the first line.
3. Stop rules: a line that repeats a piece of four to forty characters three times in a row
   (``d?([0-9]+)d?([0-9]+)d?([0-9]+)``: a model looping within a line) ends after the first
   copy; single-line mode keeps the first line (or, when the cursor ends a line of code and
   the answer starts a new line, the next line of code, after at most two blank lines: the
   suggestion after a finished line), and the lines that close the brackets it leaves open
   (up to four, when nothing is right of the cursor and the line below is not indented deeper:
   a call or list the model breaks over lines is one statement, its first line alone does
   not parse). On a fresh line above a line indented deeper, which the cursor's line must
   open, a first line that opens no block goes on to the answer's line at the cursor's level
   that does (``_shaped``; at most four lines more, else the first line alone). A line (or a
   block of lines) that repeats the one right before it ends the suggestion before the repetition
   (the model is looping); so does a line
   equal to the first non-blank line below the cursor (the model reached code that already
   exists), a line indented less than the cursor's line (the model left the cursor's
   block; a line of closing brackets alone is kept and ends it), and a line after a
   ``return``, ``raise``, ``throw``, ``break`` or ``continue`` statement in the same block
   (code that never runs); the last two not for code out of fences, whose indentation starts
   anywhere.
4. A last line ending in the text right of the cursor loses it when that leaves the brackets
   balanced (the overlap of the first line is handled by ``overlap``). A multi-line
   answer whose last lines leave brackets open (the token cap or a stop rule cut a call in two)
   ends at the last line where they are all closed, when nothing is right of the cursor, and
   does not end on a line that needs more after it (a block header with no body, a line
   ending in an operator): the cap cut the statement it starts.
5. Trailing whitespace is chopped (which subsumes the original's "a single trailing newline is
   removed" rule); a blank result means no suggestion.

``should_stop`` applies the same rules to a partial stream so the upstream request can be
closed as soon as more output could not change the suggestion; ``looping`` tells, for every
streamed piece, whether the line being written loops, which ``should_stop`` then confirms.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Final

from qodeassist_lsp.config.settings import OutputHandler
from qodeassist_lsp.features.completion.healing import unheal, unheal_word

__all__ = [
    "PostprocessOptions",
    "Postprocessor",
    "Processed",
    "alternatives",
    "bracket_depth",
    "indent_of",
    "inside_block",
    "line_code",
]

_FENCE: Final = "```"
_INTRO: Final = re.compile(
    r"^(?:sure|certainly|okay|here|below|the following|i've|i have)\b", re.IGNORECASE
)
"""A first line that may be a chat model's introduction to a code fence still to come."""
_INTRO_SENTENCE: Final = re.compile(r"^[A-Za-z][^`]*\s[^`]*:$")
"""A sentence ending in a colon: an intro only where the answer starts a line, for mid-line it
is code (``bytes | None]:``, ``if x is None:``) and waiting for more lines only delays it."""
_INTRO_LOOKAHEAD: Final = 3
_OPENERS: Final = "([{"
_CLOSERS: Final = ")]}"
_MAX_BLOCK: Final = 8
"""The longest block of lines checked for an immediate repetition."""
_IN_LINE_LOOP: Final = re.compile(r"(.{4,40}?)\1\1")
"""A piece of a line written three times in a row (a loop, unless it is ``----``-like)."""
_MAX_BLANK_LINES: Final = 2
"""Blank lines a suggestion after a finished line may start with (two: PEP 8 between defs)."""
_JUMP: Final = re.compile(r"(?:return|raise|throw|break|continue)\b")
"""A statement after which the rest of its block never runs."""
_MAX_CONTINUED: Final = 4
"""Lines a single-line answer may add to close the brackets its first line opens."""
_QUOTES: Final = "\"'`"
_BLOCK_WORD: Final = re.compile(r"(?:^|\s)(?:then|do|else|repeat)$|\bfunction\b.*\)$")
"""A line ending a Lua (or JavaScript ``function (...)``) block's header."""
_HEADER: Final = re.compile(r"(?:(?:else\s+)?if|for|while|switch|with)\b.*\)$|else$|do$")
"""A C or JavaScript statement whose body may be the next line, without braces."""
_CONTINUES: Final = ("\\", ",", "=", "+", "-", "*", "/", "%", "&&", "||", "|", "&", "?", ".")
"""Line ends that leave a statement open."""
_LOOP_MIN_DISTINCT: Final = 3
"""Distinct non-space characters a looping piece needs: ``0, 0, 0, `` or ``=-=-`` is data."""


def _never_a_tag(tag: str) -> bool:
    return False


@dataclass(frozen=True, slots=True)
class PostprocessOptions:
    """Everything post-processing needs to know about the request."""

    output_handler: OutputHandler = "auto"
    drop_prose: bool = False
    comment_prefix: str = "//"
    single_line: bool = False
    next_line_at_end: bool = False
    """The cursor ends a line of code: a single-line answer that starts a new line keeps it."""
    line_before: str = ""
    """Text of the cursor line left of the cursor."""
    line_after: str = ""
    """Text of the cursor line right of the cursor."""
    next_line: str = ""
    """The first non-blank line below the cursor line."""
    is_fence_tag: Callable[[str], bool] = field(default=_never_a_tag)
    """Whether the first word after an opening fence names a language."""
    healed: str = ""
    """The spaces and tabs left out of the end of the prompt (``healing.heal_prefix``)."""
    healed_word: str = ""
    """The half-typed word left out of the end of the prompt (``healing.heal_word``)."""


@dataclass(frozen=True, slots=True)
class Processed:
    """A suggestion and whether a stop rule ended it (more output could not change it)."""

    text: str
    cut: bool = False


class Postprocessor:
    """Applies the rules above for one request."""

    def __init__(self, options: PostprocessOptions) -> None:
        """Prepare post-processing for one request's ``options``."""
        self.options = options

    # ----------------------------------------------------------------------------------------
    def process(self, raw: str, *, final: bool = True) -> Processed:
        """Post-process ``raw``; with ``final=False`` only its complete lines count."""
        raw = self.answer(raw.replace("\r\n", "\n"))
        lines = raw.split("\n")
        looped = _cut_loop(lines)
        if not final and not looped:
            lines.pop()  # the unterminated tail may still grow
        fenced = self._fenced(lines)
        if fenced:
            lines = self._unfence(lines)
        before = self.options.line_before
        if before and not before.strip() and lines and not lines[0].strip():
            while lines and not lines[0].strip():
                del lines[0]
            if not lines:
                return Processed("", False)  # only blank lines so far: the code is still to come
            lines[0] = lines[0].lstrip(" \t")  # the cursor is after the user's indentation
        if lines:
            lines[0] = self._drop_echo(lines[0])
        lines, cut = self._apply_stops(lines, complete=not final, continued=not fenced)
        lines = self._trim_suffix_tail(lines)
        lines = self._whole_statements(lines)
        lines = [line.rstrip() for line in lines]
        while lines and not lines[-1]:
            lines.pop()
        return Processed("\n".join(lines), cut or looped)

    def answer(self, raw: str) -> str:
        """Return the model's text as it continues the cursor line (the healing undone)."""
        if self.options.healed_word:
            return unheal_word(raw, self.options.healed_word)
        return unheal(raw, self.options.healed)

    def looping(self, raw: str) -> bool:
        """Whether the last line of the stream ``raw`` so far loops (cheap: one line)."""
        return _loop_end(raw[raw.rfind("\n") + 1 :]) is not None

    def should_stop(self, raw: str) -> bool:
        """Whether the stream ``raw`` so far already decides the suggestion."""
        if "\n" not in raw and not self.looping(raw):
            return False
        if not self.process(raw, final=False).cut:
            return False
        if self.options.output_handler != "auto" or _FENCE in raw:
            return True
        # A chat model may open with prose and a fence only later: wait for a few lines.
        complete = raw[: raw.rfind("\n")].split("\n")
        first = next((line.strip() for line in complete if line.strip()), "")
        intro = _INTRO.search(first) or (
            not self.options.line_before.strip() and _INTRO_SENTENCE.search(first)
        )
        return len(complete) >= _INTRO_LOOKAHEAD or not intro

    # ----------------------------------------------------------------------------------------
    def _fenced(self, lines: list[str]) -> bool:
        handler = self.options.output_handler
        if handler == "raw":
            return False
        if handler == "force":
            return True
        return any(line.lstrip().startswith(_FENCE) for line in lines)

    def _unfence(self, lines: list[str]) -> list[str]:
        opts = self.options
        drop = opts.drop_prose or opts.single_line
        out: list[str] = []
        inside = False
        for line in lines:
            stripped = line.strip()
            if stripped.startswith(_FENCE):
                if not inside:
                    rest = stripped[len(_FENCE) :].strip()
                    word = rest.split(maxsplit=1)[0] if rest else ""
                    if rest and not opts.is_fence_tag(word):
                        out.append(rest)  # not a language: the model put code on the fence
                inside = not inside
                continue
            if inside:
                out.append(line)
            elif not stripped:
                out.append("")
            elif not drop:
                out.append(f"{opts.comment_prefix} {stripped}")
        start = 0
        while start < len(out) and not out[start].strip():
            start += 1
        end = len(out)
        while end > start and not out[end - 1].strip():
            end -= 1
        return out[start:end]

    def _drop_echo(self, first: str) -> str:
        before = self.options.line_before
        echoed = before.strip()
        if len(echoed) < 3:
            return first
        body = first.lstrip()
        if not body.startswith(echoed):
            return first
        rest = body[len(echoed) :]
        return rest.lstrip() if before[-1:].isspace() else rest

    def _apply_stops(
        self, lines: list[str], *, complete: bool, continued: bool
    ) -> tuple[list[str], bool]:
        opts = self.options
        if opts.single_line:
            if opts.next_line_at_end and lines and not lines[0].strip():
                return self._line_after_end(lines, complete=complete)
            if not lines:
                return lines, False
            shaped = self._shaped(lines, complete=complete)
            if shaped is not None:
                return shaped
            return self._statement(lines, complete=complete)
        below = opts.next_line.rstrip()
        before = opts.line_before
        level = len(before) if not before.strip() else indent_of(before)
        jumped: int | None = None  # the indentation of a return-like line just before
        for index, line in enumerate(lines):
            repeat = _repeat_start(lines, index)
            if repeat is not None:
                return lines[:repeat], True
            if index >= 1 and below.strip() and line.rstrip() == below:
                return lines[:index], True
            if continued and index >= 1 and line.strip() and indent_of(line) < level:
                # The model left the cursor's block: what follows belongs to code that exists.
                closing = not line.strip().strip(_CLOSERS + ";,")
                return lines[: index + 1 if closing else index], True
            if not line.strip():
                continue
            if continued and jumped is not None and indent_of(line) >= jumped:
                # Code after a return in the same block never runs: the model is looping or
                # writing the next function's body (issue 46.3: HumanEval/59's ``return x``,
                # ``"""``, ``return x``).
                return lines[:index], True
            jumped = None
            if _JUMP.match(line.strip()) and _ends_statement(line):
                jumped = level if index == 0 else indent_of(line)
        return lines, False

    def _statement(self, lines: list[str], *, complete: bool) -> tuple[list[str], bool]:
        """Keep the first line, and the lines that close the brackets it opens (single-line).

        Only the answer's own brackets count: one the user left open before the cursor (the
        arguments of a call written a line each) is theirs to close.

        A streamed answer whose brackets are still open is not cut yet; a final one that never
        closes them within `_MAX_CONTINUED` lines is its first line alone, as before.
        """
        opts = self.options
        before = opts.line_before
        level = len(before) if not before.strip() else indent_of(before)
        depth = 0
        # The line below indented deeper: the document already goes on with the statement
        # (``items = [`` above its items).
        if not opts.line_after.strip() and indent_of(opts.next_line) <= level:
            depth = bracket_depth(lines[0], opts.comment_prefix)  # the answer's own brackets
        if depth <= 0:
            return lines[:1], complete or len(lines) > 1
        for index in range(1, min(len(lines), _MAX_CONTINUED + 1)):
            depth += bracket_depth(lines[index], opts.comment_prefix)
            if depth <= 0:
                return lines[: index + 1], complete or len(lines) > index + 1
        if len(lines) > _MAX_CONTINUED or not complete:
            return lines[:1], len(lines) > 1
        return lines[:1], False  # the stream may still close them

    def _shaped(self, lines: list[str], *, complete: bool) -> tuple[list[str], bool] | None:
        """Go on past a first line that cannot stand above the deeper line below (single-line).

        On a fresh line, the line below is indented deeper than the cursor, so the cursor's
        line must open a block (``for x in xs:``, ``if (x)``, ``while x do``) or leave a
        statement open: a first line that does not is followed by the answer's lines up to one
        at the cursor's level that does (at most `_MAX_CONTINUED` more). None where the first
        line fits, the line below is not known, or no such line comes: the first line alone.
        """
        opts = self.options
        below, before = opts.next_line, opts.line_before
        level = len(before)
        prefix = opts.comment_prefix
        if before.strip() or opts.line_after.strip() or not below.strip():
            return None  # mid-line, the user's own line is being written: theirs to end
        if indent_of(below) <= level:
            return None
        if not lines[0].strip() or _opens(before + lines[0], prefix):
            return None
        for index in range(1, min(len(lines), _MAX_CONTINUED + 1)):
            line = lines[index]
            if not line.strip():
                continue
            if indent_of(line) != level or _JUMP.match(line.strip()):
                return None
            if _opens(line, prefix):
                return lines[: index + 1], True
        if complete and len(lines) <= _MAX_CONTINUED:
            return lines[:1], False  # the line that opens the block may still come
        return None

    def _whole_statements(self, lines: list[str]) -> list[str]:
        """Drop a multi-line answer's last lines while they leave brackets open (cut mid-call).

        Only down to the last line end where every bracket the answer opened is closed, and
        never the first line; not when text right of the cursor may close them. Then the last
        lines go while they need more after them (a block header with no body, a line ending
        in an operator): the token cap cut the statement they start.
        """
        opts = self.options
        if len(lines) < 2 or opts.single_line or opts.line_after.strip():
            return lines
        depth = bracket_depth(lines[0], opts.comment_prefix)
        whole = 1 if depth <= 0 else 0
        for index in range(1, len(lines)):
            depth += bracket_depth(lines[index], opts.comment_prefix)
            if depth <= 0:
                whole = index + 1
        if not whole:
            return lines
        kept = lines[:whole]
        while len(kept) > 1 and (not kept[-1].strip() or _opens(kept[-1], opts.comment_prefix)):
            kept.pop()
        return kept

    def _line_after_end(self, lines: list[str], *, complete: bool) -> tuple[list[str], bool]:
        """Keep the line of code the answer starts after a finished line (and blank lines).

        Up to `_MAX_BLANK_LINES` blank lines before it are kept (the code goes on after a
        paragraph break); none if that line already follows in the document.
        """
        code = next((i for i in range(1, len(lines)) if lines[i].strip()), None)
        if code is None:  # a streamed answer's line of code is still to come
            return [], not complete or len(lines) - 1 > _MAX_BLANK_LINES
        if code - 1 > _MAX_BLANK_LINES or lines[code].rstrip() == self.options.next_line.rstrip():
            return [], True
        return lines[: code + 1], complete or len(lines) > code + 1

    def _trim_suffix_tail(self, lines: list[str]) -> list[str]:
        tail = self.options.line_after.strip()
        if len(lines) < 2 or not tail:
            return lines
        last = lines[-1].rstrip()
        if not last.endswith(tail):
            return lines
        text = "\n".join(lines)
        opened = sum(text.count(c) for c in _OPENERS)
        closed = sum(text.count(c) for c in _CLOSERS)
        removed = sum(tail.count(c) for c in _CLOSERS) - sum(tail.count(c) for c in _OPENERS)
        # Only when the model closed brackets it never opened: the text right of the cursor
        # already closes them.
        if removed <= 0 or closed - opened < removed:
            return lines
        return [*lines[:-1], last[: len(last) - len(tail)]]


def _repeat_start(lines: list[str], index: int) -> int | None:
    """Where a repetition ending at ``lines[index]`` starts, if it is one (else None).

    A repetition is a line equal to the line before it, or a block of up to ``_MAX_BLOCK``
    lines equal to the block right before it: a model looping, not code (identical
    consecutive statements are rare; a line of closing brackets alone is not counted).
    """
    for size in range(1, min(_MAX_BLOCK, (index + 1) // 2) + 1):
        block = lines[index - size + 1 : index + 1]
        if block == lines[index - 2 * size + 1 : index - size + 1] and any(
            line.strip().strip(_CLOSERS + ";,") for line in block
        ):
            return index - size + 1
    return None


def _loop_end(line: str) -> int | None:
    """Where the first copy of a piece that ``line`` repeats three times ends (else None).

    Any rotation of the piece is a copy; the end chosen is the first that leaves the line's
    brackets balanced (``(?u<10)d?([0-9]+)``, not ``(?u<10)d?([0-9]+``), if one does.
    """
    for match in _IN_LINE_LOOP.finditer(line):
        piece = match.group(1)
        if len(set(piece) - {" ", "\t"}) < _LOOP_MIN_DISTINCT:
            continue
        first = match.start() + len(piece)
        for end in range(first, first + len(piece)):
            if _balanced(line[:end]):
                return end
        return first
    return None


def _ends_statement(line: str) -> bool:
    """Whether ``line`` is a whole statement: its brackets closed, no continuation."""
    return _balanced(line) and not line.rstrip().endswith(
        ("\\", ",", "+", "-", "*", "/", "&&", "||")
    )


def _scan(text: str, comment_prefix: str) -> Iterator[tuple[int, str, bool]]:
    """Each character of ``text`` before a trailing comment: its index, it, whether quoted.

    A string still open at the end of ``text`` ends there (a line's quotes are its own).
    """
    quote = ""
    index = 0
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
            yield index, char, True
        elif char in _QUOTES:
            quote = char
            yield index, char, True
        elif comment_prefix and text.startswith(comment_prefix, index):
            return
        else:
            yield index, char, False
        index += 1


def bracket_depth(text: str, comment_prefix: str) -> int:
    """Brackets ``text`` opens minus those it closes, outside strings and a trailing comment."""
    return sum(
        (char in _OPENERS) - (char in _CLOSERS)
        for _, char, quoted in _scan(text, comment_prefix)
        if not quoted
    )


def line_code(text: str, comment_prefix: str) -> str:
    """``text`` without its trailing comment (outside strings), right-stripped."""
    end = 0
    for index, _, _ in _scan(text, comment_prefix):
        end = index + 1
    return text[:end].rstrip()


def _opens(text: str, comment_prefix: str) -> bool:
    """Whether a line indented deeper may follow ``text``: it opens a block or goes on."""
    code = line_code(text, comment_prefix)
    return (
        code.endswith((":", "{", *_CONTINUES))
        or _BLOCK_WORD.search(code) is not None
        or bracket_depth(code, comment_prefix) > 0
        or _HEADER.match(code.strip()) is not None
    )


def _balanced(text: str) -> bool:
    return all(text.count(o) == text.count(c) for o, c in zip(_OPENERS, _CLOSERS, strict=True))


def _cut_loop(lines: list[str]) -> bool:
    """Cut ``lines`` (in place) after the first copy of the first in-line loop; True if cut."""
    for index, line in enumerate(lines):
        end = _loop_end(line)
        if end is not None:
            lines[index:] = [line[:end]]
            return True
    return False


def indent_of(line: str) -> int:
    """Return the width of ``line``'s leading spaces and tabs."""
    return len(line) - len(line.lstrip(" \t"))


def inside_block(line_before: str, line_after: str, line_below: str) -> bool:
    """Whether the cursor is in the middle of a block, where one line is the suggestion.

    So it is when nothing but closing characters follows the cursor on its line and the very
    next line is code indented at least as deep as the cursor's line (its indentation, or the
    cursor itself on a line of only indentation): the code goes on right below, so whatever
    the model writes after its first line would be put in front of existing code (Copilot and
    Cody suggest one line there too). A blank line or a dedented line below (the end of a
    block, a closing ``}``) leaves multi-line suggestions alone.
    """
    if line_after.strip(_CLOSERS + ";,\"'` \t") or not line_below.strip():
        return False
    if not line_below.strip().strip(_CLOSERS + ";,"):
        return False  # a line of closing brackets ends the block
    cursor = len(line_before) if not line_before.strip() else indent_of(line_before)
    return indent_of(line_below) >= cursor


def alternatives(text: str, limit: int) -> list[str]:
    """Return up to ``limit`` distinct suggestions cut from ``text``: whole, first line, block."""
    found: list[str] = []
    candidates = [text]
    if "\n" in text:
        candidates.append(text.split("\n", 1)[0])
        paragraph = text.split("\n\n", 1)[0].rstrip()
        candidates.insert(1, paragraph)
    for candidate in candidates:
        if candidate.strip() and candidate not in found:
            found.append(candidate)
    return found[: max(limit, 1)]
