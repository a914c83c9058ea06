"""What the user sees in a real VS Code (issue 47): dialogs, warnings, the status item, layout.

- No lightbulb on an empty selection (the "Generate code here…" action is only offered when
  asked for, Ctrl+.), one on a selection.
- The refactor guard's refusal: a modal whose default (focused, first) button is *Discard*, whose
  title says "QodeAssist refactor:" once and whose diff keeps its indentation; Enter discards.
- A tool's permission question shows the tool, the file and the diff as readable lines (not
  JSON); the edit it proposes breaks the file, so its card warns and *Apply anyway…* asks again.
- A provider outage while typing: no error toast per request; the status item turns to a
  warning whose tooltip says "degraded", the reason and the fix, in separate lines.
- The chat composer at the default sidebar width: *Send* whole with the token count shown,
  "Link file" on one line; while an answer runs *Send* is disabled and *Stop* offered.

The multi-line next edit shown as a block is checked by ``test_vscode_next_edit.py``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.e2e.vscode.real.conftest import VSCode
from tests.e2e.vscode.real.test_vscode_chat import send, tool_call
from tests.e2e.vscode.real.test_vscode_refactor import (
    pick_action,
    select_the_body_and_open_the_code_actions,
)
from tests.support.replay_server import Reply
from tests.support.streams import chat_reply, completion_reply, sse_reply
from tests.support.vscode_page import Workbench
from tests.support.vscode_web import wait_until

NUMBERS = ", ".join(f"{i}.0" for i in range(1, 88))
"""An answer the refactor guard refuses (it repeats itself)."""
DIALOG = ".monaco-dialog-box"
LIGHTBULB = ".lightBulbWidget"
TOTAL = "def total(xs):\n    s = 0\n    for x in xs:\n        s = s + x\n    return s\n"


def dialog_parts(workbench: Workbench) -> dict[str, Any]:
    """The open modal dialog: title, detail (spaces as typed), buttons in order, focused one."""
    parts = workbench.page.locator(DIALOG).evaluate(
        """(box) => ({
          title: box.querySelector('.dialog-message-text')?.textContent ?? '',
          detail: box.querySelector('.dialog-message-detail')?.textContent ?? '',
          buttons: [...box.querySelectorAll('.dialog-buttons .monaco-button')]
            .map((b) => b.textContent.trim()),
          focused: document.activeElement?.closest('.dialog-buttons')
            ? document.activeElement.textContent.trim() : null,
        })"""
    )
    parts["detail"] = parts["detail"].replace("\u00a0", " ")
    return dict(parts)


def code_action_answers(vscode: VSCode) -> int:
    """How many ``textDocument/codeAction`` answers the output channel's trace shows."""
    channel = vscode.output_channel()
    text = channel.read_text() if channel else ""
    return text.count("Received response 'textDocument/codeAction")


def test_no_lightbulb_without_a_selection_and_the_guards_refusal_defaults_to_discard(
    workbench: Workbench, vscode: VSCode
) -> None:
    vscode.replay.script("/v1/completions", completion_reply("", repeat=50))
    vscode.replay.script("/v1/chat/completions", chat_reply(NUMBERS))
    (workbench.folder / "total.py").write_text(TOTAL)
    workbench.open_file("total.py")
    workbench.goto(2, 1)
    workbench.press("Shift+ArrowDown", "Shift+End")  # a selection: the refactor actions
    lightbulb = workbench.page.locator(LIGHTBULB)
    lightbulb.first.wait_for(state="visible", timeout=20_000)
    asked = code_action_answers(vscode)
    workbench.press("ArrowRight")  # no selection any more
    workbench.goto(4)
    wait_until(lambda: code_action_answers(vscode) > asked, "VS Code's ask at the caret")
    wait_until(
        lambda: not lightbulb.first.is_visible(), "the lightbulb to go (nothing to offer here)"
    )
    # Asked for (Ctrl+.), the empty selection does offer "Generate code here…".
    workbench.press("Control+.")
    rows = workbench.page.locator(".action-widget .monaco-list-row")
    rows.filter(has_text="Generate code here").first.wait_for(timeout=20_000)
    workbench.press("Escape")

    # The refactor guard refuses the answer: the question's default is Discard.
    select_the_body_and_open_the_code_actions(workbench)
    pick_action(workbench, "QodeAssist: Improve")

    workbench.page.locator(DIALOG).wait_for(timeout=30_000)
    dialog = dialog_parts(workbench)
    assert dialog["title"].startswith("QodeAssist refactor: "), dialog
    assert "repeats itself" in dialog["title"], dialog
    assert "QodeAssist: QodeAssist" not in dialog["title"], dialog
    assert "-    for x in xs:" in dialog["detail"], dialog  # the diff keeps its indentation
    assert "-        s = s + x" in dialog["detail"], dialog
    # (VS Code draws the primary button last on Linux: the order on screen is not the server's.)
    assert sorted(dialog["buttons"]) == ["Apply anyway", "Cancel", "Discard"], dialog
    assert dialog["focused"] == "Discard", dialog  # the default: Enter takes the safe choice
    workbench.press("Enter")
    workbench.page.locator(DIALOG).wait_for(state="hidden", timeout=10_000)
    workbench.focus_editor()
    workbench.save()
    assert (workbench.folder / "total.py").read_text().startswith("def total(xs):\n    s = 0\n")


