"""The ACP door of the one error table: agent methods raise errors of the tree, never answers.

`answering` wraps the agent's request methods, the NES handlers (``nes.add_routes``) and the
feature operations (``operations.call``): an
error of the tree (``wire/errors.py``) is answered with the JSON-RPC error that
``wire/error_table.py`` gives its kind, ``data`` holding ``message`` (and ``category``).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

from acp import RequestError

from qodeassist_lsp.wire.error_table import acp_answer
from qodeassist_lsp.wire.errors import QodeAssistError

P = ParamSpec("P")
R = TypeVar("R")


def rpc_error(exc: QodeAssistError) -> RequestError:
    """Return the ACP answer to ``exc`` (the table's row for its kind)."""
    error = acp_answer(exc)
    return RequestError(error.code, error.message, error.data)


def answering(method: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Wrap an agent method: the errors of the tree it raises are answered by the error table."""

    @functools.wraps(method)
    async def answer(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await method(*args, **kwargs)
        except QodeAssistError as exc:
            raise rpc_error(exc) from exc

    return answer
