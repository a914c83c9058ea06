"""``diagnostics``: the errors and warnings the editor shows, asked of the editor.

The editor knows them (its language servers, linters); the server asks through
`DiagnosticsSource`, which the LSP layer implements as the ``qodeassist/diagnostics``
server→client request. An editor that does not answer it gives the model a tool error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, Protocol

from pydantic import Field

from qodeassist_lsp.core.tools import ToolContext, ToolOutput
from qodeassist_lsp.tools.base import KitTool, ToolArguments, ToolInputError
from qodeassist_lsp.tools.workspace import ToolWorkspace
from qodeassist_lsp.wire.errors import QodeAssistError

MAX_DIAGNOSTICS: Final = 200
SEVERITIES: Final = ("error", "warning", "information", "hint")


@dataclass(frozen=True)
class Diagnostic:
    """One diagnostic the editor reported (line and column 1-based)."""

    path: Path
    line: int
    column: int
    severity: str
    """``error``, ``warning``, ``information`` or ``hint``."""
    message: str
    source: str = ""


class DiagnosticsUnavailable(QodeAssistError):
    """The editor did not provide diagnostics (no answer, an error, an unknown method)."""


class DiagnosticsSource(Protocol):
    """Asks the editor for its diagnostics."""

    async def diagnostics(self, path: Path | None) -> list[Diagnostic]:
        """Return the diagnostics of ``path`` (every open file when None).

        Raises `DiagnosticsUnavailable` when the editor does not provide them.
        """
        ...


class DiagnosticsArgs(ToolArguments):
    """Arguments of ``diagnostics``."""

    path: str = Field(default="", description="Only this file. Default: every file.")
    severity: Literal["error", "warning", "all"] = Field(
        default="all", description="'error', 'warning' (and errors) or 'all'. Default: 'all'."
    )


class DiagnosticsTool(KitTool[DiagnosticsArgs]):
    """The editor's current diagnostics."""

    name = "diagnostics"
    description = (
        "List the errors and warnings the editor currently shows (from its language servers "
        "and linters), as 'path:line:column: severity: message'. Limit it to one file with "
        "`path`, or to errors with severity='error'."
    )
    permission = "read"
    arguments = DiagnosticsArgs

    def __init__(self, workspace: Callable[[], ToolWorkspace], source: DiagnosticsSource) -> None:
        super().__init__(workspace)
        self._source = source

    async def call(self, args: DiagnosticsArgs, context: ToolContext) -> ToolOutput:
        """Ask the editor and format what it reports inside the workspace."""
        workspace = self._workspace()
        path = workspace.resolve(args.path, "file") if args.path.strip() else None
        try:
            found = await self._source.diagnostics(path)
        except DiagnosticsUnavailable as exc:
            raise ToolInputError(f"the editor did not provide diagnostics ({exc})") from None
        keep = {"error": ("error",), "warning": ("error", "warning"), "all": SEVERITIES}
        shown = [
            d
            for d in found
            if d.severity in keep[args.severity]
            and workspace.confinement.contains(d.path)
            and workspace.ignore.ignored_by(d.path) is None
        ]
        if not shown:
            where = workspace.shown(path) if path is not None else "the open files"
            return ToolOutput(
                f"No {'' if args.severity == 'all' else args.severity + ' '}diagnostics in {where}."
            )
        shown.sort(key=lambda d: (str(d.path), d.line, d.column))
        lines = [
            f"{workspace.shown(d.path)}:{d.line}:{d.column}: {d.severity}: {d.message}"
            + (f" [{d.source}]" if d.source else "")
            for d in shown[:MAX_DIAGNOSTICS]
        ]
        if len(shown) > MAX_DIAGNOSTICS:
            lines.append(f"[{len(shown) - MAX_DIAGNOSTICS} more not shown]")
        errors = sum(d.severity == "error" for d in shown)
        head = f"{errors} errors, {len(shown) - errors} other diagnostics:"
        return ToolOutput("\n".join([head, *lines]))
