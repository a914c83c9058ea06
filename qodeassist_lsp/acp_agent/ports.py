"""The tool ports the ACP client implements: the permission asker and the editor's buffers.

`ClientAsker` asks the workbench's one permission gate's questions (the ``[tools.permissions]``
policy decides as at every door) as ``session/request_permission`` about the very call (an
edit's diff included). An edit the file tool would refuse (a path outside the workspace or
ignored, a block that matches nothing) is refused with the tool's reason before anything is
asked: the user is never asked about a change that cannot happen. Allow-for-session is the
gate's "Allow for this chat", remembered per chat. `ClientBuffers` is
the edit tools' `EditorBuffers`: with ``fs.readTextFile`` the client's (possibly unsaved)
buffer is the file's text, with ``fs.writeTextFile`` the edit is written by the client. Paths
reach these ports only after the edit manager confined them. A client that fails a write
leaves the file as it was, and the edit is reported ``failed``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from acp import tool_diff_content
from acp.helpers import ToolCallContentVariant

from qodeassist_lsp.acp_agent.session import ALLOW_ALWAYS, ALLOW_ONCE, CURRENT, REJECT_ONCE
from qodeassist_lsp.config.atomic import write_atomic
from qodeassist_lsp.tools.edits.blocks import EditRefused
from qodeassist_lsp.tools.edits.file_tools import preview_call
from qodeassist_lsp.tools.edits.pending import EditManager
from qodeassist_lsp.tools.edits.ports import OpenText
from qodeassist_lsp.tools.permissions import ALLOW_FOR_CHAT, DENY, NotAsked, PermissionCall
from qodeassist_lsp.tools.permissions import ALLOW_ONCE as GATE_ALLOW_ONCE

log = logging.getLogger("qodeassist.acp")


_ANSWERS = {ALLOW_ONCE: GATE_ALLOW_ONCE, ALLOW_ALWAYS: ALLOW_FOR_CHAT, REJECT_ONCE: DENY}


class ClientAsker:
    """The gate's `tools.permissions.CallAsker` of ACP: ``session/request_permission``."""

    def __init__(self, edits: Callable[[], EditManager | None], timeout: float) -> None:
        """Preview edits with ``edits()``; wait ``timeout`` seconds for the answer."""
        self._edits = edits
        self.timeout = timeout

    async def ask_call(self, call: PermissionCall, actions: Sequence[str]) -> str | None:
        """Ask the client of the current session about ``call`` (an edit with its diff)."""
        session = CURRENT.get()
        if session is None:
            return None
        tool, arguments = call.tool, call.arguments
        content: list[ToolCallContentVariant] | None = None
        manager = self._edits()
        if manager is not None:
            try:
                diff = await preview_call(manager, tool.spec.name, arguments)
            except EditRefused as exc:
                raise NotAsked(
                    f"{exc}. The user was not asked; fix the call or tell the user what you "
                    "wanted to do."
                ) from None
            if diff is not None:
                path, old, new = diff
                content = [tool_diff_content(str(path), new or "", old)]
        try:
            async with asyncio.timeout(self.timeout):
                option = await session.ask(
                    call.context.call_id, tool.spec.name, tool.permission, arguments, content
                )
        except TimeoutError:
            log.info("permission for %s not answered within %g s: rejected", tool, self.timeout)
            return None
        return _ANSWERS.get(option or "")


class ClientBuffers:
    """`tools.edits.ports.EditorBuffers` (and read_file's reader) through the client's ``fs/*``."""

    async def find_open(self, path: Path) -> OpenText | None:
        """Return the client's text of ``path`` when it reads files for us, else None."""
        session = CURRENT.get()
        if session is None or not session.abilities.read_text_file:
            return None
        if not await asyncio.to_thread(path.is_file):
            return None
        try:
            answer = await session.client.read_text_file(
                session_id=session.session_id, path=str(path)
            )
        except Exception as exc:
            raise EditRefused(f"the editor could not read {path}: {_why(exc)}") from None
        return OpenText(path.as_uri(), answer.content)

    async def read_text(self, path: Path) -> str | None:
        """Return the client's text of ``path`` (`tools.workspace.EditorFiles` of read_file)."""
        found = await self.find_open(path)
        return found.text if found is not None else None

    async def replace_open(self, uri: str, old: str, new: str) -> None:
        """Write ``new`` through the client (or on disk when it does not write files)."""
        from qodeassist_lsp.context.documents import uri_to_path

        session = CURRENT.get()
        path = Path(uri_to_path(uri) or uri)
        if session is None or not session.abilities.write_text_file:
            await asyncio.to_thread(write_atomic, path, new.encode("utf-8"))
            return
        try:
            await session.client.write_text_file(
                session_id=session.session_id, path=str(path), content=new
            )
        except Exception as exc:
            raise EditRefused(
                f"the editor failed to write {path} ({_why(exc)}); the file was not changed"
            ) from None


def _why(exc: Exception) -> str:
    """Return what the client said about a failed request (its error's data, if any)."""
    data = getattr(exc, "data", None)
    detail = data.get("message") or data.get("details") if isinstance(data, dict) else None
    return f"{exc}: {detail}" if detail else str(exc) or type(exc).__name__
