"""File edits over LSP: the edit ports of the workbench, ``chat/editFile`` and checkpoints.

The workbench's edit manager (its ignore rules and parse check are every door's) serves the
``create_file``/``edit_file``/``delete_file`` tools. Its ports are the editor's: open documents
are read from the server's document store and changed with ``workspace/applyEdit`` (one minimal
text edit, versioned, so a document the user changed meanwhile is refused by the editor);
files that are not open are written on disk by the tools package. Status changes of an edit
go to the chat's ``qodeassist/chat/event`` stream through the chat feature's event gate, also
after the proposing request has ended.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from qodeassist_lsp.config.confinement import real_path
from qodeassist_lsp.context.documents import common_ends
from qodeassist_lsp.lsp import methods
from qodeassist_lsp.lsp.chat_handlers import ChatFeature
from qodeassist_lsp.lsp.errors import RequestFailed
from qodeassist_lsp.lsp.positions import client_position
from qodeassist_lsp.lsp.server import QodeAssistServer

if TYPE_CHECKING:
    from qodeassist_lsp.lsp.params import CheckpointsListParams, EditFileParams, RestoreParams
    from qodeassist_lsp.tools.edits.pending import EditManager
    from qodeassist_lsp.tools.edits.ports import OpenText

log = logging.getLogger("qodeassist.server")

EDIT_LABEL = "QodeAssist: file edit"
APPLY_EDIT_TIMEOUT_S = 60.0
"""How long the editor may take to answer ``workspace/applyEdit`` (edits wait in line meanwhile)."""


class DocumentBuffers:
    """`tools.edits.ports.EditorBuffers` over the server's document store and applyEdit."""

    def __init__(self, server: QodeAssistServer) -> None:
        """Read and change ``server``'s open documents."""
        self._server = server

    async def find_open(self, path: Path) -> OpenText | None:
        """Return the open document whose real path is ``path``."""
        from qodeassist_lsp.tools.edits.ports import OpenText

        for document in self._server.documents:
            if document.path and real_path(document.path) == path:
                return OpenText(document.uri, document.text)
        return None

    async def replace_open(self, uri: str, old: str, new: str) -> None:
        """Change document ``uri`` from ``old`` to ``new`` through ``workspace/applyEdit``."""
        from qodeassist_lsp.tools.edits.blocks import EditRefused

        ls = self._server
        document = ls.documents.get(uri)
        if document is None or document.text != old:
            raise EditRefused(f"{uri} changed in the editor meanwhile; nothing was written")
        workspace = ls.client_capabilities.workspace
        if workspace is None or not workspace.apply_edit:
            raise EditRefused(
                "the editor cannot apply edits (no workspace/applyEdit); close the file in the "
                "editor so that it is written on disk"
            )
        start, end, text = _changed_span(old, new)
        edit = types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=uri, version=document.version
                    ),
                    edits=[
                        types.TextEdit(
                            range=types.Range(_position(ls, old, start), _position(ls, old, end)),
                            new_text=text,
                        )
                    ],
                )
            ]
        )
        try:
            answer = await asyncio.wait_for(
                ls.workspace_apply_edit_async(
                    types.ApplyWorkspaceEditParams(edit=edit, label=EDIT_LABEL)
                ),
                APPLY_EDIT_TIMEOUT_S,
            )
        except TimeoutError:
            raise EditRefused(
                f"the editor did not answer workspace/applyEdit within {APPLY_EDIT_TIMEOUT_S:.0f} s"
            ) from None
        if not answer.applied:
            raise EditRefused(answer.failure_reason or "the editor did not apply the edit")


def _changed_span(old: str, new: str) -> tuple[int, int, str]:
    """Return (start, end) in ``old`` and the text that replaces it: one minimal edit."""
    start, suffix = common_ends(old, new)
    end = len(old) - suffix
    # Never split a CRLF: a position between \r and \n has no meaning in LSP.
    if 0 < start < len(old) and old[start - 1] == "\r" and old[start] == "\n":
        start -= 1
    if 0 < end < len(old) and old[end - 1] == "\r" and old[end] == "\n":
        end += 1
    return start, end, new[start : len(new) - (len(old) - end)]


def _position(ls: QodeAssistServer, text: str, offset: int) -> types.Position:
    return types.Position(*client_position(ls.workspace.position_codec, text, offset))


async def _manager(ls: QodeAssistServer) -> EditManager:
    """Return the workbench's edit manager once the runtime exists."""
    await ls.backend.runtime()
    return ls.workbench().edits


async def chat_edit_file(ls: QodeAssistServer, args: EditFileParams) -> dict[str, Any]:
    """Apply, reject or undo one proposed file edit of a chat."""
    manager = await _manager(ls)
    status, message = await manager.act(args.chat_id, args.edit_id, args.action)
    return {"status": status, "message": message}


async def checkpoints_list(
    ls: QodeAssistServer, args: CheckpointsListParams
) -> list[dict[str, Any]]:
    """List a chat's checkpoints (files as they were before its edits)."""
    manager = await _manager(ls)
    return [c.to_json() for c in await manager.list_checkpoints(args.chat_id)]


async def checkpoints_restore(ls: QodeAssistServer, args: RestoreParams) -> dict[str, Any]:
    """Restore the files of one checkpoint."""
    manager = await _manager(ls)
    try:
        return {"restored": await manager.restore(args.checkpoint_id)}
    except OSError as exc:
        raise RequestFailed(
            f"checkpoint {args.checkpoint_id} was not fully restored: {exc}"
        ) from None


def setup(server: QodeAssistServer) -> None:
    """Register ``chat/editFile``, the checkpoint requests and the edit ports."""
    server.ports.buffers = DocumentBuffers(server)
    # Status changes go to the chat's stream through the chat feature's event gate.
    server.ports.edit_status = lambda chat_id, event: server.feature_of(ChatFeature).events.emit(
        chat_id, event
    )
    server.feature(methods.CHAT_EDIT_FILE)(chat_edit_file)
    server.feature(methods.CHECKPOINTS_LIST)(checkpoints_list)
    server.feature(methods.CHECKPOINTS_RESTORE)(checkpoints_restore)
