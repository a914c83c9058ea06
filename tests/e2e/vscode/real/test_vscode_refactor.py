"""Quick refactor from the light bulb (Ctrl+.) in a real VS Code.

The user selects lines 2-5 of ``total.py``, opens the code action menu and picks an action.
"QodeAssist: Improve" is resolved by the server (``codeAction/resolve``, the model answers
through the loopback provider) and applied as one edit: one Ctrl+Z gives the old text back.
"QodeAssist: Refactor with instruction…" asks for the instruction first.
"""

from __future__ import annotations

from pathlib import Path

from tests.e2e.vscode.real.conftest import VSCode
from tests.support.replay_server import RecordedRequest
from tests.support.streams import chat_reply
from tests.support.vscode_page import Workbench
from tests.support.vscode_web import wait_until

DOC = "def total(xs):\n    s = 0\n    for x in xs:\n        s = s + x\n    return s\n"
DONE = "def total(xs):\n    return sum(xs)\n"
ANSWER = chat_reply("Here is the improved code:\n```python\n", "    return sum(xs)\n", "```\n")


def chat_requests(vscode: VSCode) -> list[RecordedRequest]:
    """The refactor's requests (VS Code's code-action requests at the caret also warm the
    completion model: ``/v1/completions``)."""
    return [r for r in vscode.replay.requests if r.path == "/v1/chat/completions"]


def select_the_body_and_open_the_code_actions(workbench: Workbench) -> None:
    (workbench.folder / "total.py").write_text(DOC)
    workbench.open_file("total.py")
    workbench.goto(2, 1)
    workbench.press("Shift+ArrowDown", "Shift+ArrowDown", "Shift+ArrowDown", "Shift+End")
    workbench.press("Control+.")


def pick_action(workbench: Workbench, title: str) -> None:
    """Arrow down to ``title`` in the code action menu and press Enter, like a user."""
    rows = workbench.page.locator(".action-widget .monaco-list-row")
    rows.filter(has_text=title).first.wait_for(timeout=20_000)
    for _ in range(rows.count() + 1):
        focused = workbench.page.locator(".action-widget .monaco-list-row.focused")
        if focused.count() and focused.first.get_attribute("aria-label") == title:
            workbench.press("Enter")
            return
        workbench.press("ArrowDown")
    raise AssertionError(f"no {title!r} in the code action menu: {rows.all_inner_texts()}")


def wait_refactored(workbench: Workbench) -> None:
    wait_until(
        lambda: (
            workbench.line_text(2) == "    return sum(xs)"
            and workbench.page.locator(".view-line").count() <= 3
        ),
        "the refactored text in the editor",
        timeout=30,
    )


def assert_one_undo_step(workbench: Workbench, path: Path) -> None:
    workbench.focus_editor()
    workbench.press("Control+z")
    wait_until(lambda: workbench.line_text(4) == "        s = s + x", "one Ctrl+Z to undo it all")
    assert workbench.line_text(2) == "    s = 0"
    workbench.press("Control+y")  # and redo: the refactor again, saved
    wait_refactored(workbench)
    workbench.save()
    assert path.read_text() == DONE


def test_a_refactor_code_action_applies_as_one_undo_step(
    workbench: Workbench, vscode: VSCode
) -> None:
    vscode.replay.script("/v1/chat/completions", ANSWER)
    select_the_body_and_open_the_code_actions(workbench)
    pick_action(workbench, "QodeAssist: Improve")

    wait_refactored(workbench)
    assert_one_undo_step(workbench, workbench.folder / "total.py")
    [request] = chat_requests(vscode)
    assert "<selection_start>" in str(request.json["messages"])
    # VS Code asked for code actions where the caret rested: the completion request there is
    # read ahead (issue 27), after the server's idle wait and its completion feature's start:
    # on a loaded machine maybe after the refactor, so it is waited for. Each prompt is the text
    # before a caret of this file, before or after the refactor (the caret rests there too).
    warm = wait_until(
        lambda: [r.json["prompt"] for r in vscode.replay.requests if r.path == "/v1/completions"],
        "the completion model warmed at the caret",
        timeout=30,
    )
    assert all(DOC.startswith(prompt) or DONE.startswith(prompt) for prompt in warm), warm


def test_refactor_with_instruction_asks_for_the_instruction(
    workbench: Workbench, vscode: VSCode
) -> None:
    vscode.replay.script("/v1/chat/completions", ANSWER)
    select_the_body_and_open_the_code_actions(workbench)
    pick_action(workbench, "QodeAssist: Refactor with instruction…")

    box = workbench.page.locator(".quick-input-widget")
    box.wait_for(state="visible", timeout=20_000)
    assert "refactor with an instruction" in box.inner_text()
    assert chat_requests(vscode) == []  # nothing runs before the user answers
    workbench.quick_input("Use the builtin sum")

    wait_refactored(workbench)
    [request] = chat_requests(vscode)
    assert "Use the builtin sum" in str(request.json["messages"])
    assert_one_undo_step(workbench, workbench.folder / "total.py")
