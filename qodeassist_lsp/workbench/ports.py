"""`Ports`: what a door tells the workbench — its folders, editor and user — read per call.

Light on purpose (types only): the language server holds its ports from the start, before the
workbench's tool, skill and MCP modules are imported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from qodeassist_lsp.context.documents import DocumentStore

if TYPE_CHECKING:
    from qodeassist_lsp.core.events import SessionEvent
    from qodeassist_lsp.mcp.approvals import ApprovalAsker
    from qodeassist_lsp.tools.diagnostics import DiagnosticsSource
    from qodeassist_lsp.tools.edits.ports import EditorBuffers
    from qodeassist_lsp.tools.permissions import Asker
    from qodeassist_lsp.tools.workspace import EditorFiles, OpenBuffers, ProgramRunner
    from qodeassist_lsp.workbench.features import FeatureTable


def _nowhere(_chat_id: str, _event: SessionEvent) -> None:
    """Drop an edit status change (a door without a chat stream)."""


@dataclass
class Ports:
    """What a door tells the workbench: its folders, its editor, its user; read per call."""

    folders: Callable[[], Sequence[Path]]
    """The workspace folders now (relative paths start at the first)."""
    documents: DocumentStore = field(default_factory=DocumentStore)
    buffers: EditorBuffers | None = None
    """Where the edit tools read and write open files; None: on disk only."""
    edit_status: Callable[[str, SessionEvent], None] = _nowhere
    """Where an edit's status changes go (the chat's event stream)."""
    auto_apply: Callable[[], bool] | None = None
    """Whether edits apply at once; None: ``[tools] auto_apply_file_edits``."""
    asker: Asker | None = None
    """Who answers the gate's questions; None: what needs asking is denied."""
    open_buffers: Callable[[], OpenBuffers | None] = lambda: None
    editor_files: Callable[[], EditorFiles | None] = lambda: None
    runner: Callable[[], ProgramRunner | None] = lambda: None
    diagnostics: DiagnosticsSource | None = None
    mcp_asker: ApprovalAsker | None = None
    """The MCP hub's `mcp.hub.ApprovalAsker` of project servers; None: they stay held."""
    mcp_changed: Callable[[], None] = lambda: None
    """Called when an MCP server's state changes (a door's status)."""
    features: FeatureTable | None = None
    """The feature table, when the door built it before its workbench (the language server
    registers its operations' methods before ``initialize``); None: the workbench builds it."""
