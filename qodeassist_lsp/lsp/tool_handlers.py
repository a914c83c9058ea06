"""The tools in the editor: the workbench wired into the server's runtime, and the tool ports.

When the first configuration is loaded, the feature wires the server's workbench into the
runtime's contributor registry (kit, file tools, ``load_skill``, MCP, permission gate); the
runtime keeps that registry across reloads and everything reads the settings per call, so
nothing is re-wired on a reload. The ports the tools need from the editor live here: the open
buffers, the ``window/showMessageRequest`` asker of the gate and the ``qodeassist/diagnostics``
request (the ignore rules are the workbench's).
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
    from qodeassist_lsp.config.pipelines import PipelineSpec
    from qodeassist_lsp.core.tools import Tool, ToolContext, ToolContributorRegistry, ToolRegistry
    from qodeassist_lsp.tools.diagnostics import Diagnostic

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
    """Wires the workbench (tool kit, file tools, skills, MCP, gate) into the server's runtime."""

    def __init__(self, server: QodeAssistServer) -> None:
        self.server = server
        self._wired = False
        self._tools: ToolContributorRegistry | None = None

    def reloaded(self, config: Configuration) -> None:
        """Wire the tools once, on the first load, before any request can get the runtime."""
        # The backend calls this right after the runtime exists and before anyone awaiting
        # `runtime()` resumes, so the first chat session already gets the tools; the registry
        # outlives reloads and the settings are read per call.
        if not self._wired:
            contributors = self.server.backend.sessions.contributors
            contributors.add(self._contribute)
            # Every session gets the gate, tools or not: an agent-process provider (an ACP
            # agent) asks it about its own tool calls.
            contributors.gate = self
            self._wired = True

    async def check(
        self, tool: Tool, arguments: dict[str, Any], context: ToolContext
    ) -> str | None:
        """Decide a tool call by the workbench's one gate (`core.tools.ToolGate`)."""
        return await self.server.workbench().gate.check(tool, arguments, context)

    def _contribute(self, registry: ToolRegistry, pipeline: PipelineSpec) -> None:
        # The tool kit, file tools and skill tool are wired when the first session that uses
        # tools is made, not at start: their modules cost the server's memory about 1 MB that
        # completions never use (issue 46).
        if self._tools is None:
            from qodeassist_lsp.core.tools import ToolContributorRegistry

            tools = ToolContributorRegistry()
            self.server.workbench().wire(tools)
            self._tools = tools
        self._tools.apply_to(registry, pipeline)


def setup(server: QodeAssistServer) -> None:
    """Add the tool-kit feature and the editor's tool ports to ``server``."""
    server.ports.asker = ShowMessageAsker(server)
    server.ports.open_buffers = lambda: _Buffers(server)
    server.ports.diagnostics = EditorDiagnostics(server)
    server.add_feature(ToolKitFeature(server))
