"""The JSON-RPC protocol of the server: pygls's, changed only through its documented hooks.

* **One document store.** ``didOpen``, ``didChange`` and ``didClose`` are overridden with
  ``lsp_method`` (as jedi-language-server overrides ``initialize``) and feed `documents`, the
  only copy of an open document; pygls's workspace keeps none. A change is applied in time
  proportional to the edit (``text_sync``), which also tells the store what was edited. The
  hooks are plain functions, not generators: pygls files the future of a generator handler
  under a fresh id and never drops it (see docs/architecture.md, upstream issues).
* **Raw params for our own methods.** A method lsprotocol does not define (every
  ``qodeassist/*`` method) arrives with its params as a plain ``dict``, which its handler
  validates with pydantic, instead of pygls's namedtuples. ``qodeassist/status`` is both a
  request and a notification, so a message's class follows from whether it has an ``id``.
* **Every request is answered.** pygls raises ``JsonRpcInvalidParams`` from
  ``structure_message`` and its reader only reports it with ``window/showMessage``, so a
  request whose params fail to structure would never be answered. Here it is delivered as a
  request for `INVALID_PARAMS`, whose built-in handler raises the error naming the bad field;
  pygls answers it -32602 as it answers any handler's error.
"""

from __future__ import annotations

import logging
from typing import Any, Final, NoReturn

import attrs
import cattrs
from cattrs.v import format_exception
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcMethodNotFound
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method

from qodeassist_lsp.context.documents import DocumentStore
from qodeassist_lsp.lsp import methods
from qodeassist_lsp.lsp.text_sync import apply_changes

log = logging.getLogger("qodeassist.lsp")

INVALID_PARAMS = "qodeassist/$invalidParams"
"""Internal method a request with unstructurable params is delivered as (never sent)."""


@attrs.define
class RawNotification:
    """A notification of a method lsprotocol does not define; params stay a dict."""

    method: str
    jsonrpc: str
    params: dict[str, Any] | None = None


@attrs.define
class RawRequest:
    """A request of a method lsprotocol does not define; params stay a dict."""

    id: int | str
    method: str
    jsonrpc: str
    params: dict[str, Any] | None = None


@attrs.define
class RefusedRequest:
    """A request whose params failed to structure, delivered to `INVALID_PARAMS`."""

    id: int | str
    method: str
    jsonrpc: str
    params: JsonRpcInvalidParams


SERVER_REQUESTS: Final = frozenset({methods.DIAGNOSTICS})
"""Our methods the server sends to the client as requests (with an ``id``)."""


class QodeProtocol(LanguageServerProtocol):
    """pygls's language server protocol feeding one `DocumentStore`, raw params for ours."""

    def __init__(self, server: LanguageServer, converter: cattrs.Converter) -> None:
        """Create the protocol (pygls's arguments) and the empty document store."""
        super().__init__(server, converter)
        self.converter = converter
        self.documents = DocumentStore()
        """The open documents: the one copy the server and its features read."""

    # The base method is wrapped in lru_cache, which mypy sees as a different signature.
    def get_message_type(self, method: str) -> type | None:  # type: ignore[override]
        """Return lsprotocol's class, `RawRequest` for our requests to the client, else notify.

        pygls builds an outgoing request from this: a `RawNotification` would have no ``id``.
        """
        if method in types.METHOD_TO_TYPES:
            result: type | None = super().get_message_type(method)
            return result
        return RawRequest if method in SERVER_REQUESTS else RawNotification

    def structure_message(self, data: dict[str, Any]) -> Any:
        """Decode a message; a request whose params fail to structure becomes `INVALID_PARAMS`."""
        if "jsonrpc" not in data:  # a nested object (pygls decodes with an object_hook)
            return data
        method, ident = data.get("method"), data.get("id")
        answerable = (
            isinstance(method, str)
            and isinstance(ident, int | str)
            and not isinstance(ident, bool)
            and "result" not in data
            and "error" not in data
        )
        try:
            if answerable and method not in types.METHOD_TO_TYPES:
                return self.converter.structure(data, RawRequest)
            return super().structure_message(data)
        except (JsonRpcException, cattrs.BaseValidationError) as exc:
            if not answerable:
                raise  # not a request that can be answered: pygls's reader reports it
            error = _invalid_params(str(method), exc)  # pygls logs it as it answers
            return RefusedRequest(data["id"], INVALID_PARAMS, self.VERSION, error)

    @lsp_method(INVALID_PARAMS)
    def answer_invalid_params(self, error: object) -> NoReturn:
        """Answer a request whose params could not be structured with their error."""
        if isinstance(error, JsonRpcInvalidParams):
            raise error
        raise JsonRpcMethodNotFound.of(INVALID_PARAMS)

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        """Put the opened document into the store."""
        item = params.text_document
        self.documents.open(item.uri, item.text, item.version, item.language_id)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        """Apply the changes to the stored document, in time proportional to the edit."""
        uri = params.text_document.uri
        document = self.documents.get(uri)
        if document is None:
            log.warning("didChange for %s, which is not open; ignored", uri)
            return
        codec = self.workspace.position_codec
        text, edits = apply_changes(document.text, params.content_changes, codec)
        self.documents.change(uri, text, params.text_document.version, edits)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        """Forget the closed document."""
        self.documents.close(params.text_document.uri)


def _invalid_params(method: str, exc: Exception) -> JsonRpcInvalidParams:
    """Say which field of ``method``'s params failed to structure, and why."""
    cause = exc if isinstance(exc, cattrs.BaseValidationError) else exc.__cause__
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
