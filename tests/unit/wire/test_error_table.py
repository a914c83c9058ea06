"""The one error table: every error class is answered by its kind's row at every door."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import httpx
import pytest
from acp import RequestError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from qodeassist_lsp.acp_agent.agent import QodeAssistAgent
from qodeassist_lsp.acp_agent.errors import answering
from qodeassist_lsp.config.confinement import OutsideAllowedRoots
from qodeassist_lsp.core.agent_pool import NoAgentMeets, PoolBusy
from qodeassist_lsp.core.breaker import CircuitOpenError
from qodeassist_lsp.features.chat.files import ChatBusy, ChatInputError
from qodeassist_lsp.features.chat.store import ChatNotFound
from qodeassist_lsp.http_api.errors import ApiError, exception_handlers
from qodeassist_lsp.http_api.host import NotReady
from qodeassist_lsp.lsp.errors import RequestFailed, rpc_error
from qodeassist_lsp.skills.library import UnknownSkill
from qodeassist_lsp.wire.error_table import TABLE, category_status
from qodeassist_lsp.wire.errors import (
    CategorizedError,
    ErrorCategory,
    ErrorInfo,
    ErrorKind,
    QodeAssistError,
    kind_of,
)

from .test_errors import package_exceptions


def _instance(cls: type[QodeAssistError]) -> QodeAssistError:
    """An instance of ``cls`` with a message, whatever its constructor takes."""
    if cls is ApiError:
        return ApiError(400, "bad")
    exc = cls.__new__(cls)
    exc.args = ("something is wrong",)
    exc.__dict__["message"] = "something is wrong"  # what a custom __str__ may read
    if isinstance(exc, CategorizedError):
        exc.info = ErrorInfo(ErrorCategory.PROVIDER, "something is wrong")
    return exc


def _tree_classes() -> list[type[QodeAssistError]]:
    return sorted(
        (
            cls
            for cls in package_exceptions()
            if issubclass(cls, QodeAssistError) and cls is not RequestFailed
        ),
        key=lambda cls: cls.__qualname__,
    )


async def _http_statuses(errors: list[QodeAssistError]) -> list[httpx.Response]:
    async def fail(request: Request) -> None:
        raise errors[int(request.path_params["n"])]

    app = Starlette(
        routes=[Route("/fail/{n}", fail, methods=["POST"])],
        exception_handlers=exception_handlers(),
    )
    transport = httpx.ASGITransport(app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        return [await http.post(f"/fail/{n}") for n in range(len(errors))]


async def test_every_error_class_is_answered_by_its_kinds_row_at_every_door() -> None:
    classes = _tree_classes()
    assert len(classes) >= 40
    errors = [_instance(cls) for cls in classes]
    answers = await _http_statuses(errors)
    for exc, http in zip(errors, answers, strict=True):
        kind = kind_of(exc)
        row = TABLE[kind]
        assert rpc_error(exc).code == row.lsp, type(exc)

        @answering
        async def raising(exc: QodeAssistError = exc) -> None:
            raise exc

        with pytest.raises(RequestError) as acp:
            await raising()
        assert acp.value.code == row.acp, type(exc)
        status = row.status
        if kind is ErrorKind.FAILED and isinstance(exc, CategorizedError):
            status = category_status(str(exc.info.category))
        assert http.status_code == status, type(exc)
        assert http.json()["error"]["message"], type(exc)


@pytest.mark.parametrize(
    ("cls", "kind"),
    [
        (ChatNotFound, ErrorKind.NOT_FOUND),
        (UnknownSkill, ErrorKind.NOT_FOUND),
        (NoAgentMeets, ErrorKind.NOT_FOUND),
        (ChatInputError, ErrorKind.INVALID),
        (OutsideAllowedRoots, ErrorKind.REFUSED),
        (ChatBusy, ErrorKind.BUSY),
        (PoolBusy, ErrorKind.UNAVAILABLE),
        (CircuitOpenError, ErrorKind.UNAVAILABLE),
        (NotReady, ErrorKind.UNAVAILABLE),
        (CategorizedError, ErrorKind.FAILED),
        (QodeAssistError, ErrorKind.FAILED),
    ],
)
def test_the_kinds_of_the_classes_the_doors_refuse_most(
    cls: type[QodeAssistError], kind: ErrorKind
) -> None:
    assert kind_of(_instance(cls)) is kind


async def test_the_http_door_answers_by_class_not_by_message() -> None:
    errors: list[QodeAssistError] = [
        ChatNotFound("the chat 'x' was deleted"),  # no "no chat " prefix: still a 404
        OutsideAllowedRoots("/etc/passwd", "/etc/passwd lies outside the workspace"),
        UnknownSkill("no skill 'nope'"),
        PoolBusy("every agent stayed busy"),
        NotReady("the configuration is loading"),
        CircuitOpenError(ErrorInfo(ErrorCategory.PROVIDER, "open", retry_after=12)),
        ChatBusy("c1", "r1"),
    ]
    answers = await _http_statuses(errors)
    got = [(a.status_code, a.json()["error"]["type"], a.json()["error"]["code"]) for a in answers]
    assert got == [
        (404, "not_found_error", "not_found"),
        (403, "permission_error", "refused"),
        (404, "not_found_error", "not_found"),
        (503, "server_error", "pool_busy"),
        (503, "server_error", "not_ready"),
        (503, "server_error", "circuit_open"),
        (409, "invalid_request_error", "chat_busy"),
    ]
    assert [a.headers.get("retry-after") for a in answers[3:6]] == ["5", "2", "12"]
    assert answers[6].headers["x-should-retry"] == "false"


async def test_the_acp_door_answers_an_unknown_chat_as_invalid_params() -> None:
    class _Chats:
        def open_new(self) -> str:
            return "new"

        def get(self, chat_id: str) -> dict[str, Any]:
            raise ChatNotFound(f"no chat {chat_id!r}")

    async def no_servers(_servers: object) -> None:
        return None

    host = SimpleNamespace(
        runtime=None,
        documents=None,
        chat_service=lambda _cwd, _sink: _Chats(),
        add_client_servers=no_servers,
        bench=SimpleNamespace(ports=SimpleNamespace(documents=None)),
    )
    agent = QodeAssistAgent(cast("Any", host))
    agent.on_connect(cast("Any", object()))
    with pytest.raises(RequestError) as refused:
        await agent.load_session(str(Path.cwd()), "gone")
    assert refused.value.code == -32602
    assert refused.value.data == {"message": "no chat 'gone'"}


def test_the_lsp_door_answers_pool_and_busy_refusals_by_the_table() -> None:
    assert rpc_error(PoolBusy("busy")).code == -32803
    assert rpc_error(ChatBusy("c1", "r1")).code == -32600
    assert rpc_error(ChatNotFound("no chat 'x'")).code == -32602
