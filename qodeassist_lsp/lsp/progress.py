"""``$/progress`` work-done progress for long operations (refactor, chat, compression).

The client's ``workDoneToken`` is used when it sent one; otherwise, when the client supports
``window/workDoneProgress``, the server creates a token. Progress is cancellable: the user's
cancel reaches the operation through ``on_cancel``.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from lsprotocol import types

if TYPE_CHECKING:
    from qodeassist_lsp.lsp.server import QodeAssistServer


class WorkDoneProgress:
    """Work-done progress of one operation: the client's token, or one we create."""

    def __init__(self, ls: QodeAssistServer, token: types.ProgressToken | None, title: str):
        self._ls = ls
        self._token = token
        self._title = title
        self._created = False

    async def begin(self, create: bool = True) -> None:
        """Report the start, with a token of our own (if ``create``) when the client sent none."""
        window = self._ls.client_capabilities.window
        if create and self._token is None and window is not None and window.work_done_progress:
            self._token = str(uuid.uuid4())
            try:
                await self._ls.work_done_progress.create_async(self._token)
                self._created = True
            except Exception:  # a client that refuses progress must not stop the work
                self._token = None
        if self._token is not None:
            self._ls.work_done_progress.begin(
                self._token,
                types.WorkDoneProgressBegin(title=self._title, cancellable=True, message="asking"),
            )

    def on_cancel(self, callback: Any) -> None:
        """Call ``callback`` when the user cancels the progress."""
        token = self._token
        future = self._ls.work_done_progress.tokens.get(token) if token is not None else None
        if future is not None:
            future.add_done_callback(lambda f: callback() if f.cancelled() else None)

    def report(self, message: str) -> None:
        """Report ``message``."""
        if self._token is not None:
            self._ls.work_done_progress.report(
                self._token, types.WorkDoneProgressReport(message=message)
            )

    def end(self, message: str) -> None:
        """Report the end with ``message``."""
        if self._token is not None:
            self._ls.work_done_progress.end(self._token, types.WorkDoneProgressEnd(message=message))
