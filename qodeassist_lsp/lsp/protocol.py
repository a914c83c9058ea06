"""The JSON-RPC protocol of the server: custom methods get their params as plain dicts.

pygls turns params of unknown methods into namedtuples; our custom methods are validated with
pydantic instead, so they are declared here to arrive as ``dict``. The hot request,
``textDocument/inlineCompletion`` (`DIRECT_REQUESTS`), also arrives as a dict and its handler
returns the JSON result: the request is answered from inside its own task, without cattrs
(un)structuring its params and result through lsprotocol classes and without pygls's
done-callback, which answered one pass of the event loop later, after whatever the generation
still had to tidy up. Text synchronisation is pygls's too, except that edits are applied by
`apply_changes` (see ``text_sync``), which also tells the server's handler what changed
(`take_edits`). Messages are dispatched on the fields they have, as pygls does, but without
``isinstance`` against ``typing.Protocol`` classes, which re-derives each protocol's members on
every check (about 30 µs a message on Python 3.11, measured).

A request whose params fail to structure is answered: pygls raises ``JsonRpcInvalidParams`` from
``structure_message`` and its reader only reports it with ``window/showMessage``, so the request
would never get a response. Here the failure becomes an `UnstructurableRequest`, which
``handle_message`` answers with -32602 and a message naming the bad field. (pygls 2 has no
public way to send a response, so the answer goes through the same private ``_send_response``
as the direct requests'.)
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import sys
from collections.abc import Callable
from typing import Any

import attrs
import cattrs
from cattrs.v import format_exception
from lsprotocol import types
from pygls.exceptions import (
    FeatureNotificationError,
    FeatureRequestError,
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcRequestCancelled,
)
from pygls.protocol import LanguageServerProtocol

from qodeassist_lsp.context.documents import LineEdit
from qodeassist_lsp.lsp.methods import CUSTOM_NOTIFICATIONS, CUSTOM_REQUESTS
from qodeassist_lsp.lsp.text_sync import apply_changes

log = logging.getLogger("qodeassist.lsp")

DIRECT_REQUESTS = frozenset({types.TEXT_DOCUMENT_INLINE_COMPLETION})
"""Requests whose handlers take the params as a dict and return the JSON result."""


@attrs.define
class RawNotification:
    """A custom notification with untyped params."""

    method: str
    jsonrpc: str
    params: dict[str, Any] | None = None


@attrs.define
class RawRequest:
    """A custom request with untyped params."""

    id: int | str
    method: str
    jsonrpc: str
    params: dict[str, Any] | None = None


@attrs.define
class UnstructurableRequest:
    """A request whose params could not be structured; it is answered with ``error``."""

    id: int | str
    method: str
    jsonrpc: str
    error: JsonRpcInvalidParams


class QodeProtocol(LanguageServerProtocol):
    """Language server protocol with raw-dict params for the ``qodeassist/*`` methods."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Create the protocol (pygls's arguments)."""
        super().__init__(*args, **kwargs)
        self._edits: dict[str, tuple[LineEdit, ...] | None] = {}

    def take_edits(self, uri: str) -> tuple[LineEdit, ...] | None:
        """Return the edits of the last ``didChange`` of ``uri`` (once), None when unknown."""
        return self._edits.pop(uri, None)

    # The base method is wrapped in lru_cache, which mypy sees as a different signature.
    def get_message_type(self, method: str) -> type | None:  # type: ignore[override]
        """Return the message class used to decode ``method``."""
        if method in CUSTOM_REQUESTS or method in DIRECT_REQUESTS:
            return RawRequest
        if method in CUSTOM_NOTIFICATIONS:
            return RawNotification
        result: type | None = super().get_message_type(method)
        return result

    def structure_message(self, data: dict[str, Any]) -> Any:
        """Decode a message; a well-formed `DIRECT_REQUESTS` request skips cattrs."""
        method = data.get("method")
        if method in DIRECT_REQUESTS and data.get("jsonrpc") == self.VERSION:
            ident = data.get("id")
            params = data.get("params")
            if (
                isinstance(ident, int | str)
                and not isinstance(ident, bool)
                and (params is None or type(params) is dict)
            ):
                return RawRequest(ident, method, self.VERSION, params)
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            ident = data.get("id")
            if (
                not isinstance(method, str)
                or not isinstance(ident, int | str)
                or isinstance(ident, bool)
                or "result" in data
                or "error" in data
            ):
                raise  # not a request that can be answered: pygls's reader reports it
            return UnstructurableRequest(ident, method, self.VERSION, _invalid_params(method, exc))

    def handle_message(self, message: Any) -> None:
        """Dispatch a decoded message to pygls's request/notification/response handling."""
        if message.jsonrpc != self.VERSION:
            log.warning("Unknown message %r", message)
            return
        if self._shutdown and getattr(message, "method", "") != types.EXIT:
            log.warning("Server shutting down. No more requests!")
            return
        if isinstance(message, UnstructurableRequest):
            log.warning("answering %s (id %r): %s", message.method, message.id, message.error)
            self._send_error(message.id, message.error)
            return
        ctx = contextvars.copy_context()  # each handler runs in its own context, as in pygls
        if hasattr(message, "method") and hasattr(message, "params"):
            if hasattr(message, "id"):
                ctx.run(self._handle_request, message.id, message.method, message.params)
            else:
                ctx.run(self._handle_notification, message.method, message.params)
        elif hasattr(message, "result"):
            ctx.run(self._handle_response, message.id, message.result)
        else:
            ctx.run(self._handle_response, message.id, None, message.error)

    def notify(self, method: str, params: Any | None = None) -> None:
        """Send a notification; custom methods always go out as raw notifications.

        ``qodeassist/status`` is both a request and a notification, so the message class
        cannot be chosen by method name alone.
        """
        if method in CUSTOM_REQUESTS or method in CUSTOM_NOTIFICATIONS:
            self._send_data(RawNotification(method=method, jsonrpc=self.VERSION, params=params))
            return
        super().notify(method, params)

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        """Handle a request; `DIRECT_REQUESTS` are answered from their own task."""
        handler = self.fm.features.get(method_name) if method_name in DIRECT_REQUESTS else None
        if handler is None:
            super()._handle_request(msg_id, method_name, params)
            return
        self._ctx_msg_id.set(msg_id)
        answered: list[bool] = []
        task = asyncio.ensure_future(self._answer(msg_id, handler, params, answered))
        # pygls types these as concurrent futures; it only ever pops and cancels them.
        self._request_futures[msg_id] = task  # type: ignore[assignment]
        task.add_done_callback(lambda done: self._answer_if_never_run(msg_id, done, answered))

    async def _answer(
        self, msg_id: Any, handler: Callable[[Any], Any], params: Any, answered: list[bool]
    ) -> None:
        """Run a direct request's handler and send its result or error."""
        try:
            result = await handler(params)
        except asyncio.CancelledError:
            answered.append(True)
            self._send_error(msg_id, _cancelled(msg_id))
            raise
        except Exception as exc:
            answered.append(True)
            log.exception('Exception occurred for message "%s"', msg_id)
            error = exc if isinstance(exc, JsonRpcException) else _internal_error()
            self._send_error(msg_id, error)
            self._server._report_server_error(error, FeatureRequestError)
            return
        answered.append(True)
        self._request_futures.pop(msg_id, None)
        self._send_data({"jsonrpc": self.VERSION, "id": msg_id, "result": result})

    def _answer_if_never_run(
        self, msg_id: Any, task: asyncio.Future[None], answered: list[bool]
    ) -> None:
        """Answer a direct request cancelled before its task ever ran (it could not)."""
        pending: Any = self._request_futures.get(msg_id)  # typed as concurrent futures
        if pending is task:  # else the id was reused by a newer request: leave that one
            del self._request_futures[msg_id]
        if not answered:
            self._send_error(msg_id, _cancelled(msg_id))

    def _send_error(self, msg_id: Any, error: JsonRpcException) -> None:
        self._request_futures.pop(msg_id, None)
        self._send_response(msg_id, error=error.to_response_error())

    def _handle_notification(self, method_name: str, params: Any) -> None:
        """Handle a notification; ``didChange`` directly, everything else as pygls does."""
        if method_name == types.TEXT_DOCUMENT_DID_CHANGE:
            self._did_change(params)
            return
        super()._handle_notification(method_name, params)
        # pygls files the future of a generator-based notification handler (didOpen, didClose,
        # …) under a fresh id in _request_futures and never takes it out again: drop the
        # finished ones, or every such notification would be kept for the session's life.
        finished = [key for key, future in self._request_futures.items() if future.done()]
        for key in finished:
            del self._request_futures[key]

    def _did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        """Apply the changes to the open document, then run the server's own handler.

        Called for every keystroke, so without pygls's generic notification path (a UUID, a
        thread-safe future and a generator per message).
        """
        uri = params.text_document.uri
        document = self.workspace.text_documents.get(uri)
        if document is None:
            log.warning("didChange for %s, which is not open; ignored", uri)
        else:
            text, edits = apply_changes(
                document.source, params.content_changes, self.workspace.position_codec
            )
            document._source = text  # pygls has no public setter for the text
            document.version = params.text_document.version
            self._edits[uri] = edits
        handler = self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)
        if handler is None:
            return
        try:
            result = handler(params)
            if inspect.isawaitable(result):
                asyncio.ensure_future(result).add_done_callback(self._report_if_failed)
        except Exception as error:
            self._report_if_failed(error)

    def _report_if_failed(self, outcome: asyncio.Future[Any] | Exception) -> None:
        failure: BaseException | None = outcome if isinstance(outcome, Exception) else None
        if isinstance(outcome, asyncio.Future) and not outcome.cancelled():
            failure = outcome.exception()
        if isinstance(failure, Exception):
            log.error("the didChange handler failed", exc_info=failure)
            self._server._report_server_error(failure, FeatureNotificationError)


def _invalid_params(method: str, exc: JsonRpcException) -> JsonRpcInvalidParams:
    """Say which field of ``method``'s params failed to structure, and why."""
    cause = exc.__cause__
    if isinstance(cause, cattrs.BaseValidationError):
        problems = cattrs.transform_error(cause, path="$", format_exception=_problem)
        said = "; ".join(problem.replace("@ $.", "at ") for problem in problems)
    else:
        said = str(cause or exc)
    return JsonRpcInvalidParams(f"{method}: invalid params: {said}")


def _problem(exc: BaseException, type_: type | None) -> str:
    """Describe one structuring failure, with the validator's own words when it has some."""
    what = format_exception(exc, type_)
    return f"{what} ({exc})" if type(exc) is ValueError and str(exc) else what


def _cancelled(msg_id: Any) -> JsonRpcException:
    return JsonRpcRequestCancelled(f'Request with id "{msg_id}" is canceled')


def _internal_error() -> JsonRpcException:
    """Build the internal error for the exception being handled (traceback included)."""
    error: JsonRpcException = JsonRpcInternalError.of(sys.exc_info())  # type: ignore[no-untyped-call]
    return error
