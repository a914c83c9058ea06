"""Completion over LSP: inline completion and the ``textDocument/completion`` fallback.

Both are thin translations to ``CompletionService``, which `CompletionFeature` creates on the
first opened document (so that it sees every edit, even those typed before the configuration
finished loading) and prepares once the configuration is loaded. The first opened document also
starts the completion model's server (a provider with a ``[launch]`` table, such as the embedded
model), so that the first suggestion does not wait for it (issue 27).

Positions arrive in the negotiated encoding (UTF-16 by default); the service works in code
points, so every position is converted through the pygls document on the way in and out.
"""

from __future__ import annotations

import asyncio
import logging
import re
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from qodeassist_lsp.config.overrides import effective_instance
from qodeassist_lsp.config.pipelines import CODE_COMPLETION
from qodeassist_lsp.context.documents import DocumentEvent
from qodeassist_lsp.lsp import methods
from qodeassist_lsp.lsp.feature import LanguageFeature
from qodeassist_lsp.lsp.positions import line_at, require_line, to_client_units, to_code_points
from qodeassist_lsp.lsp.server import QodeAssistServer

_WORD_BEFORE = re.compile(r"[\w$]+$")


def _documentation(ls: QodeAssistServer, text: str) -> types.MarkupContent | str:
    """Return the suggestion as Markdown when the client declared it, else plain text."""
    document = ls.client_capabilities.text_document
    completion = document.completion if document else None
    item = completion.completion_item if completion else None
    formats = item.documentation_format if item else None
    if formats and types.MarkupKind.Markdown in formats:
        fence = "````" if "```" in text else "```"
        return types.MarkupContent(types.MarkupKind.Markdown, f"{fence}\n{text}\n{fence}")
    return text


if TYPE_CHECKING:
    from qodeassist_lsp.config.configuration import Configuration
    from qodeassist_lsp.context.codebase.model import CodebaseIndex
    from qodeassist_lsp.context.ignore import IgnoredFiles
    from qodeassist_lsp.features.completion.service import (
        CompletionItem,
        CompletionResult,
        CompletionService,
    )
    from qodeassist_lsp.lsp.params import CursorParams

log = logging.getLogger("qodeassist.server")


class _WorkspaceIgnores:
    """The completion service's ``PathFilter``: the workbench's rule, as next edits have it.

    A file the ``.qodeassistignore`` of any workspace folder lists (the folders are read at
    each call: they come and go) gets no completion and is never quoted in another file's
    prompt. The path goes through as the document has it: no ``Path`` is built per call.
    """

    def __init__(self, ignored: IgnoredFiles) -> None:
        self._ignored = ignored

    def is_ignored(self, path: str) -> bool:
        """Whether a workspace folder's ``.qodeassistignore`` excludes ``path``."""
        return self._ignored(path)

    def held(self) -> AbstractContextManager[None]:
        """Check the folders and their ignore files once for one prompt (`IgnoredFiles.held`)."""
        return self._ignored.held()


FALLBACK_BUDGET_S = 0.8
"""``textDocument/completion`` answers within this or empty (``isIncomplete``), so it never
holds up other servers' items; the generation keeps running and the next request reuses it."""


async def _complete(
    ls: QodeAssistServer,
    feature: CompletionFeature,
    method: str,
    uri: str,
    line: int,
    column: int,
    invoked: bool,
) -> tuple[CompletionResult, str] | None:
    """Run one completion; return the result and the cursor line's text, or None if stale.

    A line past the end of the document is refused (``InvalidParams``, -32602).
    """
    service = await feature.ready()
    # Imported late: see CompletionFeature.created.
    from qodeassist_lsp.features.completion.service import CompletionRequest, TriggerKind
    from qodeassist_lsp.features.completion.stats import Outcome

    document = ls.documents.get(uri)
    if document is None:
        return None
    require_line(method, uri, document.text, line)
    start, line_text = line_at(document.text, line)
    character = to_code_points(ls.workspace.position_codec, line_text, column)
    trigger = TriggerKind.INVOKED if invoked else TriggerKind.AUTOMATIC
    request = CompletionRequest(document, line, character, trigger, start + character)
    result = await service.complete(request)
    if result.error is not None:
        ls.background_failed("completion", result.agent, result.error)
    elif result.outcome in (Outcome.MODEL, Outcome.EMPTY, Outcome.REUSED):
        ls.background_succeeded()
    current = ls.documents.get(uri)
    if current is None or current.version != document.version:
        return None  # the document changed while we worked: the answer is stale
    return result, line_text