def test_a_permission_question_is_readable_and_a_broken_edit_asks_again(
    workbench: Workbench, vscode: VSCode
) -> None:
    edit = {
        "path": "add.py",
        "edits": [
            {
                "search": "def add(a, b):\n    return \n",
                "replace": "def add(a, b):\n    return (a +\n",
            }
        ],
    }
    vscode.replay.script(
        "/v1/chat/completions",
        [tool_call("call_1", "edit_file", edit), chat_reply("I proposed the fix.")],
    )
    before = (workbench.folder / "add.py").read_text()
    workbench.open_file("add.py")
    chat = send(workbench, "Make add return the sum")

    workbench.page.locator(DIALOG).wait_for(timeout=30_000)
    question = dialog_parts(workbench)
    shown = question["title"] + "\n" + question["detail"]
    assert "edit_file" in shown and "add.py" in shown, question
    assert "+    return (a +" in question["detail"], question  # a diff line, indented
    assert '{"path"' not in shown and "\\n" not in shown, question  # not raw JSON
    assert "Allow once" in question["buttons"], question
    workbench.page.locator(DIALOG).get_by_role("button", name="Allow once").click()

    answer = chat.locator(".message.assistant").last
    wait_until(lambda: "I proposed the fix." in answer.inner_text(), "the answer after the tool")
    card = answer.locator(".block-fileEdit")
    warning = card.locator(".edit-warning")
    warning.wait_for(timeout=20_000)
    assert "This edit breaks the file" in warning.inner_text()
    apply = card.locator('button[data-edit-action="apply"]')
    assert apply.inner_text().strip() == "Apply anyway…"
    apply.click()
    workbench.page.locator(DIALOG).wait_for(timeout=10_000)  # asked again
    confirm = dialog_parts(workbench)
    assert "breaks" in (confirm["title"] + confirm["detail"]), confirm
    assert sorted(confirm["buttons"]) == ["Apply anyway", "Cancel", "Don't apply"], confirm
    assert confirm["focused"] == "Don't apply", confirm  # the default keeps the file
    workbench.press("Enter")
    workbench.page.locator(DIALOG).wait_for(state="hidden", timeout=10_000)
    assert "pending" in card.inner_text()
    assert (workbench.folder / "add.py").read_text() == before
    assert workbench.line_text(2) == "    return "


def status_tooltip(workbench: Workbench) -> list[str]:
    """Hover the status bar item; the tooltip's blocks (paragraphs and list items)."""
    workbench.status_item().hover()
    hover = workbench.page.locator(".workbench-hover, .monaco-hover").filter(has_text="QodeAssist")
    hover.first.wait_for(timeout=10_000)
    return [
        re.sub(r"\s+", " ", text).strip()
        for text in hover.first.locator("p, li").all_inner_texts()
        if text.strip()
    ]


