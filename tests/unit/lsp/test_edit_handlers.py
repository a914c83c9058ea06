"""The one minimal text edit sent through ``workspace/applyEdit`` for an open document."""

from __future__ import annotations

import pytest

from qodeassist_lsp.lsp.edit_handlers import _changed_span


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a = 1\nb = 2\n", "a = 1\nb = 3\n"),
        ("x\r\ny\r\n", "x\r\nz\r\ny\r\n"),  # inserted after a CRLF
        ("x\r\ny\r\n", "x\r\n"),
        ("", "new\n"),
        ("gone\n", ""),
        ("same", "same"),
        ("héllo 👋\n", "hello 👋\n"),
    ],
)
def test_the_edit_turns_old_into_new(old: str, new: str):
    start, end, text = _changed_span(old, new)
    assert old[:start] + text + old[end:] == new


def test_a_crlf_is_never_split():
    old, new = "a\r\nb\r\n", "a\r\n\r\nb\r\n"
    start, end, _text = _changed_span(old, new)
    for offset in (start, end):
        assert not (0 < offset < len(old) and old[offset - 1] == "\r" and old[offset] == "\n")
