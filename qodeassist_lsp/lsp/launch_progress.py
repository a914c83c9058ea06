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
from typing import TYPE_CHECKING

from qodeassist_lsp.lsp.progress import WorkDoneProgress

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer


class LaunchProgressReporter:
    """A ``core.runtime.LaunchProgress`` that reports through the client's ``$/progress``."""

    def __init__(self, ls: LanguageServer) -> None:
        """Report to the client of ``ls``."""
        self._ls = ls
        self._tasks: dict[str, WorkDoneProgress] = {}
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
        task = self._tasks.get(instance)
        if percent is None:
            if task is not None:
                del self._tasks[instance]
                task.end(f"{instance}: {message}")
        elif task is None:
            task = WorkDoneProgress(self._ls, None, f"QodeAssist: starting {instance}")
            self._tasks[instance] = task
            await task.begin(message=message, cancellable=None, percentage=percent)
        else:
            task.report(message, percent)
