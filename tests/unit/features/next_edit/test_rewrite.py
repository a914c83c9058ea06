"""The window, the smallest edit, the no-op and undo rules, and exact rebasing."""

from __future__ import annotations

from qodeassist_lsp.context.documents import Document
from qodeassist_lsp.context.edit_history import EditHistory
from qodeassist_lsp.features.next_edit.rewrite import (
    TextChange,
    apply,
    rebase,
    smallest_change,
    undoes,
)
from qodeassist_lsp.features.next_edit.window import window_around

CODE = "".join(f"line {i}\n" for i in range(40))
RENAMED = "def f(count):\n    total = 0\n    return total + total\n"


def test_the_window_is_ten_lines_above_the_cursor_line_and_ten_below() -> None:
    window = window_around(Document("u", CODE), 20, 3)
    assert window.first == 10 and len(window.lines) == 21
    assert window.lines[window.cursor_line] == "line 20"
    assert window.with_cursor("|").splitlines()[10] == "lin|e 20"
    near_top = window_around(Document("u", CODE), 2, 0)
    assert near_top.first == 0 and len(near_top.lines) == 13
    near_end = window_around(Document("u", CODE), 40, 0)
    assert near_end.lines[-1] == "" and near_end.last == 40


def test_the_window_before_the_edits_inside_it() -> None:
    history = EditHistory(gap=0)
    middle = CODE.replace("line 12\n", "line twelve\n")
    new = middle.replace("line 30\n", "")
    history.record("u", CODE, middle)
    history.record("u", middle, new)  # outside the window: kept as it is
    window = window_around(Document("u", new), 13, 0)
    before = window.before_edits(history.hunks("u"))
    assert "line 12" in before and "line twelve" not in before
    assert before.count("\n") == window.text.count("\n")


def test_the_smallest_edit_replaces_only_what_changed() -> None:
    document = Document("u", RENAMED)
    window = window_around(document, 1, 0)
    rewritten = tuple(RENAMED.replace("total", "subtotal").split("\n"))
    change = smallest_change(RENAMED, window, rewritten)
    assert change is not None
    # Three separate renames become one edit spanning them (edits are alternatives).
    assert RENAMED[change.start : change.end] == "total = 0\n    return total + "
    assert apply(RENAMED, change) == RENAMED.replace("total", "subtotal")


def test_an_unchanged_window_is_no_suggestion() -> None:
    window = window_around(Document("u", RENAMED), 1, 0)
    assert smallest_change(RENAMED, window, window.lines) is None


def test_crlf_documents_get_crlf_line_breaks() -> None:
    text = "a\r\nb\r\nc\r\n"
    window = window_around(Document("u", text), 1, 0)
    assert window.lines == ("a", "b", "c", "")
    change = smallest_change(text, window, ("a", "b", "b2", "c", ""))
    assert change is not None and apply(text, change) == "a\r\nb\r\nb2\r\nc\r\n"


def test_an_edit_that_restores_the_text_before_the_last_edit_is_an_undo() -> None:
    history = EditHistory()
    before = RENAMED
    after = RENAMED.replace("total = 0", "subtotal = 0")
    history.record("u", before, after)
    window = window_around(Document("u", after), 1, 0)
    back = smallest_change(after, window, tuple(before.split("\n")))
    onward = smallest_change(
        after, window, tuple(after.replace("total +", "subtotal +").split("\n"))
    )
    assert back is not None and onward is not None
    assert undoes(after, back, history.last("u"))
    assert not undoes(after, onward, history.last("u"))


def test_rebase_only_when_the_change_lies_wholly_before_or_after() -> None:
    text = "aaa\nbbb\nccc\n"
    change = TextChange(4, 7, "BBB")
    assert rebase(change, text, "x" + text) == TextChange(5, 8, "BBB")
    assert rebase(change, text, text + "ddd\n") == change
    assert rebase(change, text, "aaa\nbXbb\nccc\n") is None
    assert rebase(change, text, "aaa\nXbbb\nccc\n") is None  # borders the edit: ambiguous
