"""``$/progress`` work-done progress for long operations (refactor, chat, features, launches).

The client's ``workDoneToken`` is used when it sent one; otherwise, when the client supports
``window/workDoneProgress``, the server creates a token. Progress is cancellable: the user's
cancel reaches the operation through ``on_cancel``.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from lsprotocol import types

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer


class WorkDoneProgress:
    """Work-done progress of one operation (a `ProgressTask`): the client's token, or ours."""

    def __init__(self, ls: LanguageServer, token: types.ProgressToken | None, title: str):
        self._ls = ls
        self._token = token
        self._title = title

    async def begin(
        self,
        create: bool = True,
        message: str = "asking",
        cancellable: bool | None = True,
        percentage: int | None = None,
    ) -> None:
        """Report the start, with a token of our own (if ``create``) when the client sent none."""
        window = self._ls.client_capabilities.window
        if create and self._token is None and window is not None and window.work_done_progress:
            self._token = str(uuid.uuid4())
            try:
                await self._ls.work_done_progress.create_async(self._token)
            except Exception:  # a client that refuses progress must not stop the work
                self._token = None
        if self._token is not None:
            begin = types.WorkDoneProgressBegin(
                title=self._title,
                cancellable=cancellable,
                message=message or None,
                percentage=percentage,
            )
            self._ls.work_done_progress.begin(self._token, begin)

    def on_cancel(self, callback: Any) -> None:
        """Call ``callback`` when the user cancels the progress."""
        token = self._token
        future = self._ls.work_done_progress.tokens.get(token) if token is not None else None
        if future is not None:
            future.add_done_callback(lambda f: callback() if f.cancelled() else None)

    def report(self, message: str, percentage: int | None = None) -> None:
        """Report ``message``."""
        if self._token is not None:
            report = types.WorkDoneProgressReport(message=message, percentage=percentage)
            self._ls.work_done_progress.report(self._token, report)

    def end(self, message: str = "") -> None:
        """Report the end with ``message`` (once)."""
        token, self._token = self._token, None
        if token is not None:
            end = types.WorkDoneProgressEnd(message=message or None)
            self._ls.work_done_progress.end(token, end)
