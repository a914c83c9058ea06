"""The ``textDocument/completion`` fallback's menu entry reads as the whole line (issue 47, 6).

Helix (and any client without inline completion) shows the suggestion as a menu entry; its
label used to be the continuation only (``turn a + b`` after ``re``). The label is now the
line as accepting leaves it; the inserted text and what the client filters on are unchanged.
"""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.e2e.lsp.test_inline_completion import embedded_points_at_replay, open_doc
from tests.support.streams import completion_reply

__all__ = ["embedded_points_at_replay"]  # the autouse fixture, shared


async def menu_item(client, uri: str, line: int, character: int) -> types.CompletionItem:
    request = types.CompletionParams(
        text_document=types.TextDocumentIdentifier(uri),
        position=types.Position(line, character),
        context=types.CompletionContext(trigger_kind=types.CompletionTriggerKind.Invoked),
    )
    for _ in range(20):  # an answer slower than the budget is empty + isIncomplete: ask again
        answer = await client.text_document_completion_async(request)
        if answer.items:
            [item] = answer.items
            return item
    raise AssertionError("no completion item")


@pytest.mark.parametrize(
    ("text", "column", "reply", "label", "filter_text"),
    [
        # After a typed word: the client filters on that word, so filterText starts with it.
        ("def add(a, b):\n    re\n", 6, "turn a + b", "return a + b", "return a + b"),
        # After a space: nothing to filter on but the suggestion itself.
        ("def add(a, b):\n    return \n", 11, "a + b", "return a + b", "a + b"),
        # Text right of the cursor stays on the line.
        ("print(add()\n", 10, "1, 2", "print(add(1, 2)", "1, 2"),
    ],
)
async def test_the_menu_entry_is_the_whole_line(
    client, lsp_home, replay, text, column, reply, label, filter_text
) -> None:
    replay.script("/v1/completions", completion_reply(reply))
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home, text)
    line = text.count("\n") - 1
    item = await menu_item(client, uri, line, column)
    assert item.label == label
    assert item.filter_text == filter_text
    assert item.text_edit.new_text == reply
    assert item.text_edit.range.start == types.Position(line, column)
