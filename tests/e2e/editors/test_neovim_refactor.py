"""Neovim 0.12's code action UI runs the server's quick refactor on a linewise selection.

The scenario (``lua/code_action.lua``) selects lines 2-5 with ``V`` and calls
``vim.lsp.buf.code_action({apply = true, context = {only = {"refactor.rewrite"}}, filter = ...})``
keeping only "QodeAssist: Improve". Neovim lists the lazy actions (``textDocument/codeAction``),
resolves the picked one (``codeAction/resolve``: the model runs then, here the loopback replay
server speaking OpenAI chat SSE for the Embedded provider) and applies the returned edit.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply

DOC = "def total(xs):\n    s = 0\n    for x in xs:\n        s = s + x\n    return s\n"
IMPROVE = "QodeAssist: Improve"
WITH_INSTRUCTION = "QodeAssist: Refactor with instruction…"


def test_linewise_selection_is_refactored_through_code_action_resolve(
    neovim, replay: ReplayServer, tmp_path: Path
) -> None:
    source = tmp_path / "project" / "total.py"
    source.write_text(DOC)
    replay.script(
        "/v1/chat/completions",
        chat_reply("Here is the improved code:\n```python\n", "    return sum(xs)\n", "```\n"),
    )
    run = neovim("code_action", file=str(source), select="2GV5G", title=IMPROVE)
    why = run.explain()

    selected = run.snapshot("selected")
    assert selected["mode"] == "V" and selected["lines"] == DOC.splitlines(), why
    # Neovim sent the linewise selection as line 2 column 0 up to the end of line 5 (its last
    # character, not the line break: range_from_selection() takes #line as the end column for
    # `V` and make_given_range_params() adds 1 for the inclusive 'selection').
    [listed] = run.requests("textDocument/codeAction")
    assert listed["params"]["range"] == {
        "start": {"line": 1, "character": 0},
        "end": {"line": 4, "character": 12},
    }, why
    assert listed["params"]["context"]["only"] == ["refactor.rewrite"], why
    titles = [action["title"] for action in listed["result"]]
    assert IMPROVE in titles and WITH_INSTRUCTION in titles, titles
    assert all(action["kind"] == "refactor.rewrite" for action in listed["result"]), why
    # The filter left one action, so `apply = true` resolved it without a prompt.
    [resolved] = run.requests("codeAction/resolve")
    assert resolved["params"]["title"] == IMPROVE, why
    [change] = resolved["result"]["edit"]["documentChanges"]
    [edit] = change["edits"]
    # (Only the LSP fields: Neovim's apply_text_edits() adds `_index` to the table it applied.)
    assert {key: edit[key] for key in ("range", "newText")} == {
        "range": {"start": {"line": 1, "character": 0}, "end": {"line": 4, "character": 12}},
        "newText": "    return sum(xs)",
    }, edit
    # The fence body replaced exactly the selected text. The selection ended before line 5's
    # line break, which stays and is the file's final newline: no empty line is left behind.
    assert run.snapshot("applied")["lines"] == ["def total(xs):", "    return sum(xs)"], why
    assert run.report["final"]["lines"] == ["def total(xs):", "    return sum(xs)"], why
    # One model call, on the chat endpoint, with the selection marked in its prompt.
    assert [r.path for r in replay.requests] == ["/v1/chat/completions"], why
    messages = replay.requests[0].json["messages"]
    assert any("<selection_start>" in str(m.get("content")) for m in messages), messages
