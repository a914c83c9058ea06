"""Inline completion in a real VS Code: ghost text while typing, Tab, partial accept, failures.

A user opens ``add.py``, goes to the end of ``    return `` and types ``a``. VS Code asks the
server (``textDocument/inlineCompletion``), the server asks the loopback provider, and the
answer shows as ghost text; what is accepted is compared in the rendered editor and on disk.
"""

from __future__ import annotations

from tests.e2e.vscode.real.conftest import DOC, VSCode
from tests.support.replay_server import Reply
from tests.support.streams import completion_reply
from tests.support.vscode_page import Workbench
from tests.support.vscode_web import wait_until

SUM = "def add(a, b):\n    return a + b\n\nprint(add(1, 2))\n"


def type_a_on_line_2(workbench: Workbench) -> None:
    workbench.open_file("add.py")
    workbench.goto(2)
    workbench.type("a")


def test_ghost_text_appears_while_typing_and_tab_accepts_it(
    workbench: Workbench, vscode: VSCode
) -> None:
    vscode.replay.script("/v1/completions", completion_reply(" + ", "b", repeat=20))
    type_a_on_line_2(workbench)

    assert workbench.wait_ghost() == " + b"
    assert workbench.line_text(2) == "    return a"  # shown, not inserted
    prompt = vscode.replay.requests[-1].json["prompt"]
    assert prompt.endswith("def add(a, b):\n    return a"), prompt

    workbench.press("Tab")
    wait_until(lambda: workbench.line_text(2) == "    return a + b", "the accepted line")
    # The ghost text shown now, if any, is already the next suggestion (the server prefetched
    # it while this one was shown, and this replay's model answers " + b" every time), so it
    # is not compared; the saved file shows the suggestion was inserted once.
    workbench.save()
    assert (workbench.folder / "add.py").read_text() == SUM


def test_partial_accept_takes_the_next_word_and_tab_the_rest(
    workbench: Workbench, vscode: VSCode
) -> None:
    vscode.replay.script("/v1/completions", completion_reply(" + b", "  # the sum", repeat=20))
    type_a_on_line_2(workbench)
    assert workbench.wait_ghost() == " + b  # the sum"

    whole = "    return a + b  # the sum"
    # Accept Next Word of Inline Suggestion, twice: each takes a part, the rest stays shown.
    shown = "    return a"
    for _ in range(2):
        before = shown
        workbench.press("Control+ArrowRight")
        shown = wait_until(
            lambda: (text := workbench.line_text(2)) != before and text,  # noqa: B023
            "a part of the suggestion to be inserted",
        )
        rest = workbench.wait_ghost()
        assert len(shown) > len(before) and shown + rest == whole, (shown, rest)
    assert (workbench.folder / "add.py").read_text() == DOC  # in the editor, not saved yet

    workbench.press("Tab")
    wait_until(lambda: workbench.line_text(2) == whole, "the whole line")
    workbench.save()
    assert (workbench.folder / "add.py").read_text() == SUM.replace("a + b", "a + b  # the sum")


def test_the_status_bar_item_shows_a_provider_failure(workbench: Workbench, vscode: VSCode) -> None:
    failure = Reply.json({"error": {"message": "model crashed"}}, status=500, repeat=30)
    vscode.replay.script("/v1/completions", failure)
    workbench.open_file("add.py")
    workbench.goto(2)
    for key in "a + b":  # several requests, each one failing upstream
        workbench.type(key, delay_ms=400)

    # Degraded (a warning) after a failure, down (an error) after three in a row.
    wait_until(
        lambda: {"codicon-warning", "codicon-error"} & set(workbench.status_icons().split()),
        "the status bar item to show the failure",
        timeout=30,
        explain=lambda: f"\nstatus item icons: {workbench.status_icons()!r}",
    )
    assert workbench.ghost_text() == ""
    assert (workbench.folder / "add.py").read_text() == DOC  # nothing was written
