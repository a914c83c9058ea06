"""What the tool kit gets from the editor: the permission asker and the diagnostics answer."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from lsprotocol import types

from qodeassist_lsp.lsp import tool_handlers
from qodeassist_lsp.lsp.tool_handlers import EditorDiagnostics, ShowMessageAsker
from qodeassist_lsp.tools.diagnostics import DiagnosticsUnavailable

WINDOW = types.WindowClientCapabilities(show_message=types.ShowMessageRequestClientCapabilities())


class Server:
    """The little of ``QodeAssistServer`` the asker and the diagnostics source use."""

    def __init__(self, window: types.WindowClientCapabilities | None, answer: Any) -> None:
        self.client_capabilities = types.ClientCapabilities(window=window)
        self.answer = answer
        self.sent: list[Any] = []
        self.protocol = SimpleNamespace(send_request_async=self._request)

    async def window_show_message_request_async(self, params: Any) -> Any:
        self.sent.append(params)
        return await self._reply()

    async def _request(self, method: str, params: Any) -> Any:
        self.sent.append((method, params))
        return await self._reply()

    async def _reply(self) -> Any:
        if isinstance(self.answer, BaseException):
            raise self.answer
        if self.answer == "hang":
            await asyncio.sleep(3600)
        return self.answer


async def test_the_asker_returns_the_chosen_title() -> None:
    server = Server(WINDOW, types.MessageActionItem(title="Allow once"))
    answer = await ShowMessageAsker(server).ask("run?", ["Allow once", "Deny"])  # type: ignore[arg-type]
    assert answer == "Allow once"
    [params] = server.sent
    assert params.message == "run?" and [a.title for a in params.actions] == ["Allow once", "Deny"]


@pytest.mark.parametrize(
    ("window", "answer"),
    [(None, "never sent"), (WINDOW, None), (WINDOW, RuntimeError("client failed"))],
    ids=["no-capability", "dismissed", "client-error"],
)
async def test_no_capability_no_answer_or_an_error_is_no_answer(window: Any, answer: Any) -> None:
    server = Server(window, answer)
    assert await ShowMessageAsker(server).ask("run?", ["Deny"]) is None  # type: ignore[arg-type]
    assert len(server.sent) == (0 if window is None else 1)


async def test_an_unanswered_question_times_out_as_no_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tool_handlers, "ASK_TIMEOUT_S", 0.05)
    server = Server(WINDOW, "hang")
    assert await ShowMessageAsker(server).ask("run?", ["Deny"]) is None  # type: ignore[arg-type]


async def test_diagnostics_are_read_from_the_editors_answer(tmp_path: Path) -> None:
    source = tmp_path / "a.py"
    answer = [
        {
            "uri": source.as_uri(),
            "diagnostics": [
                {
                    "range": {"start": {"line": 3, "character": 4}, "end": {}},
                    "severity": 2,
                    "message": " unused ",
                    "source": "ruff",
                },
                {"range": {"start": {"line": 0, "character": 0}}, "message": "no severity"},
            ],
        }
    ]
    server = Server(WINDOW, answer)
    found = await EditorDiagnostics(server).diagnostics(source)  # type: ignore[arg-type]
    assert [(d.path, d.line, d.column, d.severity, d.message, d.source) for d in found] == [
        (source, 4, 5, "warning", "unused", "ruff"),
        (source, 1, 1, "error", "no severity", ""),
    ]
    assert server.sent == [("qodeassist/diagnostics", {"uri": source.as_uri()})]
    wrapped = Server(WINDOW, {"items": answer})
    assert len(await EditorDiagnostics(wrapped).diagnostics(None)) == 2  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "answer",
    [RuntimeError("MethodNotFound: qodeassist/diagnostics"), [{"uri": 3}], [{"nope": 1}]],
    ids=["not-implemented", "malformed-uri", "malformed-entry"],
)
async def test_an_editor_that_does_not_provide_diagnostics(answer: Any) -> None:
    with pytest.raises(DiagnosticsUnavailable):
        await EditorDiagnostics(Server(WINDOW, answer)).diagnostics(None)  # type: ignore[arg-type]