def _columns(ls: QodeAssistServer, line_text: str, item: CompletionItem) -> tuple[int, int]:
    """Return the item's replaced span on its line, in the client's position units."""
    codec = ls.workspace.position_codec
    start = to_client_units(codec, line_text, item.start_character)
    end = to_client_units(codec, line_text, item.end_character)
    return start, end


def _range(ls: QodeAssistServer, line_text: str, item: CompletionItem) -> types.Range:
    start, end = _columns(ls, line_text, item)
    return types.Range(types.Position(item.line, start), types.Position(item.line, end))


def _accept_command(item: CompletionItem) -> types.Command:
    return types.Command(title="accepted", command=methods.CMD_ACCEPTED, arguments=[item.id])


def _inline_item(
    ls: QodeAssistServer, line_text: str, item: CompletionItem
) -> types.InlineCompletionItem:
    """Build one inline item: the text, the range it replaces, the acceptance command."""
    return types.InlineCompletionItem(
        insert_text=item.insert_text,
        range=_range(ls, line_text, item),
        command=_accept_command(item),
    )


class CompletionFeature(LanguageFeature):
    """The completion service of one server, created on the first opened document."""

    status_key = "completion"

    def __init__(self, server: QodeAssistServer) -> None:
        """Create the service for ``server`` when its first document opens."""
        self.server = server
        self.service: CompletionService | None = None
        self._model_start: asyncio.Task[None] | None = None
        server.documents.add_listener(self._on_first_document)

    def _on_first_document(self, event: DocumentEvent) -> None:
        self.server.documents.remove_listener(self._on_first_document)
        self.created()
        self._model_start = asyncio.ensure_future(self.start_model())

    async def start_model(self) -> None:
        """Start (or adopt) the server of the completion model now, not on the first key.

        The first completion agent's provider instance, when it has a ``[launch]`` table with
        ``auto_start``, completion is on and automatic. A failure is left to the first request,
        which reports it (the launcher does not retry during its cool-down).
        """
        from qodeassist_lsp.features.completion.settings import COMPLETION_SETTINGS

        runtime = await self.server.backend.runtime()
        settings = runtime.settings
        agents = runtime.configuration.pipelines.roster(CODE_COMPLETION)
        profile = runtime.configuration.agents.get(agents[0]) if agents else None
        if (
            profile is None
            or not settings.general.enabled
            or settings.section(COMPLETION_SETTINGS).mode == "manual"
            or not settings.section(COMPLETION_SETTINGS).auto_completion
        ):
            return
        name = effective_instance(runtime.configuration, profile)
        instance = runtime.configuration.providers.get(name)
        launcher = runtime.launcher(name)
        launch = instance.launch if instance is not None else None
        if launch is None or not launch.auto_start or launcher is None:
            return
        try:
            await launcher.ensure_ready()
        except Exception as exc:  # the first completion request reports it
            log.info("starting %s early failed: %s", name, exc)

    def created(self) -> CompletionService:
        """Return the service, creating it (and its document listener) now."""
        if self.service is None:
            # Imported on first use: the feature's modules (pydantic, Jinja2, httpx) took
            # 450-650 ms to import, measured, more than `initialize` may wait (500 ms).
            from qodeassist_lsp.features.completion.service import CompletionService

            self.service = CompletionService(
                self.server.backend, self.server.documents, codebase=self.codebase_index
            )
        return self.service

    def codebase_index(self, path: Path) -> CodebaseIndex | None:
        """Return the codebase index of the folder holding ``path`` (the workbench's port)."""
        if self.server.ports.features is None:  # no feature table: no codebase feature
            return None
        return self.server.workbench().codebase_index(path)

    async def ready(self) -> CompletionService:
        """Return the service once the configuration is loaded."""
        service = self.created()
        await self.server.backend.runtime()
        if service.ignore is None:
            service.ignore = _WorkspaceIgnores(self.server.workbench().ignored_file())
        return service

    async def initialized(self) -> None:
        """Load the feature now, not on the first keystroke."""
        await self.ready()

    def reloaded(self, config: Configuration) -> None:
        """Drop cached suggestions and running generations."""
        if self.service is not None:
            self.service.reset()

    def status(self) -> dict[str, Any] | None:
        """Return the completion statistics, None before the service exists."""
        return self.service.status() if self.service is not None else None

    async def aclose(self) -> None:
        """Stop listening and cancel everything in flight."""
        if self._model_start is not None:
            self._model_start.cancel()
        if self.service is not None:
            self.service.close()


