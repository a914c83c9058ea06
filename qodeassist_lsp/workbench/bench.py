"""`Workbench`: the tools, edits, skills, MCP hub, gate and chats behind one door, built once.

The rules every door shares are written here and nowhere else:

- **Ignore files.** One cache of `IgnoreFilter` per (folder, file) serves the tool kit, the edit
  tools and the chat. The tools honour ``.qodeassistignore`` and ``.gitignore`` at the root of
  each workspace folder; ``create_file``/``edit_file``/``delete_file`` refuse a file either
  lists, naming the file that lists it. A chat message that mentions, attaches or links a file
  ``.qodeassistignore`` lists is refused (docs/chat.md).
- **Edits.** The edit manager always gets the ignore rules, the confinement of the workspace
  folders plus ``allowed_roots`` and the whole-file parse check; only *where* open files are
  read and written (``Ports.buffers``) and whether edits apply at once differ per door.
- **Gate.** Every tool call passes the one `PermissionGate` of ``[tools.permissions]``, which
  remembers "Allow for this chat" per chat whichever door asked; ``Ports.asker`` answers its
  questions (none: what needs asking is denied), a door serving a chat may answer that chat's
  (`PermissionGate.serve`: HTTP).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from qodeassist_lsp.context.ignore import (
    IGNORE_FILE_NAME,
    FolderIgnores,
    IgnoredFiles,
    IgnoreFilter,
)
from qodeassist_lsp.workbench.ports import Ports

if TYPE_CHECKING:
    from qodeassist_lsp.config.confinement import Confinement
    from qodeassist_lsp.config.pipelines import PipelineSpec
    from qodeassist_lsp.config.settings import Settings, ToolsSettings
    from qodeassist_lsp.context.codebase.model import CodebaseIndex
    from qodeassist_lsp.context.documents import Document
    from qodeassist_lsp.core.agent_pool import AgentPool
    from qodeassist_lsp.core.runtime_view import RuntimeView
    from qodeassist_lsp.core.tools import ToolContributor, ToolContributorRegistry, ToolRegistry
    from qodeassist_lsp.features.chat.mentions import CodebaseSearch
    from qodeassist_lsp.features.chat.plan import PlanRunner
    from qodeassist_lsp.features.chat.plan_host import ChatHost
    from qodeassist_lsp.features.chat.service import ChatService, EventSink
    from qodeassist_lsp.features.next_edit.service import NextEditService
    from qodeassist_lsp.mcp.definitions import ServerDefinition
    from qodeassist_lsp.mcp.hub import HubConfig, McpHub
    from qodeassist_lsp.skills.library import SkillLibrary
    from qodeassist_lsp.skills.service import SkillService
    from qodeassist_lsp.tools.edits.pending import EditManager
    from qodeassist_lsp.tools.kit import ToolKit
    from qodeassist_lsp.tools.permissions import PermissionGate
    from qodeassist_lsp.tools.workspace import ToolWorkspace
    from qodeassist_lsp.workbench.features import FeatureTable

log = logging.getLogger("qodeassist.workbench")

REVIEWED_TOOLS = ("create_file", "edit_file", "delete_file")
"""The file tools, whose edits wait for a review in a chat: never offered over MCP."""


def _hub_config(view: RuntimeView) -> HubConfig:
    # Run in a worker thread: it reads mcp.json and is the first import of the MCP SDK (about a
    # second of starlette, httpx2 and jsonschema, measured), which must not stall a server.
    from qodeassist_lsp.mcp.hub import hub_config

    return hub_config(view.configuration)


def offer_over_mcp(
    registry: ToolRegistry,
    contributors: ToolContributorRegistry,
    settings: Callable[[], Settings],
    extra: Sequence[ToolContributor] = (),
) -> None:
    """Fill ``registry`` with the chat pipeline's tools behind the headless gate of MCP.

    ``mcp serve`` and the HTTP API's ``/mcp`` serve it: the ``[tools.permissions]`` policy with
    ``ask`` refused unless ``[mcp] server_allow`` lists the class (`mcp.server_gate`), and no
    file-edit tools, since nobody would review their edits.
    """
    from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT
    from qodeassist_lsp.mcp.server_gate import HeadlessGate

    contributors.apply_to(registry, CHAT_ASSISTANT)
    for contributor in extra:
        contributor(registry, CHAT_ASSISTANT)
    for name in REVIEWED_TOOLS:
        registry.unregister(name)
    registry.gate = HeadlessGate(
        lambda permission: getattr(settings().tools.permissions, permission),
        lambda: settings().mcp.server_allow,
    )


class Workbench:
    """The engine one door serves: build it once, `wire` it into the runtime's contributors."""

    def __init__(self, view: RuntimeView, ports: Ports) -> None:
        """Serve ``view``'s configuration (read per call) through ``ports``."""
        from qodeassist_lsp.skills.service import SkillService, SkillSources

        self.view = view
        self.ports = ports
        self._ignores: dict[tuple[Path, str], IgnoreFilter] = {}
        self._edits: EditManager | None = None
        self.skills: SkillService = SkillService(lambda: SkillSources.of(view.configuration))
        self.hub: McpHub | None = None
        self._hub_changed = asyncio.Event()
        self.extra_servers: dict[str, ServerDefinition] = {}
        """MCP servers a door added to ``mcp.json``'s (ACP's ``session/new``), by name."""
        self._gate: PermissionGate | None = None
        self._pool: AgentPool | None = None
        self._next_edit: NextEditService | None = None
        self.features: FeatureTable = ports.features or self._feature_table()
        """The features of the table (``workbench/features.py``), built once per process."""

    def _feature_table(self) -> FeatureTable:
        from qodeassist_lsp.workbench import features

        def folders() -> list[Path]:
            # Outside a turn ACP has no session folder: the folder the agent started in.
            return list(self.ports.folders()) or [Path.cwd()]

        table = features.FeatureTable(
            features.feature_specs(),
            features.services(
                self.view,
                folders,
                # The ignore files of the folders the features see (ACP's index: the cwd's).
                ignored_by=lambda path: self.ignores(folders()).ignored_by(path),
                confinement=self.confinement,
            ),
        )
        table.watch(self.ports.documents)
        return table

    def _tools(self) -> ToolsSettings:
        return self.view.configuration.settings.tools

    # -- the one ignore rule -----------------------------------------------------------------
    def ignores(self, folders: Sequence[Path] | None = None) -> FolderIgnores:
        """Return the ignore files at the root of ``folders`` (default: the workspace's)."""
        return FolderIgnores.of(list(self.ports.folders() if folders is None else folders),
                                self._ignores)  # fmt: skip

    def ignored_by(self, path: Path) -> str | None:
        """Return the ignore file that excludes ``path`` from the tools, or None."""
        return self.ignores().ignored_by(path)

    def ignored_document(
        self, folders: Callable[[], Sequence[Path]] | None = None
    ) -> Callable[[Document], bool]:
        """Return whether the ``.qodeassistignore`` of one of ``folders`` excludes a document.

        The rule of what a feature's prompt may quote from the open documents (completion, next
        edits, the refactor); ``folders`` default to the workspace's.
        """
        ignored = self.ignored_file(folders)
        return lambda document: bool(document.path) and ignored(document.path)

    def ignored_file(self, folders: Callable[[], Sequence[Path]] | None = None) -> IgnoredFiles:
        """Return whether the ``.qodeassistignore`` of one of ``folders`` excludes a file.

        Its verdicts are remembered per path until the folders or one of their ignore files
        change (`IgnoredFiles`): it is asked for every open document of every completion.
        """
        return IgnoredFiles(folders or self.ports.folders, self.qodeassist_ignore)

    def qodeassist_ignore(self, folder: Path | None) -> IgnoreFilter | None:
        """Return the ``.qodeassistignore`` of ``folder`` (chat messages, completion context)."""
        if folder is None:
            return None
        key = (folder, IGNORE_FILE_NAME)
        if key not in self._ignores:
            self._ignores[key] = IgnoreFilter(folder, file_name=IGNORE_FILE_NAME)
        return self._ignores[key]

    # -- what the tools see ------------------------------------------------------------------
    def confinement(self) -> Confinement:
        """Return where tools may read and write now: the folders plus ``allowed_roots``."""
        from qodeassist_lsp.config.confinement import Confinement

        allowed = self.view.configuration.settings.general.allowed_roots
        return Confinement.of(list(self.ports.folders()), allowed)

    def workspace(self) -> ToolWorkspace:
        """Return the tool kit's view of the workspace as it is now."""
        from qodeassist_lsp.tools.workspace import ToolWorkspace

        folders = list(self.ports.folders())
        return ToolWorkspace.of(
            folders,
            self.view.configuration.settings.general.allowed_roots,
            self.ignores(folders),
            self.ports.open_buffers(),
            editor=self.ports.editor_files(),
            runner=self.ports.runner(),
        )

    @property
    def edits(self) -> EditManager:
        """The edit manager of the file tools (ignore rules and parse check always on)."""
        if self._edits is None:
            from qodeassist_lsp.context.parse_check import file_parse_check
            from qodeassist_lsp.tools.edits.checkpoints import CheckpointStore
            from qodeassist_lsp.tools.edits.pending import EditManager, EditScope
            from qodeassist_lsp.tools.edits.ports import NoEditor

            paths = self.view.configuration.paths
            self._edits = EditManager(
                CheckpointStore(paths.data_root / "checkpoints"),
                self.ports.buffers or NoEditor(),
                EditScope(
                    confinement=self.confinement,
                    base=lambda: next(iter(self.ports.folders()), None),
                    ignored=self.ignored_by,
                    auto_apply=self.ports.auto_apply
                    or (lambda: self._tools().auto_apply_file_edits),
                    parse_check=file_parse_check(),
                ),
                self.ports.edit_status,
            )
        return self._edits

    def kit(self) -> ToolKit:
        """Return a tool kit over the workspace as it is at each call."""
        from qodeassist_lsp.core.memory import Memory
        from qodeassist_lsp.tools.kit import KitSources, ToolKit

        return ToolKit(
            KitSources(
                settings=self._tools,
                workspace=self.workspace,
                diagnostics=self.ports.diagnostics,
                memory=lambda: Memory.of(self.view.configuration.paths),
            )
        )

    def wire(self, contributors: ToolContributorRegistry, *, edits: bool = True) -> None:
        """Offer the kit, the file tools (``edits``), ``load_skill`` and MCP; set the gate."""
        from qodeassist_lsp.skills.load_skill_tool import contributor as load_skill
        from qodeassist_lsp.skills.service import skill_tool_enabled

        contributors.add(self.kit().contribute)
        if edits:
            from qodeassist_lsp.tools.edits.file_tools import edit_tools

            contributors.add(edit_tools(self.edits, lambda: self._tools().enabled))
        view = self.view
        contributors.add(
            load_skill(
                lambda: self.skills.current, lambda: skill_tool_enabled(view.configuration.settings)
            )
        )
        contributors.add(self._hub_tools)
        contributors.add(self.features.contribute)
        contributors.gate = self.gate

    @property
    def gate(self) -> PermissionGate:
        """The one permission gate of every tool call (``Ports.asker`` asks the user)."""
        if self._gate is None:
            from qodeassist_lsp.tools.permissions import PermissionGate

            self._gate = PermissionGate(lambda: self._tools().permissions, self.ports.asker)
        return self._gate

    def _hub_tools(self, registry: ToolRegistry, pipeline: PipelineSpec) -> None:
        if self.hub is not None:
            self.hub.contribute(registry, pipeline)

    # -- skills --------------------------------------------------------------------------------
    async def current_skills(self) -> SkillLibrary | None:
        """Rescan when the skill folders changed; return the library (the chat's source)."""
        await self.skills.refresh_or_keep()
        return self.skills.current

    # -- MCP -------------------------------------------------------------------------------------
    async def start_mcp(
        self, extra: Sequence[ServerDefinition] = (), *, lazy: bool = False, wait: bool = True
    ) -> McpHub | None:
        """Run the servers of ``mcp.json`` plus ``extra``; with ``wait``, until none connects.

        A chat session's tools are fixed when it is created, so a door that creates one next
        waits. ``lazy``: without a server to run, no hub is made (the MCP SDK takes a second to
        import). A project's server nobody approved stays held.
        """
        for server in extra:
            self.extra_servers[server.name] = server
        config = await asyncio.to_thread(_hub_config, self.view)
        own = {server.name for server in config.servers}
        servers = config.servers + tuple(d for n, d in self.extra_servers.items() if n not in own)
        if self.hub is None and lazy and (not config.enabled or not servers):
            return None
        hub = self._hub_of()
        try:
            await hub.configure(replace(config, servers=servers))
            if wait:
                await self._connected(hub, config, [s.name for s in servers])
        except BaseException:
            await self.aclose()
            raise
        return hub

    def _hub_of(self) -> McpHub:
        if self.hub is None:
            from qodeassist_lsp.mcp.approvals import ApprovalStore
            from qodeassist_lsp.mcp.hub import McpHub

            self.hub = McpHub(
                ApprovalStore(self.view.configuration.paths.data_root),
                self.ports.mcp_asker,
                self._hub_change,
            )
        return self.hub

    def _hub_change(self) -> None:
        self._hub_changed.set()
        self.ports.mcp_changed()

    async def _connected(self, hub: McpHub, config: HubConfig, names: Sequence[str]) -> None:
        """Wait until none of ``names`` is connecting (at most the connect timeout)."""

        def connecting() -> bool:
            states = (hub.connection(name) for name in names)
            return any(c is not None and c.state == "connecting" for c in states)

        limit = max(
            config.limits.connect_timeout_s, self.view.settings.mcp.client_connect_timeout_s
        )
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(limit + 1.0):
                while True:
                    self._hub_changed.clear()  # before looking: no change is missed
                    if not connecting():
                        break
                    await self._hub_changed.wait()

    # -- next edits ----------------------------------------------------------------------------
    def next_edit(
        self,
        folders: Callable[[], Sequence[Path]] | None = None,
        *,
        is_ready: Callable[[], bool] = lambda: True,
    ) -> NextEditService:
        """Return the next-edit service of the process (built on first call, over ``folders``).

        Documents the ``.qodeassistignore`` of one of ``folders`` (default: the workspace's)
        excludes get no edits and never go to a prompt; ``is_ready``: no prefetch before.
        """
        if self._next_edit is None:
            from qodeassist_lsp.features.next_edit.service import NextEditService

            self._next_edit = NextEditService(
                self.view,
                self.ports.documents,
                is_ignored=self.ignored_document(folders),
                is_ready=is_ready,
                codebase=self.codebase_index,
            )
        return self._next_edit

    # -- chats ---------------------------------------------------------------------------------
    def chat_service(
        self,
        sink: EventSink,
        folders: Callable[[], Sequence[Path]] | None = None,
        skills: Callable[[], Awaitable[SkillLibrary | None]] | None = None,
    ) -> ChatService:
        """Return a chat service over ``folders`` (default: the ports') sending to ``sink``."""
        from qodeassist_lsp.features.chat import pool_use
        from qodeassist_lsp.features.chat.service import ChatService

        if self._pool is None:  # one pool for every chat of the process: one count per agent
            self._pool = pool_use.agent_pool(self.view)
        folders = folders or self.ports.folders
        first = next(iter(folders()), None)
        return ChatService(
            self.view,
            self.ports.documents,
            sink,
            workspace=first,
            ignore=lambda: self.qodeassist_ignore(first),
            folders=lambda: list(folders()),
            skills=skills or self.current_skills,
            pool=self._pool,
            plans=self.plan_runner,
            codebase=self.codebase_search,
        )

    def codebase_search(self) -> CodebaseSearch | None:
        """Return ``@codebase``'s port: the codebase feature's snippets; None while it is off."""
        from qodeassist_lsp.features.codebase.feature import CodebaseFeature

        codebase = self.features.provided("codebase")
        if not isinstance(codebase, CodebaseFeature) or not codebase.enabled():
            return None
        return codebase.for_mention

    def codebase_index(self, path: Path) -> CodebaseIndex | None:
        """Return the index of the folder holding ``path`` (completion and next edits' port).

        None while the codebase feature is off, or the folder's index is not built yet.
        """
        from qodeassist_lsp.features.codebase.feature import CodebaseFeature

        codebase = self.features.provided("codebase")
        if not isinstance(codebase, CodebaseFeature) or not codebase.enabled():
            return None
        return codebase.index_for(path)

    def plan_runner(self, chats: ChatHost) -> PlanRunner:
        """Return plan mode for ``chats`` (the plan prompt from the configuration's personas)."""
        from qodeassist_lsp.features.chat.plan import PlanRunner

        return PlanRunner(chats, lambda: self.view.configuration.paths.personas)

    async def aclose(self) -> None:
        """Stop the MCP servers."""
        hub, self.hub = self.hub, None
        if hub is not None:
            with contextlib.suppress(Exception):
                await hub.aclose()