def test_a_provider_outage_while_typing_is_one_warning_in_the_status_item(
    workbench: Workbench, vscode: VSCode
) -> None:
    failure = Reply.json({"error": {"message": "model crashed"}}, status=500, repeat=40)
    vscode.replay.script("/v1/completions", failure)
    workbench.open_file("add.py")
    workbench.goto(2)
    for key in "a + b":  # several requests, each one failing upstream
        workbench.type(key, delay_ms=400)
    wait_until(
        lambda: len([r for r in vscode.replay.requests if r.path == "/v1/completions"]) >= 2,
        "two failed completion requests",
        timeout=30,
    )
    # Degraded (a warning), or down (an error) once the provider failed several times in a row.
    wait_until(
        lambda: {"codicon-warning", "codicon-error"} & set(workbench.status_icons().split()),
        "the status bar item to show the outage",
        timeout=30,
    )

    blocks = wait_until(
        lambda: (b := status_tooltip(workbench)) and any("Fix:" in x for x in b) and b,
        "the outage in the status tooltip",
    )
    assert "degraded" in blocks[0] and "ready" not in blocks[0], blocks
    outage = next(b for b in blocks if "Fix:" in b)
    assert "failed" in outage and "qodeassist-lsp doctor" in outage, blocks
    # Separate lines: the summary items are list items of their own, no empty pipeline.
    assert any(b.startswith("Inline completion: on") for b in blocks), blocks
    assert not any("Inline completion" in b and "Agents:" in b for b in blocks), blocks
    assert not any(re.search(r"chatRouter:\s*$", b) for b in blocks), blocks
    assert not any(re.search(r"p50 0 ms", b) for b in blocks), blocks
    # No toast per failed request: at most one notification, a warning, not an error.
    toasts = [t for t in workbench.notifications() if "QodeAssist" in t or "inline" in t.lower()]
    assert len(toasts) <= 1, toasts
    assert not any("Request textDocument" in t for t in toasts), toasts
    assert workbench.page.locator(".notification-toast .codicon-error").count() == 0


def composer_layout(chat: Any) -> dict[str, Any]:
    """Boxes of the composer's buttons and the token count in the chat view's document."""
    return dict(
        chat.locator("#composer").evaluate(
            """(composer) => {
              const box = (id) => {
                const e = document.getElementById(id);
                const r = e.getBoundingClientRect();
                return { left: r.left, right: r.right, top: r.top, bottom: r.bottom,
                         height: r.height, hidden: e.hidden, text: e.textContent.trim(),
                         disabled: !!e.disabled };
              };
              return { width: document.documentElement.clientWidth,
                       send: box('send'), stop: box('stop'), link: box('link'),
                       tokens: box('tokens') };
            }"""
        )
    )


def test_the_composer_fits_the_sidebar_and_waits_while_an_answer_runs(
    workbench: Workbench, vscode: VSCode
) -> None:
    held = b'data: {"choices": [{"index": 0, "delta": {"content": "Still thinking"}}]}\n\n'
    vscode.replay.script(
        "/v1/chat/completions",
        [chat_reply("It adds two numbers."), sse_reply(held, hold_open=True)],
    )
    chat = send(workbench, "What does add do?")
    answer = chat.locator(".message.assistant").last
    wait_until(
        lambda: "status-finished" in (answer.get_attribute("class") or ""), "the first answer"
    )
    layout = wait_until(
        lambda: (box := composer_layout(chat))["tokens"]["text"] and box,
        "the token count in the composer",
    )
    # The default sidebar width: Send whole (not clipped), "Link file" on one line.
    assert layout["send"]["right"] <= layout["width"], layout
    assert layout["send"]["left"] >= 0 and layout["send"]["height"] > 0, layout
    assert layout["link"]["height"] <= layout["send"]["height"] + 1, layout

    chat.locator("#input").fill("And sub?")
    chat.locator("#input").press("Enter")
    wait_until(lambda: "Still thinking" in chat.locator(".message.assistant").last.inner_text(),
               "the second answer streaming")  # fmt: skip
    busy = composer_layout(chat)
    assert busy["send"]["disabled"] and not busy["stop"]["hidden"], busy
    assert busy["stop"]["right"] <= busy["width"] and busy["send"]["right"] <= busy["width"], busy
    chat.locator("#input").fill("Too early?")
    chat.locator("#input").press("Enter")
    assert chat.locator("#input").input_value() == "Too early?"  # kept, not sent
    chat.locator("#stop").click()
    wait_until(lambda: not composer_layout(chat)["send"]["disabled"], "Send enabled again")
    sent = [r for r in vscode.replay.requests if r.path == "/v1/chat/completions"]
    assert len(sent) == 2 and "Too early?" not in json.dumps(sent[-1].json), sent
