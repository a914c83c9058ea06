"""Typed-ahead cache: hits while typing the suggestion, invalidation, LRU bound."""

from __future__ import annotations

from qodeassist_lsp.context.documents import LineEdit
from qodeassist_lsp.features.completion.typed_ahead import TypedAheadCache, TypedAheadHit

U = "file:///a.py"


def test_hit_while_typing_the_suggestion_and_backspacing() -> None:
    cache = TypedAheadCache()
    cache.put(U, 3, "x = ", "", ["compute(a)", "compute"], "Agent")
    assert cache.lookup(U, 3, "x = ", "") == TypedAheadHit(("compute(a)", "compute"), "", "Agent")
    assert cache.lookup(U, 3, "x = comp", "") == TypedAheadHit(("ute(a)", "ute"), "comp", "Agent")
    assert cache.lookup(U, 3, "x = compute(", "").texts == ("a)",)
    assert cache.lookup(U, 3, "x = co", "").texts == ("mpute(a)", "mpute")  # backspace


def test_mismatch_full_typing_and_other_text_invalidate() -> None:
    cache = TypedAheadCache()
    cache.put(U, 3, "x = ", "", ["compute(a)"])
    assert cache.lookup(U, 3, "x = cx", "") is None
    assert cache.lookup(U, 3, "x = c", "") is None  # dropped on the mismatch
    cache.put(U, 3, "x = ", "", ["ab"])
    assert cache.lookup(U, 3, "x = ab", "") is None  # all typed: nothing left
    cache.put(U, 3, "x = ", "", ["ab"])
    assert cache.lookup(U, 3, "x = a", ")") is None  # the right side changed
    cache.put(U, 3, "x = ", "", ["ab"])
    assert cache.lookup(U, 4, "x = a", "") is None  # another line: no hit, kept
    assert cache.lookup("file:///b.py", 3, "x = a", "") is None
    assert cache.lookup(U, 3, "x = a", "").texts == ("b",)


def test_edits_elsewhere_or_with_newlines_invalidate() -> None:
    cache = TypedAheadCache()
    cache.put(U, 3, "x = ", "", ["ab"])
    cache.note_edits(U, [LineEdit(3, "a")])  # typing on the line: checked at lookup
    assert len(cache) == 1
    cache.note_edits("file:///other", [LineEdit(0, "z")])
    assert len(cache) == 1
    cache.note_edits(U, [LineEdit(7, "z")])
    assert len(cache) == 0
    cache.put(U, 3, "x = ", "", ["ab"])
    cache.note_edits(U, [LineEdit(3, "\n")])
    assert len(cache) == 0
    cache.put(U, 3, "x = ", "", ["ab"])
    cache.forget(U)
    assert len(cache) == 0
    cache.put(U, 3, "x = ", "", ["", ""])
    assert len(cache) == 0  # nothing worth caching


def test_lru_bound() -> None:
    cache = TypedAheadCache(capacity=2)
    cache.put(U, 1, "a", "", ["1"])
    cache.put(U, 2, "b", "", ["2"])
    assert cache.lookup(U, 1, "a", "") is not None  # refreshes line 1
    cache.put(U, 3, "c", "", ["3"])
    assert cache.lookup(U, 2, "b", "") is None
    assert cache.lookup(U, 1, "a", "") is not None
    cache.clear()
    assert len(cache) == 0


def test_accepting_a_suggestion_line_by_line_keeps_the_rest() -> None:
    cache = TypedAheadCache()
    cache.put(U, 3, "    return", "", [" a + b\n    # the sum\n"], agent="A")
    assert cache.lookup(U, 3, "    return a", "").typed == " a"  # one word accepted
    cache.note_edits(U, [LineEdit(3, " + b\n    ")])  # then the rest of the line
    hit = cache.lookup(U, 4, "    ", "")
    assert hit is not None and hit.texts == ("# the sum\n",) and hit.agent == "A"
    assert cache.lookup(U, 3, "    return a", "") is None  # the old anchor is gone


def test_a_line_break_that_is_not_the_suggestion_drops_it() -> None:
    cache = TypedAheadCache()
    cache.put(U, 3, "x = ", "", ["a\nb"])
    cache.note_edits(U, [LineEdit(3, "\n")])  # Enter before typing "a"
    assert len(cache) == 0
    cache.put(U, 3, "x = ", "", ["a\n"])
    cache.note_edits(U, [LineEdit(3, "a\n")])  # the whole suggestion: nothing left
    assert len(cache) == 0
