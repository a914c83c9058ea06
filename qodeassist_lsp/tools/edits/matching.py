"""Find where an edit block goes: exactly, then ignoring whitespace, then fuzzily (rapidfuzz).

1. **Exact**: the search text occurs once in the file (twice or more is ambiguous).
2. **Whitespace**: the search lines equal a run of file lines once runs of spaces and tabs are
   collapsed and line ends trimmed (a model that lost or changed indentation). The replacement
   is re-indented by the difference between the file's and the block's indentation.
3. **Fuzzy**: the best run of file lines (as many lines as the block, or one more or fewer)
   whose whitespace-collapsed text is at least `FUZZY_THRESHOLD` % similar to the block's
   (rapidfuzz ``ratio``, normalised Indel similarity). One changed token in a five-line block
   scores about 96, a different function of the same shape below 80; the tests pin both.
   A second run that does not overlap the best and scores within `AMBIGUITY_MARGIN` of it makes
   the block ambiguous rather than a guess.

No match, or more than one, is an `EditRefused` naming the block, the closest lines and how
similar they were, so the model can read the file again and retry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from qodeassist_lsp.tools.edits.blocks import EditBlock, EditRefused

FUZZY_THRESHOLD = 90.0
"""Lowest similarity (0-100) a fuzzy match may have (one changed line of a short block passes)."""
AMBIGUITY_MARGIN = 2.0
"""A second, separate candidate this close to the best makes the block ambiguous."""
SHOWN_LINES = 8
"""Lines of the closest candidate quoted in a no-match error."""

MatchKind = Literal["exact", "whitespace", "fuzzy", "append"]


@dataclass(frozen=True, slots=True)
class Match:
    """Where a block goes: ``text[start:end]`` becomes ``replacement``."""

    start: int
    end: int
    replacement: str
    kind: MatchKind
    score: float = 100.0


@dataclass(frozen=True)
class Applied:
    """The text after every block, and how each block matched (for the model and the user)."""

    text: str
    matches: list[Match] = field(default_factory=list)

    def notes(self) -> list[str]:
        """Return one line per block that did not match exactly."""
        notes = []
        for number, match in enumerate(self.matches, start=1):
            if match.kind == "whitespace":
                notes.append(f"block {number} matched ignoring whitespace")
            elif match.kind == "fuzzy":
                notes.append(f"block {number} matched fuzzily ({match.score:.0f}% similar)")
            elif match.kind == "append":
                notes.append(f"block {number} (empty search) appended at the end")
        return notes


def apply_blocks(text: str, blocks: Sequence[EditBlock], name: str) -> Applied:
    """Apply ``blocks`` in order to ``text`` (the file ``name``); raise `EditRefused`."""
    crlf = "\r\n" in text and "\n" not in text.replace("\r\n", "")
    work = text.replace("\r\n", "\n") if crlf else text
    matches = []
    for number, block in enumerate(blocks, start=1):
        match = locate(work, block, f"edit block {number} of {len(blocks)}", name)
        work = work[: match.start] + match.replacement + work[match.end :]
        matches.append(match)
    result = work.replace("\n", "\r\n") if crlf else work
    if result == text:
        raise EditRefused(f"the edit blocks leave {name} unchanged; nothing to propose")
    return Applied(result, matches)


def locate(text: str, block: EditBlock, label: str, name: str) -> Match:
    """Return where ``block`` goes in ``text``; ``label`` and ``name`` word the errors."""
    if not block.search.strip():
        gap = "" if not text or text.endswith("\n") else "\n"
        return Match(len(text), len(text), gap + block.replace, "append")
    exact = _occurrences(text, block.search)
    if len(exact) == 1:
        start = exact[0]
        return Match(start, start + len(block.search), block.replace, "exact")
    if len(exact) > 1:
        where = ", ".join(_span(text, s, s + len(block.search)) for s in exact[:5])
        raise EditRefused(
            f"{label} matches {name} in {len(exact)} places (lines {where}); include more "
            'surrounding lines in "search" so it matches exactly one place'
        )
    return _by_lines(text, block, label, name)


def _occurrences(text: str, search: str) -> list[int]:
    found, at = [], text.find(search)
    while at >= 0:
        found.append(at)
        at = text.find(search, at + 1)
    return found


def _squash(line: str) -> str:
    return " ".join(line.split())


@dataclass(frozen=True, slots=True)
class _Candidate:
    first: int
    count: int
    score: float

    def overlaps(self, other: _Candidate) -> bool:
        return self.first < other.first + other.count and other.first < self.first + self.count


class _Lines:
    """The file split into lines, with each line's offset and whitespace-collapsed form."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.starts = []
        offset = 0
        for line in self.lines:
            self.starts.append(offset)
            offset += len(line) + 1
        self.squashed = [_squash(line) for line in self.lines]

    def span(self, first: int, count: int) -> tuple[int, int]:
        last = first + count - 1
        return self.starts[first], self.starts[last] + len(self.lines[last])

    def joined(self, first: int, count: int) -> str:
        return "\n".join(self.squashed[first : first + count])


