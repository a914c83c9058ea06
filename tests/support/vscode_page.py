"""One VS Code workbench page in Chromium, driven like a user would (Playwright, sync API).

Every helper types or clicks; reading back uses the DOM VS Code renders (``.view-lines`` for
the visible text, ``span.ghost-text-decoration`` for inline suggestions, the status bar item,
the chat view's webview frames). `screenshot` keeps a picture of the page for failures.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from tests.support.vscode_web import wait_until

STATUS_ITEM = '[id$="qodeassist.status"]'
GHOST = "span.ghost-text-decoration, span.ghost-text-decoration-preview"


class Workbench:
    """A page showing ``folder`` in code-server at ``url``."""

    def __init__(self, page: Any, url: str, folder: Path) -> None:
        """Wrap ``page`` (not yet loaded)."""
        self.page = page
        self.url = url
        self.folder = folder

    def load(self) -> None:
        """Open the folder and wait until QodeAssist's status bar item says the server is up."""
        self.page.goto(f"{self.url}/?folder={self.folder}", wait_until="domcontentloaded")
        self.page.wait_for_selector(".monaco-workbench", timeout=60_000)
        self.wait_status("codicon-sparkle", timeout=60)

    # ------------------------------------------------------------------ status bar
    def status_item(self) -> Any:
        """The QodeAssist status bar item's locator."""
        return self.page.locator(STATUS_ITEM).first

    def status_icons(self) -> str:
        """The class names of the icons in the status bar item ('' when it is not there)."""
        item = self.status_item()
        if item.count() == 0:
            return ""
        return " ".join(
            item.locator(".codicon").evaluate_all("els => els.map(e => e.className)") or []
        )

    def wait_status(self, icon: str, timeout: float = 20) -> None:
        """Wait until the status bar item shows ``icon`` (e.g. ``codicon-error``)."""
        wait_until(
            lambda: icon in self.status_icons(),
            f"the QodeAssist status bar item to show {icon}",
            timeout,
            lambda: f"\nstatus item icons: {self.status_icons()!r}",
        )

    # ------------------------------------------------------------------ keyboard
    def press(self, *keys: str) -> None:
        """Press each key chord in turn."""
        for key in keys:
            self.page.keyboard.press(key)

    def type(self, text: str, delay_ms: int = 60) -> None:
        """Type ``text`` key by key."""
        self.page.keyboard.type(text, delay=delay_ms)

    def quick_input(self, text: str) -> None:
        """Type into the open quick input (quick open, palette, input box) and press Enter."""
        box = self.page.locator(".quick-input-widget input").first
        box.wait_for(state="visible", timeout=10_000)
        box.fill(text)
        time.sleep(0.3)
        self.press("Enter")

    def command(self, title: str) -> None:
        """Run a command from the command palette by its title."""
        self.press("F1")
        self.quick_input(f">{title}")

    def open_file(self, name: str) -> None:
        """Quick-open ``name`` (Ctrl+P) and wait for its editor tab to be active."""
        self.press("Control+p")
        box = self.page.locator(".quick-input-widget input").first
        box.wait_for(state="visible", timeout=10_000)
        box.fill(name)
        self.page.locator(".quick-input-list .monaco-list-row").first.wait_for(timeout=15_000)
        self.press("Enter")
        self.page.locator(f'.tab.active[data-resource-name="{name}"]').wait_for(timeout=15_000)
        self.page.locator(".monaco-editor .view-lines").first.wait_for(timeout=15_000)
        self.focus_editor()

    def focus_editor(self) -> None:
        """Put the keyboard focus in the active editor."""
        self.page.locator(".editor-group-container.active .monaco-editor textarea").first.focus()

    def goto(self, line: int, column: int | None = None) -> None:
        """Ctrl+G to ``line`` (1-based), then End, or ``column`` (1-based) when given."""
        self.press("Control+g")
        self.quick_input(f":{line}:{column}" if column else f":{line}")
        self.page.locator(".quick-input-widget").first.wait_for(state="hidden", timeout=10_000)
        self.focus_editor()
        if column is None:
            self.press("End")
        # Keys typed before the editor has the focus back are not "typing" for inline
        # suggestions: wait for the cursor to be where it was sent.
        wait_until(lambda: f"Ln {line}," in self.cursor_position(), f"the cursor on line {line}")
        time.sleep(0.3)

    def cursor_position(self) -> str:
        """The status bar's "Ln X, Col Y"."""
        item = self.page.locator("#status\\.editor\\.selection")
        return item.inner_text() if item.count() else ""

    def chat_frame(self) -> Any:
        """The chat view's webview document (a frame inside VS Code's webview frame)."""
        return self.page.frame_locator("iframe.webview.ready").first.frame_locator(
            "iframe#active-frame"
        )

    # ------------------------------------------------------------------ reading back
    def ghost_text(self) -> str:
        """The inline suggestion's visible text ('' when none is shown)."""
        ghosts = self.page.locator(GHOST)
        return "".join(ghosts.all_inner_texts()).replace("\u00a0", " ")

    def wait_ghost(self, timeout: float = 20) -> str:
        """Wait for an inline suggestion and return its text."""
        return str(wait_until(self.ghost_text, "ghost text", timeout))

    def line_text(self, line: int) -> str:
        """The rendered text of editor line ``line`` (1-based; it must be on screen)."""
        return str(
            self.page.evaluate(
                """(line) => {
                  const editor = document.querySelector('.editor-group-container.active .monaco-editor');
                  const rows = [...editor.querySelectorAll('.view-lines .view-line')];
                  const top = (r) => parseFloat(r.style.top);
                  rows.sort((a, b) => top(a) - top(b));
                  const numbers = [...editor.querySelectorAll('.line-numbers')]
                    .map((n) => [parseFloat(n.parentElement.style.top), n.textContent.trim()]);
                  const wanted = numbers.find(([, text]) => text === String(line));
                  const row = wanted && rows.find((r) => top(r) === wanted[0]);
                  if (!row) return null;
                  const copy = row.cloneNode(true);  // without the ghost text of a suggestion
                  copy.querySelectorAll('[class*="ghost-text"]').forEach((g) => g.remove());
                  return copy.textContent.replace(/\\u00a0/g, ' ');
                }""",
                line,
            )
        )

    def save(self) -> None:
        """Ctrl+S, then wait until the active tab is no longer dirty."""
        self.press("Control+s")
        wait_until(
            lambda: self.page.locator(".tab.active.dirty").count() == 0, "the file to be saved"
        )

    def notifications(self) -> list[str]:
        """The texts of the notifications on screen."""
        return [
            re.sub(r"\s+", " ", t).strip()
            for t in self.page.locator(".notification-list-item-message").all_inner_texts()
        ]

    def screenshot(self, path: Path) -> Path:
        """Save a full-page picture to ``path``."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(path), full_page=True)
        return path
