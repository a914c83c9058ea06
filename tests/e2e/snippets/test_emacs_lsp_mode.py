"""editors/emacs/qodeassist-lsp-mode.el in a real Emacs 30 (batch) with lsp-mode 10.

lsp-mode comes from Debian testing (``elpa-lsp-mode``) with its dependencies; it starts the
server the snippet registers as an add-on client, against a loopback provider. The scenario
shows and accepts an inline completion (lsp-mode 10 renders ``textDocument/inlineCompletion``
as ghost text), completes at point, runs the refactor code actions and the instruction
command, chats and asks for the status.
"""

from __future__ import annotations

from tests.e2e.snippets.conftest import (
    ADD_LINE,
    COMPLETION_DOC,
    CONTEXT_LINES,
    EDITORS,
    REFACTOR_DOC,
    REFACTOR_SELECTION,
    SUB_LINE,
    assert_caret_hint_warmed,
    completion_starts,
)
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply, completion_reply

SNIPPET = EDITORS / "emacs" / "qodeassist-lsp-mode.el"


def test_lsp_mode_snippet_shows_ghost_text_refactors_chats(run_emacs, replay: ReplayServer):
    replay.script("/v1/completions", [completion_reply("a + b"), completion_reply("a - b")])
    replay.script(
        "/v1/chat/completions",
        [
            chat_reply("```python\n", "    return sum(xs)\n", "```\n"),
            chat_reply("    return math.fsum(xs)"),
            chat_reply("Hello", " from the model."),
        ],
    )
    run = run_emacs(
        "lsp_mode_scenario",
        snippet=str(SNIPPET),
        completionText=COMPLETION_DOC,
        inlineAt=[ADD_LINE, 11],
        completionAt=[SUB_LINE, 11],
        refactorText=REFACTOR_DOC,
        selectionStart=REFACTOR_SELECTION[0],
        selectionEnd=REFACTOR_SELECTION[1],
        instruction="Use math.fsum",
        chatMessage="Say hello",
        caretAt=[CONTEXT_LINES - 1, 10],
    )
    report = run.report
    why = run.explain()

    assert report["command"] == ["qodeassist-lsp"], why
    assert report["addOn"] is True, why
    options = report["initializationOptions"]["qodeassist"]
    assert options["completion"]["linesBefore"] == 80, why
    # lsp-mode answers workspace/configuration from registered settings: the same values.
    assert report["configurationAnswer"]["qodeassist"] == options, why
    assert report["features"] == {
        "inlineCompletion": True,
        "completion": True,
        "codeAction": True,
        "codeActionResolve": True,
    }, why
    assert report["inlineMode"] is True, why

    # Ghost text: an overlay showing the suggestion; accepting inserts it and reports it.
    assert report["ghostText"] == "a + b", why
    assert report["inlineLine"] == "    return a + b", why
    assert report["status"]["completion"]["accepted"] >= 1, why
    assert ADD_LINE - 79 in completion_starts(replay)  # linesBefore = 80 applied

    # The completion-at-point fallback works as well.
    assert report["candidate"] == "return a - b", why  # labelled with the whole line
    assert report["completedLine"] == "    return a - b", why

    titles = report["actionTitles"]
    assert "QodeAssist: Improve" in titles and titles[-1].startswith("QodeAssist: Refactor"), why
    assert report["afterImprove"] == "def total(xs):\n    return sum(xs)\n", why
    assert report["afterInstruction"] == "def total(xs):\n    return math.fsum(xs)\n", why

    assert "Hello from the model." in report["chatBuffer"], why
    assert "[finished: end_turn]" in report["chatBuffer"], why
    assert report["status"]["state"] == "ready", why
    assert report["statusNotified"] is True and report["lighter"] == " QA[ready]", why

    # The caret hint: sent once per place, and the request there reached the model before any
    # completion was asked for at that line.
    assert_caret_hint_warmed(report, replay, "# line 119")
