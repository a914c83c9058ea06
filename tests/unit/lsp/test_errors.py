"""The one error mapping: where an error sits in the tree decides its JSON-RPC answer."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from qodeassist_lsp.lsp.errors import InvalidParams, RequestFailed, answering, rpc_error
from qodeassist_lsp.lsp.server import QodeAssistServer
from qodeassist_lsp.wire.errors import (
    CategorizedError,
    ErrorCategory,
    ErrorInfo,
    QodeAssistError,
)


class _NotFound(QodeAssistError, LookupError):
    pass


class _Refused(QodeAssistError, PermissionError):
    pass


@pytest.mark.parametrize(
    ("error", "code", "message"),
    [
        (InvalidParams("scope must be user"), -32602, "scope must be user"),
        (_NotFound("no chat 'x'"), -32602, "no chat 'x'"),
        (_Refused("outside the roots"), -32602, "outside the roots"),
        (QodeAssistError("the keyring refused"), -32803, "the keyring refused"),
        (
            CategorizedError(ErrorInfo(ErrorCategory.AUTH, "the key was refused")),
            -32803,
            "auth error: the key was refused",
        ),
        (RequestFailed("partly restored"), -32803, "partly restored"),
    ],
)
def test_the_tree_decides_code_and_message(error: QodeAssistError, code: int, message: str) -> None:
    answer = rpc_error(error)
    assert (answer.code, answer.message) == (code, message)


def test_a_categorized_error_carries_its_category() -> None:
    answer = rpc_error(CategorizedError(ErrorInfo(ErrorCategory.NETWORK, "refused")))
    assert answer.data == {"category": "network"}


async def test_a_handler_raises_and_the_server_answers() -> None:
    server = QodeAssistServer()
    sent: list[dict[str, Any]] = []

    class Sink:
        def write(self, data: bytes) -> None:
            sent.append(json.loads(data.split(b"\r\n\r\n", 1)[1]))

        def close(self) -> None:
            pass

    @server.feature("test/lookup")
    async def lookup(ls: QodeAssistServer, params: Any) -> None:
        raise _NotFound("no chat 'nope'")

    @server.command("test.refuse")
    def refuse(ls: QodeAssistServer, *args: Any) -> None:
        raise QodeAssistError("cannot")

    server.protocol.set_writer(Sink())
    for ident, message in (
        (1, {"method": "test/lookup", "params": {}}),
        (
            2,
            {
                "method": "workspace/executeCommand",
                "params": {"command": "test.refuse", "arguments": []},
            },
        ),
    ):
        server.protocol.handle_message(
            server.protocol.structure_message({"jsonrpc": "2.0", "id": ident, **message})
        )
    for _ in range(200):
        if len(sent) == 2:
            break
        await asyncio.sleep(0.01)
    errors = {m["id"]: m["error"] for m in sent}
    assert errors[1]["code"] == -32602 and errors[1]["message"] == "no chat 'nope'"
    assert errors[2]["code"] == -32803 and errors[2]["message"] == "cannot"


def test_sync_and_async_handlers_stay_what_they_were() -> None:
    async def later() -> None:
        raise InvalidParams("bad")

    def now() -> None:
        raise JsonRpcException("as is", code=-32001)

    wrapped = answering(later)
    assert asyncio.iscoroutinefunction(wrapped)
    with pytest.raises(JsonRpcInvalidParams, match="bad"):
        asyncio.run(wrapped())
    with pytest.raises(JsonRpcException, match="as is"):
        answering(now)()


async def test_a_typed_handler_gets_its_model_and_a_bad_param_is_refused_naming_the_field() -> None:
    from qodeassist_lsp.lsp.params import ChatIdParams

    server = QodeAssistServer()
    got: list[ChatIdParams] = []
    sent: list[dict[str, Any]] = []
    answered = asyncio.Event()

    class Sink:
        def write(self, data: bytes) -> None:
            sent.append(json.loads(data.split(b"\r\n\r\n", 1)[1]))
            if len(sent) == 2:
                answered.set()

        def close(self) -> None:
            pass

    @server.feature("test/typed")
    async def typed(ls: QodeAssistServer, args: ChatIdParams) -> str:
        got.append(args)
        return args.chat_id

    server.protocol.set_writer(Sink())
    for ident, params in ((1, {"chatId": "c1", "extra": 1}), (2, {"chat": "c1"})):
        server.protocol.handle_message(
            server.protocol.structure_message(
                {"jsonrpc": "2.0", "id": ident, "method": "test/typed", "params": params}
            )
        )
    await asyncio.wait_for(answered.wait(), 10)
    answers = {m["id"]: m for m in sent}
    assert answers[1]["result"] == "c1"
    assert [type(a).__name__ for a in got] == ["ChatIdParams"]  # the bad one never ran
    assert answers[2]["error"]["code"] == -32602
    assert "chatId" in answers[2]["error"]["message"]


def test_no_handler_takes_its_params_as_a_dict() -> None:
    import importlib
    import inspect
    import pkgutil

    import qodeassist_lsp.lsp
    from qodeassist_lsp.lsp import params
    from qodeassist_lsp.lsp.errors import params_model

    typed = 0
    for module in pkgutil.iter_modules(qodeassist_lsp.lsp.__path__):
        if not module.name.endswith("_handlers"):
            continue
        for value in vars(importlib.import_module(f"qodeassist_lsp.lsp.{module.name}")).values():
            if not inspect.iscoroutinefunction(value) or value.__module__ != (
                f"qodeassist_lsp.lsp.{module.name}"
            ):
                continue
            arguments = list(inspect.signature(value).parameters.values())
            if len(arguments) < 2 or arguments[0].name != "ls":
                continue
            assert str(arguments[1].annotation) != "dict[str, Any] | None", value
            if name := params_model(value):
                assert issubclass(getattr(params, name), params.Params), value
                typed += 1
    assert typed >= 18
