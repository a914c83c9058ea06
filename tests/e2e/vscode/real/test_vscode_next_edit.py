"""Next-edit suggestions in a real VS Code: rename a function, Tab takes its calls along.

With ``qodeassist.inlineCompletion.nextEdit`` on in the user's settings, a user renames ``area``
in its definition. Half a second later the extension asks the server
(``textDocument/copilotInlineEdit``), the server asks the loopback provider (which answers the
rewritten window, as the model would), and the edit — the two calls, lines away from the
cursor — is shown as the replaced text highlighted and a block of the new lines to its right,
one row per line. Tab accepts it; the file is
compared on disk, and the server's ``nextEdit`` counters show it was shown and accepted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from tests.e2e.vscode.real.conftest import VSCode
from tests.support.streams import chat_reply
from tests.support.vscode_page import Workbench
from tests.support.vscode_web import wait_until

DOC = "def area(w, h):\n    return w * h\n\n\nprint(area(2, 3))\nprint(area(4, 5))\n"
RENAMED = DOC.replace("def area", "def surface")
SUGGESTED = RENAMED.replace("print(area", "print(surface")


@pytest.fixture
def next_edit_on(vscode: VSCode) -> Iterator[None]:
    """Turn next edit on in the user's settings for one test (before its page loads)."""
    path = vscode.server.user_data / "User" / "settings.json"
    before = path.read_text()
    vscode.server.write_settings(
        {**json.loads(before), "qodeassist.inlineCompletion.nextEdit": True}
    )
    try:
        yield
    finally:
        path.write_text(before)


def rewrite(text: str) -> str:
    """The chat format's answer: the whole window, rewritten."""
    return f"<updated>\n{text.rstrip(chr(10))}\n</updated>"


def decoration_text(workbench: Workbench) -> str:
    """The next edit's preview block on screen: the rows right of the lines, one per line.

    Each line's text with its decorations (injected text, or CSS ``::before``/``::after``
    content: VS Code renders either), from the line whose row starts with ``→`` on; empty when
    no preview is shown.
    """
    return str(
        workbench.page.evaluate(
            """() => {
              const editor = document.querySelector('.editor-group-container.active .monaco-editor');
              const pseudo = (s, which) => {
                const c = getComputedStyle(s, which).content;
                return c && c !== 'none' && c !== 'normal' ? c.replace(/^"|"$/g, '') : '';
              };
              const lines = [...editor.querySelectorAll('.view-lines .view-line')]
                .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
                .map((line) => [...line.querySelectorAll('span')]
                  .filter((s) => !s.children.length)
                  .map((s) => pseudo(s, '::before') + s.textContent + pseudo(s, '::after'))
                  .join('').replace(/\u00a0/g, ' '));
              const first = lines.findIndex((t) => t.includes('\u2192'));
              if (first < 0) {
                return '';
              }
              return lines.slice(first).map((t) => t.includes('\u2192')
                ? t.split('\u2192').pop() : t).join('\\n');
            }"""
        )
    )


def status_counters(workbench: Workbench) -> dict[str, int]:
    """``nextEdit.shown`` / ``accepted`` from **QodeAssist: Show Server Status**'s document."""
    workbench.command("QodeAssist: Show Server Status")
    workbench.page.locator('.tab.active[data-resource-name^="Untitled"]').wait_for(timeout=15_000)
    workbench.focus_editor()
    workbench.press("Control+f")
    workbench.type('"nextEdit"')
    workbench.press("Escape")  # the cursor stays on the match, which is scrolled into view
    text = workbench.page.locator(
        ".editor-group-container.active .monaco-editor .view-lines"
    ).inner_text()
    block = text.replace("\u00a0", " ").split('"nextEdit"', 1)[-1]
    return {k: int(v) for k, v in re.findall(r'"(shown|accepted)": (\d+)', block)[:2]}


def test_a_next_edit_suggestion_is_shown_and_accepted(
    next_edit_on: None, workbench: Workbench, vscode: VSCode
) -> None:
    (workbench.folder / "geo.py").write_text(DOC)
    # Repeated: a pause while typing may ask before the rename is complete.
    vscode.replay.script("/v1/chat/completions", chat_reply(rewrite(SUGGESTED), repeat=10))
    workbench.open_file("geo.py")
    workbench.goto(1, 5)
    workbench.press("Control+Shift+ArrowRight")  # select "area"
    workbench.type("surface")

    preview = wait_until(
        lambda: "surface" in (shown := decoration_text(workbench)) and shown,
        "the next edit's preview after the calls",
        timeout=40,
        explain=lambda: f"\nchat requests: {len(vscode.replay.requests)}",
    )
    # A block of rows, one per new line, right of the lines they replace (issue 47, item 5).
    assert "print(surface(2, 3))" in preview, preview
    assert "print(area(4, 5))" in preview and "print(surface(4, 5))" in preview, preview
    assert "\u23ce" not in preview, preview  # not flattened into one line with ⏎
    prompt = vscode.replay.last_to("/v1/chat/completions").json["messages"][-1]["content"]
    assert "def surface<|cursor|>(w, h):" in prompt, prompt
    assert workbench.line_text(5) == "print(area(2, 3))"  # shown, not applied

    workbench.press("Tab")
    wait_until(lambda: workbench.line_text(6) == "print(surface(4, 5))", "the accepted edit")
    assert workbench.line_text(5) == "print(surface(2, 3))"
    assert workbench.line_text(1) == "def surface(w, h):"  # the cursor's line: no tab typed
    assert decoration_text(workbench) == ""
    workbench.save()
    assert (workbench.folder / "geo.py").read_text() == SUGGESTED

    # Accepting ran the edit's command: the server counted it.
    counters = wait_until(
        lambda: (c := status_counters(workbench)).get("accepted") == 1 and c,
        "the server to count the accepted next edit",
        timeout=20,
    )
    assert counters["shown"] >= 1, counters  # an early pause while typing may show one more
