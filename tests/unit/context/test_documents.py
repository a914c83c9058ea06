"""DocumentStore, snapshots, position arithmetic and recent-change queues."""

from __future__ import annotations

import random
import sys

import pytest

from qodeassist_lsp.context.documents import (
    Document,
    DocumentEvent,
    DocumentEventKind,
    DocumentStore,
    LineEdit,
    diff_edit,
    line_end_offset,
    line_start_offset,
    offset_at,
    position_at,
    uri_to_path,
)

TEXT = "zero\none\r\ntwo\n\nfour"


@pytest.mark.parametrize(
    ("line", "expected"), [(0, 0), (1, 5), (2, 10), (3, 14), (4, 15), (5, 19), (99, 19), (-1, 0)]
)
def test_line_start_offset(line: int, expected: int) -> None:
    assert line_start_offset(TEXT, line) == expected


def test_line_start_offset_across_chunks() -> None:
    text = "".join(f"line {i}\n" for i in range(20_000))
    for line in (0, 1, 2047, 2048, 19_999, 20_000):
        assert line_start_offset(text, line) == sum(len(f"line {i}\n") for i in range(line))


def test_line_start_offset_matches_a_plain_scan_for_any_line_lengths() -> None:
    rng = random.Random(7)
    for _ in range(60):
        lengths = [rng.choice([0, 0, 1, 5, 30, 200, 20_000]) for _ in range(rng.randrange(900))]
        text = "\n".join("x" * n for n in lengths)
        starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
        for line in {0, 1, len(starts) - 1, len(starts), *rng.sample(range(len(starts)), 1)}:
            expected = starts[line] if line < len(starts) else len(text)
            assert line_start_offset(text, line) == expected


def test_offset_at_clamps_to_the_line_and_skips_cr() -> None:
    assert offset_at(TEXT, 1, 2) == 7
    assert offset_at(TEXT, 1, 50) == 8  # end of "one", before "\r\n"
    assert offset_at(TEXT, 4, 4) == 19
    assert offset_at(TEXT, 0, -3) == 0
    assert line_end_offset(TEXT, 5) == 8


def test_position_at_round_trips() -> None:
    for offset in range(len(TEXT) + 1):
        line, character = position_at(TEXT, offset)
        if TEXT[offset - 1 : offset + 1] != "\r\n":
            assert offset_at(TEXT, line, character) == offset
    assert position_at(TEXT, 10_000) == (4, 4)


def test_code_points_not_utf16() -> None:
    text = "a😀b\nc"
    assert offset_at(text, 0, 2) == 2
    assert text[offset_at(text, 0, 2)] == "b"
    assert position_at(text, 5) == (1, 1)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX paths")
def test_uri_to_path() -> None:
    assert uri_to_path("file:///home/me/a%20b.py") == "/home/me/a b.py"
    assert uri_to_path("file://localhost/x.py") == "/x.py"
    assert uri_to_path("file:///C:/src/x.py") == "C:/src/x.py"
    assert uri_to_path("untitled:Untitled-1") == ""


def test_diff_edit_finds_the_changed_line() -> None:
    old = "alpha\nbeta\ngamma\n" * 2000
    new = old.replace("beta\ngamma\nalpha", "beta\ngamXma\nalpha", 1)
    assert diff_edit(old, new) == LineEdit(line=2, inserted="X", removed=0)
    assert diff_edit("ab\ncd", "ab\n") == LineEdit(line=1, inserted="", removed=2)
    assert diff_edit("x", "x") is None
    assert diff_edit("aaa", "aaaa") == LineEdit(line=0, inserted="a", removed=0)


def test_store_lifecycle_and_listeners() -> None:
    store = DocumentStore()
    seen: list[DocumentEvent] = []
    store.add_listener(seen.append)
    doc = store.open("file:///p/a.py", "x = 1\n", 1, "python")
    assert doc == Document("file:///p/a.py", "x = 1\n", 1, "python", "/p/a.py")
    assert doc.name == "a.py"
    changed = store.change("file:///p/a.py", "x = 12\n", 2, [LineEdit(0, "2")])
    assert changed.language_id == "python" and changed.version == 2
    assert store.get("file:///p/a.py") is changed and "file:///p/a.py" in store
    assert [d.uri for d in store] == ["file:///p/a.py"] and len(store) == 1
    store.close("file:///p/a.py")
    assert store.get("file:///p/a.py") is None
    assert [e.kind for e in seen] == [
        DocumentEventKind.OPENED,
        DocumentEventKind.CHANGED,
        DocumentEventKind.CLOSED,
    ]
    assert seen[1].edits == (LineEdit(0, "2"),)
    store.remove_listener(seen.append)
    store.open("file:///p/b.py", "")
    assert len(seen) == 3


def test_broken_listener_does_not_break_sync(caplog: pytest.LogCaptureFixture) -> None:
    store = DocumentStore()

    def boom(event: DocumentEvent) -> None:
        raise RuntimeError("boom")

    store.add_listener(boom)
    store.open("file:///a", "text")
    assert store.get("file:///a") is not None
    assert "listener failed" in caplog.text


def test_recent_changes_are_distinct_lines_updated_in_place() -> None:
    store = DocumentStore(max_changes=3)
    uri = "file:///p/a.c"
    text = "int a;\nint b;\nint c;\nint d;\n"
    store.open(uri, text)
    store.change(uri, text.replace("int a;", "int a1;"), 2, [LineEdit(0, "1")])
    store.change(uri, text.replace("int a;", "int a12;"), 3, [LineEdit(0, "2")])
    assert store.recent_changes(uri) == ["int a12;"]
    store.change(uri, text, 4, [LineEdit(1, "b"), LineEdit(2, "c"), LineEdit(3, "d")])
    assert store.recent_changes(uri) == ["int b;", "int c;", "int d;"]  # oldest dropped
    store.max_changes = 2
    assert store.recent_changes(uri) == ["int c;", "int d;"]


def test_multi_line_paste_records_its_newest_lines_only() -> None:
    store = DocumentStore(max_changes=2)
    uri = "file:///p/a.py"
    store.open(uri, "")
    pasted = "".join(f"l{i}\n" for i in range(1000))
    store.change(uri, pasted, 2, [LineEdit(0, pasted)])
    assert store.recent_changes(uri) == ["l999", ""]


def test_full_sync_change_is_diffed() -> None:
    store = DocumentStore()
    uri = "file:///p/a.py"
    seen: list[DocumentEvent] = []
    store.add_listener(seen.append)
    store.open(uri, "a\nb\nc\n")
    store.change(uri, "a\nbX\nc\n", 2)
    assert seen[-1].edits == (LineEdit(1, "X", 0),)
    assert store.recent_changes(uri) == ["bX"]


def test_long_changed_lines_are_capped() -> None:
    store = DocumentStore()
    store.open("file:///m.js", "")
    store.change("file:///m.js", "x" * 10_000, 2, [LineEdit(0, "x" * 10_000)])
    assert len(store.recent_changes("file:///m.js")[0]) == 500


def test_edit_flags() -> None:
    assert LineEdit(0, "a\nb").multiline
    assert not LineEdit(0, "ab").multiline