def _by_lines(text: str, block: EditBlock, label: str, name: str) -> Match:
    search, replace = _trim_like(block.search, block.replace)
    wanted = [_squash(line) for line in search.split("\n")]
    lines = _Lines(text)
    count = len(wanted)
    same = [
        first
        for first in range(len(lines.lines) - count + 1)
        if lines.squashed[first : first + count] == wanted
    ]
    if len(same) > 1:
        where = ", ".join(_line_span(first, count) for first in same[:5])
        raise EditRefused(
            f"{label} matches {name} in {len(same)} places when whitespace is ignored (lines "
            f'{where}); include more surrounding lines in "search" so it matches one place'
        )
    if same:
        return _line_match(lines, search, replace, _Candidate(same[0], count, 100.0), "whitespace")
    target = "\n".join(wanted)
    candidates = _scored(lines, target, count)
    if not candidates:
        raise EditRefused(f"{label}: {name} is empty, so the search text matches nothing")
    best = max(candidates, key=lambda c: (c.score, c.count == count))
    if best.score < FUZZY_THRESHOLD:
        raise EditRefused(_no_match(lines, best, label, name))
    rivals = [
        c
        for c in candidates
        if not c.overlaps(best) and c.score >= max(best.score - AMBIGUITY_MARGIN, FUZZY_THRESHOLD)
    ]
    if rivals:
        rival = max(rivals, key=lambda c: c.score)
        raise EditRefused(
            f"{label} is ambiguous in {name}: lines {_line_span(best.first, best.count)} "
            f"({best.score:.0f}% similar) and lines {_line_span(rival.first, rival.count)} "
            f'({rival.score:.0f}%) both nearly match; copy the exact current lines into "search"'
        )
    return _line_match(lines, search, replace, best, "fuzzy")


def _scored(lines: _Lines, target: str, count: int) -> list[_Candidate]:
    # Imported on first use, in the worker thread matching runs in: rapidfuzz took 80-120 ms
    # to import, measured, which the server's first reload would otherwise spend on the loop.
    from rapidfuzz import fuzz

    total = len(lines.lines)
    sizes = sorted({size for size in (count - 1, count, count + 1) if 1 <= size <= total})
    return [
        _Candidate(first, size, fuzz.ratio(lines.joined(first, size), target))
        for size in sizes
        for first in range(total - size + 1)
    ]


def _trim_like(search: str, replace: str) -> tuple[str, str]:
    """Drop the blank lines around ``search``, and as many line breaks around ``replace``."""
    lead = len(search) - len(search.lstrip("\n"))
    trail = len(search) - len(search.rstrip("\n"))
    trimmed = search.strip("\n")
    for _ in range(lead):
        replace = replace.removeprefix("\n")
    for _ in range(trail):
        replace = replace.removesuffix("\n")
    return trimmed, replace


def _indent(lines: Sequence[str]) -> str:
    for line in lines:
        if line.strip():
            return line[: len(line) - len(line.lstrip())]
    return ""


def _reindent(replace: str, found: Sequence[str], search: str) -> str:
    """Move ``replace`` by the indentation the file's lines have over the block's."""
    have, given = _indent(found), _indent(search.split("\n"))
    if have == given:
        return replace
    moved = [
        have + line[len(given) :] if line.strip() and line.startswith(given) else line
        for line in replace.split("\n")
    ]
    return "\n".join(moved)


def _line_match(
    lines: _Lines, search: str, replace: str, candidate: _Candidate, kind: MatchKind
) -> Match:
    start, end = lines.span(candidate.first, candidate.count)
    found = lines.lines[candidate.first : candidate.first + candidate.count]
    replacement = _reindent(replace, found, search)
    if not replacement:  # removing whole lines removes their line break too
        text_end = lines.starts[-1] + len(lines.lines[-1])
        if end < text_end:
            end += 1
        elif start > 0:
            start -= 1
    return Match(start, end, replacement, kind, candidate.score)


def _no_match(lines: _Lines, best: _Candidate, label: str, name: str) -> str:
    shown = lines.lines[best.first : best.first + min(best.count, SHOWN_LINES)]
    quoted = "\n".join(f"{best.first + i + 1:>5}| {line}" for i, line in enumerate(shown))
    more = "\n  …" if best.count > SHOWN_LINES else ""
    return (
        f"{label} matches nothing in {name}; the closest lines are "
        f"{_line_span(best.first, best.count)} ({best.score:.0f}% similar, "
        f"{FUZZY_THRESHOLD:.0f}% needed):\n{quoted}{more}\n"
        'Read the file again and copy the lines to change exactly into "search".'
    )


def _line_span(first: int, count: int) -> str:
    return f"{first + 1}-{first + count}" if count > 1 else f"{first + 1}"


def _span(text: str, start: int, end: int) -> str:
    first = text.count("\n", 0, start)
    last = end - 1 if end > start and text[end - 1] == "\n" else end  # its own line break
    return _line_span(first, text.count("\n", start, last) + 1)
