"""``$/progress`` while a model server starts: the embedded model's one download, in the editor.

A ``[launch]`` server that prints ``progress: N% …`` lines while it starts (``embedded serve``
downloading its model) is reported by the launcher through the runtime's ``on_launch_progress``
port; this turns each instance's lines into one server-created work-done progress (begin, a
report per line with its percentage, end when the start is over), for clients that support
``window/workDoneProgress``. Sends are chained per instance, so they keep their order.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer


class LaunchProgressReporter:
    """A ``core.runtime.LaunchProgress`` that reports through the client's ``$/progress``."""

    def __init__(self, ls: LanguageServer) -> None:
        """Report to the client of ``ls``."""
        self._ls = ls
        self._tokens: dict[str, str | None] = {}
        self._sends: dict[str, asyncio.Task[None]] = {}

    def __call__(self, instance: str, percent: int | None, message: str) -> None:
        """Queue the report of ``instance``'s start (``percent`` None: it is over)."""
        previous = self._sends.get(instance)
        self._sends[instance] = asyncio.get_running_loop().create_task(
            self._send(previous, instance, percent, message), name=f"launch-progress-{instance}"
        )

    async def _send(
        self, previous: asyncio.Task[None] | None, instance: str, percent: int | None, message: str
    ) -> None:
        if previous is not None:
            with contextlib.suppress(Exception):
                await previous
        progress = self._ls.work_done_progress
        if percent is None:
            token = self._tokens.pop(instance, None)
            if token is not None:
                progress.end(token, types.WorkDoneProgressEnd(message=f"{instance}: {message}"))
            return
        if instance not in self._tokens:
            self._tokens[instance] = await self._create()
            token = self._tokens[instance]
            if token is not None:
                title = f"QodeAssist: starting {instance}"
                begin = types.WorkDoneProgressBegin(title, message=message, percentage=percent)
                progress.begin(token, begin)
            return
        token = self._tokens[instance]
        if token is not None:
            report = types.WorkDoneProgressReport(message=message, percentage=percent)
            progress.report(token, report)

    async def _create(self) -> str | None:
        window = self._ls.client_capabilities.window
        if window is None or not window.work_done_progress:
            return None
        token = str(uuid.uuid4())
        try:
            await self._ls.work_done_progress.create_async(token)
        except Exception:  # a client that refuses progress must not stop the start
            return None
        return token