async def inline_completion(
    ls: QodeAssistServer, params: types.InlineCompletionParams
) -> types.InlineCompletionList:
    """Answer ``textDocument/inlineCompletion`` with the service's suggestions."""
    feature = ls.feature_of(CompletionFeature)
    if params.context.selected_completion_info is not None:
        # Items would have to extend the popup's selection; stay out of its way.
        return types.InlineCompletionList(items=[])
    answer = await _complete(
        ls,
        feature,
        types.TEXT_DOCUMENT_INLINE_COMPLETION,
        params.text_document.uri,
        params.position.line,
        params.position.character,
        params.context.trigger_kind == types.InlineCompletionTriggerKind.Invoked,
    )
    if answer is None:
        return types.InlineCompletionList(items=[])
    result, line_text = answer
    return types.InlineCompletionList(
        items=[_inline_item(ls, line_text, item) for item in result.items]
    )


LABEL_CHARS = 80
"""The menu label is cut after this many characters (the documentation has all of it)."""


def _whole_line(line_text: str, item: CompletionItem) -> str:
    """Return the menu label: the cursor line as accepting ``item`` leaves it, unindented.

    Users read ``return a + b`` where only the continuation ``turn a + b`` was shown (issue
    47). A suggestion that starts on a new line is labelled by its first line instead.
    """
    first, *rest = item.insert_text.split("\n")
    if not first.strip() and rest:
        line = next((r for r in rest if r.strip()), first)
    else:
        line = line_text[: item.start_character] + first
        if not rest:
            line += line_text[item.end_character :]
    line = line.strip()
    return line if len(line) <= LABEL_CHARS else line[: LABEL_CHARS - 1] + "…"


async def completion(ls: QodeAssistServer, params: types.CompletionParams) -> types.CompletionList:
    """Answer ``textDocument/completion`` with one item, or empty within the budget."""
    feature = ls.feature_of(CompletionFeature)
    invoked = (
        params.context is not None
        and params.context.trigger_kind == types.CompletionTriggerKind.Invoked
    )
    try:
        answer = await asyncio.wait_for(
            _complete(
                ls,
                feature,
                types.TEXT_DOCUMENT_COMPLETION,
                params.text_document.uri,
                params.position.line,
                params.position.character,
                invoked,
            ),
            FALLBACK_BUDGET_S,
        )
    except TimeoutError:
        return types.CompletionList(is_incomplete=True, items=[])
    if answer is None or not answer[0].items:
        return types.CompletionList(is_incomplete=True, items=[])
    result, line_text = answer
    item = result.items[0]
    # Clients filter the menu by the word left of the cursor: the item must match it.
    cursor = to_code_points(ls.workspace.position_codec, line_text, params.position.character)
    word = _WORD_BEFORE.search(line_text[:cursor])
    typed = word.group(0) if word else ""
    return types.CompletionList(
        is_incomplete=True,
        items=[
            types.CompletionItem(
                label=_whole_line(line_text, item),
                kind=types.CompletionItemKind.Text,
                detail="qodeassist",
                # The label is the whole line: clients must filter on the typed word instead.
                filter_text=typed + item.insert_text,
                documentation=_documentation(ls, item.insert_text),
                sort_text="\U0010ffff",  # after every other server's items
                text_edit=types.TextEdit(_range(ls, line_text, item), item.insert_text),
                insert_text_format=types.InsertTextFormat.PlainText,
                command=_accept_command(item),
            )
        ],
    )


async def accepted(ls: QodeAssistServer, item_id: str) -> bool:
    """Record that the user accepted completion item ``item_id``."""
    feature = ls.feature_of(CompletionFeature)
    return (await feature.ready()).accept(item_id)


async def did_move_cursor(ls: QodeAssistServer, hint: CursorParams) -> None:
    """Note where the caret rests (``qodeassist/didMoveCursor``): the place to warm."""
    document = ls.documents.get(hint.text_document.uri)
    if document is None or hint.position.line > document.text.count("\n"):
        return  # a hint about a closed document or a stale line is no harm, just useless
    line_text = line_at(document.text, hint.position.line)[1]
    column = to_code_points(ls.workspace.position_codec, line_text, hint.position.character)
    ls.documents.note_cursor(document.uri, hint.position.line, column)


def setup(server: QodeAssistServer) -> None:
    """Register the completion handlers and feature on ``server``."""
    server.add_feature(CompletionFeature(server))
    server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())(
        inline_completion
    )
    server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions())(completion)
    server.command(methods.CMD_ACCEPTED)(accepted)
    server.feature(methods.DID_MOVE_CURSOR)(did_move_cursor)
