"""Neovim 0.12's native inline completion against the real server and a loopback provider.

Each test runs a headless Neovim with a Lua scenario from ``lua/`` as its init file. Neovim
starts the server over stdio (``python -m qodeassist_lsp``), ``vim.lsp.inline_completion``
asks for suggestions on its own (automatic trigger after typing), shows them as ghost text
(extmarks in the ``nvim.lsp.inline_completion`` namespace) and ``<Tab>`` accepts through
``vim.lsp.inline_completion.get()``. The scenario writes a JSON report (buffer snapshots,
extmarks, every LSP request with its answer, the status the server reported); the assertions
are made here, on that report and on what the replay server received.
"""

from __future__ import annotations

from typing import Any

from tests.e2e.editors.conftest import NeovimRun
from tests.support.replay_server import ReplayServer
from tests.support.streams import completion_reply

PREFIX = "def add(a, b):\n    return "
INLINE = "textDocument/inlineCompletion"


def ghosts(state: dict[str, Any]) -> list[tuple[int, int, str]]:
    """The ghost texts of a snapshot as (row, column, text), 0-based like extmarks."""
    return [(g["row"], g["col"], g["text"]) for g in state["ghosts"]]


def assert_accepted_on_the_server(run: NeovimRun, item: dict[str, Any]) -> None:
    """The item's command reached the server, which counted one acceptance."""
    [command] = run.requests("workspace/executeCommand")
    assert command["params"] == {
        "command": "qodeassist.accepted",
        "arguments": item["command"]["arguments"],
    }, run.explain()
    assert command["result"] is True, run.explain()
    assert run.report["status"]["completion"]["accepted"] == 1, run.report["status"]


def the_item(run: NeovimRun, column: int) -> dict[str, Any]:
    """The one item the server answered to Neovim's request at line 2, ``column``."""
    answered = [
        r
        for r in run.requests(INLINE)
        if r["params"]["position"] == {"line": 1, "character": column}
    ]
    assert answered, f"no inline completion request at column {column}" + run.explain()
    assert answered[-1]["params"]["context"]["triggerKind"] == 2, answered  # Automatic
    items = answered[-1]["result"]["items"]
    assert len(items) == 1, items
    return items[0]


def applied(line: str, item: dict[str, Any]) -> str:
    """``line`` (line 2) with ``item`` applied as the LSP says."""
    start, end = item["range"]["start"], item["range"]["end"]
    assert start["line"] == end["line"] == 1, item
    return line[: start["character"]] + item["insertText"] + line[end["character"] :]


def test_ghost_text_is_shown_and_accepted(neovim, replay: ReplayServer) -> None:
    replay.script("/v1/completions", [completion_reply(" + ", "b"), completion_reply(repeat=3)])
    run = neovim("ghost_accept", typed="a", pause_after_insert=True)
    why = run.explain()

    assert run.report["nvim_version"].startswith("0.12"), why
    assert "inlineCompletionProvider" in run.report["server_capabilities"], why
    # Entering insert mode asked at once; nothing was typed yet, so no suggestion.
    assert ghosts(run.snapshot("insert")) == [], why
    assert run.requests(INLINE)[0]["result"] == {"items": []}, why
    # Typing asked again; the provider got the code before the cursor...
    assert replay.requests, "the provider received no request" + why
    first = replay.requests[0].json
    assert first["prompt"] == PREFIX + "a" and first["stream"] is True, first
    # ... and the server answered the streamed text, at the cursor, with its accept command.
    item = the_item(run, 12)
    assert item["insertText"] == " + b", item
    assert item["range"] == {
        "start": {"line": 1, "character": 12},
        "end": {"line": 1, "character": 12},
    }, item
    assert item["command"]["command"] == "qodeassist.accepted", item
    # Shown as ghost text after the typed `a`, the buffer itself untouched.
    shown = run.snapshot("shown")
    assert ghosts(shown) == [(1, 12, " + b")], why
    assert shown["lines"][1] == "    return a", why
    # <Tab> inserted it, moved the cursor behind it and cleared the ghost text...
    accepted = run.snapshot("accepted")
    assert accepted["lines"] == ["def add(a, b):", "    return a + b", "", "print(add(1, 2))"], why
    assert accepted["cursor"] == [2, 16], why
    assert (1, 12, " + b") not in ghosts(accepted), why
    # ... and ran the item's command on the server, which counted the acceptance.
    assert_accepted_on_the_server(run, item)


def test_typing_ahead_narrows_the_ghost_text_without_a_new_request(
    neovim, replay: ReplayServer
) -> None:
    replay.script("/v1/completions", [completion_reply(" + ", "b"), completion_reply(repeat=3)])
    run = neovim("typed_ahead", typed="a", pause_after_insert=True, type_ahead=" +")
    why = run.explain()

    assert ghosts(run.snapshot("shown")) == [(1, 12, " + b")], why
    narrowed = run.snapshot("narrowed")
    assert narrowed["lines"][1] == "    return a +", why
    assert ghosts(narrowed) == [(1, 14, " b")], why
    # Neovim asked again after the typing; the server answered with the rest of the suggestion.
    item = the_item(run, 14)
    assert applied("    return a +", item) == "    return a + b", item
    # ... without a second upstream request: the typed-ahead text was served locally.
    before_accept = [r for r in replay.requests if r.received_at * 1e9 < run.report["accept_ns"]]
    assert len(before_accept) == 1, [r.json for r in before_accept]
    outcomes = run.report["status_before_accept"]["completion"]["outcomes"]
    assert outcomes.get("model") == 1 and outcomes.get("typed_ahead") == 1, outcomes
    # Accepting the narrowed suggestion completes the line once.
    accepted = run.snapshot("accepted")
    assert accepted["lines"][1] == "    return a + b", why
    assert accepted["cursor"] == [2, 16], why
    assert_accepted_on_the_server(run, item)


def test_typing_right_after_entering_insert_mode_gets_a_suggestion(
    neovim, replay: ReplayServer
) -> None:
    replay.script("/v1/completions", [completion_reply(" + ", "b"), completion_reply(repeat=3)])
    run = neovim("ghost_accept", typed="a", pause_after_insert=False)

    assert ghosts(run.snapshot("shown")) == [(1, 12, " + b")], run.explain()
    assert run.snapshot("accepted")["lines"][1] == "    return a + b", run.explain()
