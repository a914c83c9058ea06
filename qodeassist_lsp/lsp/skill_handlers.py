"""Skills over LSP: ``qodeassist/skills/list``, the ``load_skill`` contributor, skill diagnostics.

The feature watches the workbench's `SkillService` (the workbench offers ``load_skill``). It
scans once the configuration is loaded, again after each configuration reload and whenever the
skill folders change (polled like the config files); the chat service asks the workbench for the
current library. Problems in a ``SKILL.md`` are logged, shown once
(``window/showMessage``, for errors) and published as diagnostics on that file while it is open.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from qodeassist_lsp.context.documents import DocumentEvent, DocumentEventKind
from qodeassist_lsp.lsp import methods
from qodeassist_lsp.lsp.feature import LanguageFeature
from qodeassist_lsp.lsp.server import QodeAssistServer, config_diagnostic

if TYPE_CHECKING:
    from qodeassist_lsp.config.configuration import Configuration
    from qodeassist_lsp.skills.library import SkillLibrary
    from qodeassist_lsp.skills.service import SkillService

log = logging.getLogger("qodeassist.skills")

POLL_INTERVAL_S = 2.0


class SkillFeature(LanguageFeature):
    """The skill library of one server: scanning, watching, diagnostics and status."""

    status_key = "skills"

    def __init__(self, server: QodeAssistServer, poll_interval: float = POLL_INTERVAL_S) -> None:
        """Serve skills for ``server``; the feature scans first at ``initialized``."""
        self.server = server
        self._interval = poll_interval
        self._service: SkillService | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._refreshes: set[asyncio.Task[bool]] = set()
        self._published: set[str] = set()
        server.documents.add_listener(self._on_document)

    async def initialized(self) -> None:
        """Scan the workbench's skill folders and start watching them."""
        await self.server.backend.runtime()
        service = self.server.workbench().skills
        service.listeners.append(self._on_scan)
        self._service = service
        if not await service.refresh():  # a chat scanned first, before this listened
            self._on_scan(service.library)
        self._watcher = asyncio.create_task(self._poll(), name="qa-skills-watch")

    def reloaded(self, config: Configuration) -> None:
        """Rescan soon after a reload (``[skills]`` may differ)."""
        if self._service is not None:
            task = asyncio.get_running_loop().create_task(self._service.refresh())
            self._refreshes.add(task)
            task.add_done_callback(self._refreshes.discard)

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            try:
                if self._service is not None:
                    await self._service.refresh()
            except Exception:  # a broken poll must not stop watching
                log.exception("skill watch failed")

    def _on_scan(self, library: SkillLibrary) -> None:
        errors = [p for p in library.problems if p.severity == "error"]
        if errors:
            self.server.show_error(
                f"skill-errors-{len(errors)}-{errors[0].format()}",
                f"qodeassist: {len(errors)} skill(s) could not be loaded, first: "
                f"{errors[0].format()}",
            )
        for document in self.server.documents:
            self._publish(document.uri)
        stale = set(self._published) - {d.uri for d in self.server.documents}
        for uri in stale:
            self._publish(uri)

    def _on_document(self, event: DocumentEvent) -> None:
        if event.kind is DocumentEventKind.OPENED:
            self._publish(event.document.uri)

    def _publish(self, uri: str) -> None:
        """Publish the skill problems of ``uri`` (clearing ones published before)."""
        path = to_fs_path(uri)
        if path is None or Path(path).name != "SKILL.md" or self._service is None:
            return
        target = str(Path(path).resolve())
        problems = [
            p
            for p in self._service.library.problems
            if p.file and str(Path(p.file).resolve()) == target
        ]
        if not problems and uri not in self._published:
            return
        if problems:
            self._published.add(uri)
        else:
            self._published.discard(uri)
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri, diagnostics=[config_diagnostic(p) for p in problems]
            )
        )

    def status(self) -> Any:
        """Return the ``skills`` part of ``qodeassist/status``."""
        service = self._service
        if service is None:
            return {"state": "loading"}
        library = service.library
        errors = sum(1 for p in library.problems if p.severity == "error")
        return {
            "state": "ready" if service.enabled else "disabled",
            "skills": len(library.skills),
            "shadowed": len(library.shadowed),
            "errors": errors,
            "warnings": len(library.problems) - errors,
            "roots": [{"path": str(r.path), "source": r.source} for r in service.roots],
        }

    async def aclose(self) -> None:
        """Stop watching."""
        for task in [self._watcher, *self._refreshes]:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._watcher = None


async def skills_list(ls: QodeAssistServer, _params: object) -> list[dict[str, Any]]:
    """List the loaded skills (rescanned if their folders changed)."""
    await ls.backend.runtime()
    library = await ls.workbench().current_skills()
    return library.summaries() if library is not None else []


def setup(server: QodeAssistServer) -> None:
    """Register ``qodeassist/skills/list`` and the skill feature on ``server``."""
    server.add_feature(SkillFeature(server))
    server.feature(methods.SKILLS_LIST)(skills_list)
