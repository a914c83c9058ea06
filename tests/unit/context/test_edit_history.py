"""EditHistory: keystrokes merged into hunks, shifts, undo, bounds; fed by the DocumentStore."""

from __future__ import annotations

from qodeassist_lsp.context.documents import DocumentStore
from qodeassist_lsp.context.edit_history import EditHistory

TEXT = "a = 1\nb = total\nc = 3\nd = 4\n"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def typed(history: EditHistory, text: str, offset: int, word: str) -> str:
    """Type ``word`` one character at a time at ``offset``; return the final text."""
    for char in word:
        new = text[:offset] + char + text[offset:]
        history.record("u", text, new)
        text, offset = new, offset + 1
    return text


def test_keystrokes_on_one_line_make_one_hunk_with_the_text_from_before_the_first() -> None:
    history = EditHistory(clock=Clock())
    text = typed(history, TEXT, TEXT.index("total"), "sub")
    [hunk] = history.hunks("u")
    assert hunk.start == 1
    assert hunk.original == ("b = total",)
    assert hunk.updated == ("b = subtotal",)
    assert text.splitlines()[1] == "b = subtotal"


def test_a_far_edit_or_a_late_one_starts_a_new_hunk() -> None:
    clock = Clock()
    history = EditHistory(clock=clock, gap=0)
    text = typed(history, TEXT, TEXT.index("total"), "x")
    clock.now += 60
    text = typed(history, text, text.index("3"), "3")
    assert [h.original for h in history.hunks("u")] == [("b = total",), ("c = 3",)]
    text = typed(history, text, 0, "#")  # at once, but three lines above the last hunk
    assert [h.start for h in history.hunks("u")] == [1, 2, 0]


def test_a_change_above_shifts_older_hunks() -> None:
    clock = Clock()
    history = EditHistory(clock=clock, gap=0)
    text = typed(history, TEXT, TEXT.index("4"), "4")
    clock.now += 60
    history.record("u", text, "new line\n" + text)
    assert [(h.start, h.updated) for h in history.hunks("u")] == [
        (4, ("d = 44",)),
        (0, ("new line",)),
    ]


def test_an_undone_edit_leaves_no_hunk() -> None:
    history = EditHistory(clock=Clock())
    text = typed(history, TEXT, TEXT.index("total"), "z")
    history.record("u", text, TEXT)
    assert history.hunks("u") == []


def test_line_insertions_and_deletions_merge_across_lines() -> None:
    history = EditHistory(clock=Clock())
    text = TEXT.replace("c = 3\n", "c = 3\nc2 = 33\n")
    history.record("u", TEXT, text)
    [inserted] = history.hunks("u")
    assert (inserted.start, inserted.original, inserted.updated) == (3, (), ("c2 = 33",))
    history.record("u", text, text.replace("d = 4\n", ""))
    [hunk] = history.hunks("u")
    assert hunk.original == ("d = 4",)
    assert hunk.updated == ("c2 = 33",)


def test_bounds_count_and_size() -> None:
    clock = Clock()
    history = EditHistory(clock=clock, max_hunks=2, max_lines=3, gap=0)
    text = TEXT
    for word, target in (("x", "1"), ("y", "3"), ("z", "4")):
        clock.now += 60
        text = typed(history, text, text.index(target), word)
    assert len(history.hunks("u")) == 2
    big = "\n".join(str(i) for i in range(50)) + "\n"
    history.record("big", "", big)
    [hunk] = history.hunks("big")
    assert hunk.truncated and len(hunk.updated) == 3 and hunk.line_count == 50


def test_the_document_store_keeps_the_history_and_forgets_it_on_close() -> None:
    store = DocumentStore()
    store.open("file:///a.py", TEXT, 1)
    store.change("file:///a.py", TEXT.replace("total", "subtotal"), 2)
    [hunk] = store.edit_history.hunks("file:///a.py")
    assert hunk.original == ("b = total",) and hunk.updated == ("b = subtotal",)
    store.close("file:///a.py")
    assert store.edit_history.hunks("file:///a.py") == []
