"""The tool kit in the editor: its contributor and permission gate on the server's runtime.

When the first configuration is loaded, the feature adds the kit's contributor to the runtime's
contributor registry and sets the registry's permission gate; the runtime keeps that registry
across reloads, and the kit and the gate read the settings per call, so nothing is re-wired on a
reload. What the tools need from the editor lives here: the workspace folders and ignore rules
(``.qodeassistignore`` and ``.gitignore`` at each folder's root), the open buffers, the
``window/showMessageRequest`` asker of the gate and the ``qodeassist/diagnostics`` request.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from lsprotocol import types
from pygls.uris import to_fs_path

from qodeassist_lsp.lsp import methods
from qodeassist_lsp.lsp.feature import LanguageFeature
from qodeassist_lsp.lsp.server import QodeAssistServer

if TYPE_CHECKING:
    from qodeassist_lsp.config.configuration import Configuration
    from qodeassist_lsp.context.ignore import IgnoreFilter
    from qodeassist_lsp.core.tools import ToolContributorRegistry
    from qodeassist_lsp.tools.diagnostics import Diagnostic
    from qodeassist_lsp.tools.workspace import ToolWorkspace

log = logging.getLogger("qodeassist.tools")

ASK_TIMEOUT_S: Final = 300.0
"""How long a permission question waits for the user; then it counts as "Deny"."""
DIAGNOSTICS_TIMEOUT_S: Final = 10.0
_SEVERITY: Final = {1: "error", 2: "warning", 3: "information", 4: "hint"}


class ShowMessageAsker:
    """Asks the user with ``window/showMessageRequest`` (the gate's `PermissionAsker`)."""

    def __init__(self, server: QodeAssistServer) -> None:
        self._server = server

    async def ask(self, question: str, actions: Sequence[str]) -> str | None:
        """Return the action the user chose; None without the capability or an answer."""
        window = self._server.client_capabilities.window
        if window is None or window.show_message is None:
            log.info("the client cannot answer window/showMessageRequest: denied")
            return None
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=question,
            actions=[types.MessageActionItem(title=action) for action in actions],
        )
        try:
            answer = await asyncio.wait_for(
                self._server.window_show_message_request_async(params), ASK_TIMEOUT_S
            )
        except Exception as exc:  # no answer in time, or the client failed the request
            log.info("permission request not answered (%s): denied", exc or type(exc).__name__)
            return None
        return answer.title if answer is not None else None


class EditorDiagnostics:
    """Asks the editor for diagnostics with ``qodeassist/diagnostics`` (a `DiagnosticsSource`)."""

    def __init__(self, server: QodeAssistServer) -> None:
        self._server = server

    async def diagnostics(self, path: Path | None) -> list[Diagnostic]:
        """Return what the editor reports; raise ``DiagnosticsUnavailable`` when it does not."""
        from qodeassist_lsp.tools.diagnostics import DiagnosticsUnavailable

        params = {"uri": path.as_uri() if path is not None else None}
        try:
            answer = await asyncio.wait_for(
                self._server.protocol.send_request_async(methods.DIAGNOSTICS, params),
                DIAGNOSTICS_TIMEOUT_S,
            )
        except TimeoutError:
            raise DiagnosticsUnavailable(f"no answer within {DIAGNOSTICS_TIMEOUT_S:g} s") from None
        except Exception as exc:
            raise DiagnosticsUnavailable(str(exc) or type(exc).__name__) from None
        try:
            return list(_diagnostics_of(_plain(answer)))
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise DiagnosticsUnavailable(f"its answer is malformed: {exc}") from None


def _diagnostics_of(answer: Any) -> list[Diagnostic]:
    """Read ``[{uri, diagnostics: [LSP Diagnostic]}]`` (or ``{items: [...]}``)."""
    from qodeassist_lsp.tools.diagnostics import Diagnostic

    files = answer.get("items", []) if isinstance(answer, dict) else answer or []
    found = []
    for entry in files:
        fs_path = to_fs_path(entry["uri"])
        if not fs_path:
            continue
        real = Path(os.path.realpath(fs_path))
        for item in entry.get("diagnostics") or []:
            start = item["range"]["start"]
            found.append(
                Diagnostic(
                    real,
                    int(start["line"]) + 1,
                    int(start["character"]) + 1,
                    _SEVERITY.get(item.get("severity") or 1, "error"),
                    str(item["message"]).strip(),
                    str(item.get("source") or ""),
                )
            )
    return found


def _plain(value: Any) -> Any:
    """Turn pygls's namedtuple decoding of an unknown result into plain dicts."""
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


class _Buffers:
    """The server's open documents, by real file path (`OpenBuffers` of the kit).

    One is made per tool call, so the path map is built once per call, not once per file a
    search looks at.
    """

    def __init__(self, server: QodeAssistServer) -> None:
        self._server = server
        self._by_path: dict[str, str] | None = None

    def text_of(self, path: Path) -> str | None:
        """Return the open document's text of ``path``, or None when it is not open."""
        if self._by_path is None:
            self._by_path = {
                os.path.realpath(document.path): document.text
                for document in self._server.documents
                if document.path
            }
        return self._by_path.get(str(path))


class ToolKitFeature(LanguageFeature):
    """Wires the tool kit and the permission gate into the server's runtime."""

    def __init__(self, server: QodeAssistServer) -> None:
        self.server = server
        self._wired = False
        self._ignores: dict[tuple[Path, str], IgnoreFilter] = {}

    def reloaded(self, config: Configuration) -> None:
        """Wire the kit on the first load, before any request can get the runtime."""
        # The backend calls this right after the runtime exists and before anyone awaiting
        # `runtime()` resumes, so the first chat session already gets the tools.
        self._wire(self.server.backend.sessions.contributors)

    async def initialized(self) -> None:
        """Wire the kit (if the first load has not already done it)."""
        self._wire((await self.server.backend.runtime()).contributors)

    def _wire(self, contributors: ToolContributorRegistry) -> None:
        """Add the kit's contributor and set the gate, once: the registry outlives reloads."""
        if self._wired:
            return
        from qodeassist_lsp.core.memory import Memory
        from qodeassist_lsp.tools.kit import KitSources, ToolKit
        from qodeassist_lsp.tools.permissions import PermissionGate

        kit = ToolKit(
            KitSources(
                settings=lambda: self.server.backend.settings.tools,
                workspace=self.workspace,
                diagnostics=EditorDiagnostics(self.server),
                memory=lambda: Memory.of(self.server.backend.configuration.paths),
            )
        )
        contributors.add(kit.contribute)
        contributors.gate = PermissionGate(
            lambda: self.server.backend.settings.tools.permissions,
            ShowMessageAsker(self.server),
        )
        self._wired = True

    def workspace(self) -> ToolWorkspace:
        """Return the tools' view of the workspace as it is now."""
        from qodeassist_lsp.context.ignore import FolderIgnores
        from qodeassist_lsp.tools.workspace import ToolWorkspace

        settings = self.server.backend.settings
        folders = self.server.workspace_folders()
        return ToolWorkspace.of(
            folders,
            settings.general.allowed_roots,
            ignore=FolderIgnores.of(folders, self._ignores),
            buffers=_Buffers(self.server),
        )


def setup(server: QodeAssistServer) -> None:
    """Add the tool-kit feature to ``server``."""
    server.add_feature(ToolKitFeature(server))
