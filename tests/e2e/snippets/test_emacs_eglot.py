"""editors/emacs/qodeassist-eglot.el in a real Emacs 30 (batch) with its built-in Eglot.

Eglot starts the server the snippet names (``qodeassist-lsp`` from the virtualenv, found on
PATH), with the snippet's initialization options, against a loopback provider; the scenario
then completes at point, runs the refactor code actions and the instruction command, chats and
asks for the status, exactly through the commands the snippet defines.
"""

from __future__ import annotations

from tests.e2e.snippets.conftest import (
    ADD_LINE,
    COMPLETION_DOC,
    EDITORS,
    PRINT_LINE,
    REFACTOR_DOC,
    REFACTOR_SELECTION,
    SUB_LINE,
    assert_caret_hint_warmed,
    completion_starts,
)
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply, completion_reply, sse_reply

SNIPPET = EDITORS / "emacs" / "qodeassist-eglot.el"
SLOW_ANSWER = b'data: {"choices": [{"index": 0, "delta": {"content": "Still thinking"}}]}\n\n'


def test_eglot_snippet_completes_refactors_chats(run_emacs, replay: ReplayServer) -> None:
    replay.script(
        "/v1/completions",
        [completion_reply("a + b"), completion_reply("d(1, 2)", repeat=20)],
    )
    replay.script(
        "/v1/chat/completions",
        [
            chat_reply("```python\n", "    return sum(xs)\n", "```\n"),
            chat_reply("    return math.fsum(xs)"),
            chat_reply("Hello", " from the model."),
            sse_reply(SLOW_ANSWER, hold_open=True),  # streams until it is cancelled
        ],
    )
    run = run_emacs(
        "eglot_scenario",
        snippet=str(SNIPPET),
        completionText=COMPLETION_DOC,
        completionAt=[ADD_LINE, 11],
        midWordAt=[PRINT_LINE, 8],
        refactorText=REFACTOR_DOC,
        selectionStart=REFACTOR_SELECTION[0],
        selectionEnd=REFACTOR_SELECTION[1],
        instruction="Use math.fsum",
        chatMessage="Say hello",
        slowMessage="Think hard",
        slowText="Still thinking",
        earlyMessage="Too early?",
        caretAt=[SUB_LINE, 11],
    )
    report = run.report
    why = run.explain()

    # The snippet's entry: our class, the bare command, camelCase settings.
    assert report["command"] == ["qodeassist-lsp"], why
    assert report["class"] == report["serverClass"] == "qodeassist-eglot-server", why
    assert "python-mode" in report["modes"], why
    assert report["initializationOptions"]["qodeassist"]["completion"]["linesBefore"] == 80
    assert report["emacs"].startswith("30."), why
    assert report["capabilities"]["completionProvider"], why
    assert report["capabilities"]["codeActionProvider"], why

    # completion-at-point: the suggestion is one candidate (labelled with the whole line),
    # inserted by its textEdit.
    assert report["candidate"] == "return a + b", why  # the menu shows the whole line
    item = report["item"]
    assert item["detail"] == "qodeassist" and item["textEdit"]["newText"] == "a + b", why
    assert report["completedLine"] == "    return a + b", why
    # The snippet's linesBefore = 80 reached the server (the default, 50, would start later).
    assert ADD_LINE - 79 in completion_starts(replay)

    # Code actions: the instruction library, lazily resolved, applied as the selection's edit.
    titles = report["actionTitles"]
    assert "QodeAssist: Improve" in titles, titles
    assert titles[-1] == "QodeAssist: Refactor with instruction…", titles
    assert report["afterImprove"] == "def total(xs):\n    return sum(xs)\n", why
    # The instruction command: workspace/applyEdit, one undo step.
    assert report["afterInstruction"] == "def total(xs):\n    return math.fsum(xs)\n", why
    assert report["afterUndo"] == report["afterImprove"], why
    refactor_requests = [r for r in replay.requests if r.path == "/v1/chat/completions"]
    assert refactor_requests[1].json["messages"][-1]["content"] == "Use math.fsum"

    # Chat: the streamed deltas and the terminal event land in the chat buffer.
    assert "Hello from the model." in report["chatBuffer"], why
    assert "[finished: end_turn]" in report["chatBuffer"], why
    # While an answer runs, a second message is refused by the client (the server would answer
    # ChatBusy); C-c q k stops the answer.
    assert report["sentWhileBusy"] == (
        "QodeAssist: the chat is still answering; stop it first (C-c q k), then send again"
    ), why
    assert "Too early?" not in report["chatAfterCancel"], why
    assert "[cancelled]" in report["chatAfterCancel"], why
    assert report["status"]["state"] == "ready", why
    assert report["statusNotified"] is True, why
    assert report["lighter"].startswith(" QA[ready"), why

    # The caret hint: sent once per place, and the request there reached the model before any
    # completion was asked for at that line (its trailing space healed off, as for the keys').
    assert_caret_hint_warmed(report, replay, "def sub(a, b):\n    return")
