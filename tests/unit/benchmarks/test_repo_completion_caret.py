"""The repository-level benchmark tells the caret as our editor clients do (or not, on request)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("rapidfuzz")  # the bench extra

from benchmarks.repo_completion import Server, Task
from benchmarks.typing_replay import Proxy


class FakeClient:
    """Records what the benchmark sends; answers status and completion requests."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.sent.append((method, params))

    async def request(self, method: str, params: dict[str, Any], within: float = 0) -> Any:
        self.sent.append((method, params))
        if method == "qodeassist/status":
            return {"completion": {"warmUps": 0}}
        return {"items": [{"insertText": "URL(url)\nmore"}]}


def _run(caret: bool, tmp_path: Path) -> list[tuple[str, dict[str, Any]]]:
    server = Server(tmp_path, "plain", Proxy(1))
    client = FakeClient()
    server.client = client  # type: ignore[assignment]
    task = Task("p/a.py", 3, 8, "URL", "text", "URL(url)")
    got, _, counts = asyncio.run(server.complete(task, 5.0, caret=caret))
    assert got == "URL(url)"
    assert counts["warm_ups"] == 0
    return [entry for entry in client.sent if entry[0] != "qodeassist/status"]


def test_the_caret_goes_to_the_line_right_after_the_open(tmp_path: Path) -> None:
    methods = [method for method, _ in _run(True, tmp_path)]
    assert methods[:3] == [
        "textDocument/didOpen",
        "qodeassist/didMoveCursor",
        "textDocument/inlineCompletion",
    ]
    hint = dict(_run(True, tmp_path))["qodeassist/didMoveCursor"]
    assert hint["position"] == {"line": 3, "character": 8}
    assert hint["textDocument"]["uri"].endswith("/project/p/a.py")


def test_no_caret_hint_sends_no_caret(tmp_path: Path) -> None:
    methods = [method for method, _ in _run(False, tmp_path)]
    assert "qodeassist/didMoveCursor" not in methods
    assert methods[0] == "textDocument/didOpen"
