"""Quick refactor over LSP: lazy ``refactor.rewrite`` code actions and ``qodeassist.refactor``.

Listing actions costs nothing: each action carries only what the refactor needs (document,
range, version, instruction). The model runs when the user picks one — through
``codeAction/resolve`` (the edit comes back in the action) or through the ``qodeassist.refactor``
command (the edit is applied with ``workspace/applyEdit``, labelled, as one undo step).

An answer the guard refused (prose, runaway repetition, a size far off, code that no longer
parses) is never applied on its own: the user is asked with ``window/showMessageRequest``, which
every client can show, giving the reason and the diff, with "Discard" first (the safe choice is
the default where a client has one: VS Code's modal, Eglot's ``completing-read``) and "Apply
anyway"; only "Apply anyway" sends the edit through ``workspace/applyEdit``. A resolved code action
then carries no edit. The refusal is logged as a warning (the server log and ``window/logMessage``).
"""

from __future__ import annotations

import asyncio
import difflib
import logging
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from qodeassist_lsp.context.documents import offset_at
from qodeassist_lsp.lsp import methods
from qodeassist_lsp.lsp.feature import LanguageFeature
from qodeassist_lsp.lsp.positions import line_at, require_line, to_client_units, to_code_points
from qodeassist_lsp.lsp.progress import WorkDoneProgress
from qodeassist_lsp.lsp.server import QodeAssistServer

if TYPE_CHECKING:
    from qodeassist_lsp.config.configuration import Configuration
    from qodeassist_lsp.features.refactor.instructions import Instruction
    from qodeassist_lsp.features.refactor.service import RefactorResult, RefactorService

log = logging.getLogger("qodeassist.server")

DEFAULT_TITLE = "QodeAssist: Refactor with instruction…"
INSERT_TITLE = "QodeAssist: Generate code here…"
APPLY_ANYWAY = "Apply anyway"
DISCARD = "Discard"
PREFIX = "QodeAssist refactor"
"""How the refactor's messages start (clients that add "QodeAssist:" leave such a title alone)."""
_DIFF_LINES = 40
"""Diff lines shown in the question; the whole diff goes to the log (window/logMessage)."""


class RefactorFeature(LanguageFeature):
    """The refactor service of one server and its instruction library."""

    def __init__(self, server: QodeAssistServer) -> None:
        """Serve refactors for ``server``; the service is created on first use."""
        self.server = server
        self._service: RefactorService | None = None
        self._instructions: list[Instruction] | None = None
        self._asking: set[asyncio.Task[Any]] = set()

    def ask_in_background(self, question: Coroutine[Any, Any, Any]) -> None:
        """Ask the user ``question`` without holding up the request that raised it."""
        task = asyncio.ensure_future(question)
        self._asking.add(task)  # the loop keeps only weak references to tasks
        task.add_done_callback(self._asked)

    def _asked(self, task: asyncio.Task[Any]) -> None:
        self._asking.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("asking about a refused refactor failed: %s", task.exception())

    async def aclose(self) -> None:
        """Stop asking about refused refactors (``shutdown``)."""
        for task in list(self._asking):
            task.cancel()

    async def service(self) -> RefactorService:
        """Return the refactor service once the configuration is loaded."""
        await self.server.backend.runtime()
        if self._service is None:
            # Imported on first use: the feature's modules (pydantic, Jinja2, httpx) took
            # 450-650 ms to import, measured, more than `initialize` may wait (500 ms).
            from qodeassist_lsp.features.refactor.service import RefactorService
            from qodeassist_lsp.lsp.rules_handlers import finder_of

            self._service = RefactorService(
                self.server.backend,
                self.server.documents,
                instructions=self.instructions,
                is_ignored=self.server.workbench().ignored_document(),
                rules=finder_of(self.server),
            )
        return self._service

    def instructions(self) -> list[Instruction]:
        """Return the instruction library (bundled, user, project), loaded once per reload."""
        if self._instructions is None:
            from qodeassist_lsp.features.refactor.instructions import load_instructions

            paths = self.server.backend.paths
            if paths is None:
                return []
            self._instructions, problems = load_instructions(paths)
            for problem in problems:
                log.warning("%s", problem.format())
        return self._instructions

    def reloaded(self, config: Configuration) -> None:
        """Load the instruction library again on next use."""
        self._instructions = None


def _code_points(ls: QodeAssistServer, text: str, position: types.Position) -> tuple[int, int]:
    _start, line_text = line_at(text, position.line)
    return position.line, to_code_points(ls.workspace.position_codec, line_text, position.character)


def _client_position(ls: QodeAssistServer, text: str, line: int, character: int) -> types.Position:
    _start, line_text = line_at(text, line)
    return types.Position(line, to_client_units(ls.workspace.position_codec, line_text, character))


def _code_action_support(ls: QodeAssistServer) -> tuple[bool, bool]:
    """Whether the client resolves an action's edit later, and whether it shows action tags."""
    document = ls.client_capabilities.text_document
    code_action = document.code_action if document else None
    if code_action is None:
        return False, False
    resolve = code_action.resolve_support
    return resolve is not None and "edit" in resolve.properties, bool(code_action.tag_support)


def _require_range(method: str, uri: str, text: str, selection: types.Range) -> None:
    """Refuse (``InvalidParams``) a range with a line past the end of the document."""
    for position in (selection.start, selection.end):
        require_line(method, uri, text, position.line)


async def _run(
    ls: QodeAssistServer,
    feature: RefactorFeature,
    method: str,
    args: dict[str, Any],
    token: types.ProgressToken | None,
) -> tuple[RefactorResult | None, str]:
    """Run the refactor ``args`` (`params.RefactorParams`) describes; return the result and title.

    Params that do not validate, and a range past the end of the document, are refused
    (``InvalidParams``, -32602), never edited.
    """
    from qodeassist_lsp.features.refactor.service import RefactorRequest  # see service()
    from qodeassist_lsp.lsp.params import RefactorParams, parse

    params = parse(RefactorParams, args)
    service = await feature.service()
    uri = params.uri
    document = ls.documents.get(uri)
    if document is None:
        return None, "the document is not open"
    if params.version is not None and params.version != document.version:
        return None, "the document changed since the action was offered; run it again"
    ends = sorted((p.line, p.character) for p in (params.range.start, params.range.end))
    selection = types.Range(types.Position(*ends[0]), types.Position(*ends[1]))
    _require_range(method, uri, document.text, selection)
    start = _code_points(ls, document.text, selection.start)
    end = _code_points(ls, document.text, selection.end)
    request = RefactorRequest(
        document,
        start[0],
        start[1],
        end[0],
        end[1],
        instruction=params.instruction,
        instruction_id=params.instruction_id,
    )
    title = params.title or "QodeAssist: Refactor"
    progress = WorkDoneProgress(ls, token, title)
    await progress.begin()
    task = asyncio.ensure_future(service.refactor(request, progress.report))
    progress.on_cancel(task.cancel)
    try:
        result = await task
    except asyncio.CancelledError:
        progress.end("cancelled")
        if task.cancelled() and not asyncio.current_task().cancelling():  # type: ignore[union-attr]
            return None, "cancelled"
        raise
    progress.end(result.message or str(result.outcome))
    return result, title


def _edit(ls: QodeAssistServer, uri: str, result: RefactorResult) -> types.WorkspaceEdit:
    document = ls.documents.get(uri)
    text = document.text if document is not None else ""
    new_range = types.Range(
        _client_position(ls, text, result.start_line, result.start_character),
        _client_position(ls, text, result.end_line, result.end_character),
    )
    return types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=uri, version=result.document_version
                ),
                edits=[types.TextEdit(range=new_range, new_text=result.new_text)],
            )
        ]
    )


def _explain(ls: QodeAssistServer, result: RefactorResult | None, reason: str) -> None:
    message = reason
    if result is not None:
        message = result.message or str(result.outcome)
        if result.error is not None:
            message = f"{result.error.category} error: {result.error.message}"
            log.warning("refactor failed: %s", message)
    ls.window_show_message(
        types.ShowMessageParams(type=types.MessageType.Warning, message=f"{PREFIX}: {message}")
    )


def refused_diff(text: str, result: RefactorResult) -> str:
    """Return the unified diff of the selection against a refused result's text."""
    start = offset_at(text, result.start_line, result.start_character)
    end = offset_at(text, result.end_line, result.end_character)
    old = text[start:end].splitlines(keepends=True)
    new = result.new_text.splitlines(keepends=True)
    lines = difflib.unified_diff(old, new, "selection", "result", lineterm="")
    return "\n".join(line.rstrip("\n") for line in lines)


async def _offer_refused(
    ls: QodeAssistServer, uri: str, result: RefactorResult, label: str
) -> dict[str, Any]:
    """Ask whether to apply a refused result; apply it only on "Apply anyway"."""
    document = ls.documents.get(uri)
    diff = refused_diff(document.text if document is not None else "", result)
    log.warning("refactor answer refused: %s", result.message)
    ls.window_log_message(
        types.LogMessageParams(types.MessageType.Warning, f"{PREFIX}: {result.message}\n{diff}")
    )
    shown = diff.split("\n")
    if len(shown) > _DIFF_LINES:
        shown = [*shown[:_DIFF_LINES], f"… ({len(shown) - _DIFF_LINES} more lines in the log)"]
    answer = await ls.window_show_message_request_async(
        types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=f"{PREFIX}: {result.message}.\n" + "\n".join(shown),
            actions=[types.MessageActionItem(DISCARD), types.MessageActionItem(APPLY_ANYWAY)],
        )
    )
    outcome: dict[str, Any] = {"applied": False, "refused": True, "message": result.message}
    if answer is None or answer.title != APPLY_ANYWAY:
        return outcome
    current = ls.documents.get(uri)
    if current is None or current.version != result.document_version:
        _explain(ls, None, "the document changed meanwhile; nothing was applied")
        return outcome
    applied = await ls.workspace_apply_edit_async(
        types.ApplyWorkspaceEditParams(edit=_edit(ls, uri, result), label=label)
    )
    if not applied.applied:
        _explain(ls, None, applied.failure_reason or "the editor did not apply the edit")
    return {**outcome, "applied": applied.applied}


async def code_action(
    ls: QodeAssistServer, params: types.CodeActionParams
) -> list[types.CodeAction] | None:
    """Offer the refactor code actions for the selection (or cursor)."""
    feature = ls.feature_of(RefactorFeature)
    only = params.context.only
    if only and not any(str(kind).startswith("refactor") for kind in only):
        return None
    document = ls.documents.get(params.text_document.uri)
    if document is None:
        return None
    _require_range(
        types.TEXT_DOCUMENT_CODE_ACTION, params.text_document.uri, document.text, params.range
    )
    empty = params.range.start == params.range.end
    if empty:  # editors ask for code actions where the caret rests: warm completion there
        caret = _code_points(ls, document.text, params.range.end)
        ls.documents.note_cursor(params.text_document.uri, *caret)
    service = await feature.service()
    base = {
        "uri": params.text_document.uri,
        "range": ls.protocol.converter.unstructure(params.range),
        "version": document.version,
    }
    entries: list[tuple[str, dict[str, Any]]] = []
    last = service.last_instruction
    if last is not None and not empty:
        entries.append(
            (
                "QodeAssist: Repeat last instruction",
                {**base, "instruction": last.instruction, "instructionId": last.instruction_id},
            )
        )
    if empty:
        # No selection: the model writes new code at the cursor (nothing is replaced). Not
        # for the editor's automatic asks as the caret moves (VS Code's lightbulb): the action
        # would put a lightbulb on every line; asked for (a menu, a refactor key) it is offered.
        automatic = params.context.trigger_kind == types.CodeActionTriggerKind.Automatic
        if not automatic or only:
            entries.append((INSERT_TITLE, dict(base)))
    else:
        entries += [
            (f"QodeAssist: {i.name}", {**base, "instructionId": i.id})
            for i in service.list_instructions()
        ]
        entries.append((DEFAULT_TITLE, dict(base)))
    lazy, tagged = _code_action_support(ls)
    tags = [types.CodeActionTag.LlmGenerated] if tagged else None
    actions = []
    for title, data in entries:
        data = {**data, "title": title}
        actions.append(
            types.CodeAction(
                title=title,
                kind=types.CodeActionKind.RefactorRewrite,
                data=data if lazy else None,
                command=None
                if lazy
                else types.Command(title=title, command=methods.CMD_REFACTOR, arguments=[data]),
                tags=tags,
            )
        )
    return actions


async def resolve_code_action(ls: QodeAssistServer, action: types.CodeAction) -> types.CodeAction:
    """Run the refactor of a lazily offered code action and fill in its edit."""
    feature = ls.feature_of(RefactorFeature)
    data = action.data if isinstance(action.data, dict) else None
    if data is None:
        return action
    result, reason = await _run(ls, feature, types.CODE_ACTION_RESOLVE, data, None)
    if result is not None and result.outcome == "refused":
        # The client waits for this answer: ask in the background, return no edit now.
        feature.ask_in_background(_offer_refused(ls, str(data["uri"]), result, reason))
        action.disabled = types.CodeActionDisabled(reason=result.message)
        return action
    if result is None or result.outcome != "ok":
        _explain(ls, result, reason)
        return action
    action.edit = _edit(ls, str(data["uri"]), result)
    return action


async def refactor_command(ls: QodeAssistServer, args: dict[str, Any]) -> dict[str, Any]:
    """Run the refactor the ``qodeassist.refactor`` command names and apply it."""
    feature = ls.feature_of(RefactorFeature)
    result, title = await _run(ls, feature, f"{methods.CMD_REFACTOR} command", args, None)
    if result is not None and result.outcome == "refused":
        return await _offer_refused(ls, str(args["uri"]), result, title)
    if result is None or result.outcome != "ok":
        _explain(ls, result, title)
        return {"applied": False, "message": result.message if result else title}
    answer = await ls.workspace_apply_edit_async(
        types.ApplyWorkspaceEditParams(edit=_edit(ls, str(args["uri"]), result), label=title)
    )
    if not answer.applied:
        _explain(ls, None, answer.failure_reason or "the editor did not apply the edit")
    return {"applied": answer.applied, "message": answer.failure_reason or ""}


async def list_instructions(ls: QodeAssistServer, _params: object) -> list[dict[str, Any]]:
    """List the refactor instructions (bundled, user, project)."""
    feature = ls.feature_of(RefactorFeature)
    service = await feature.service()
    return [
        {"id": i.id, "name": i.name, "body": i.body, "default": i.default, "agent": i.agent}
        for i in service.list_instructions()
    ]


def setup(server: QodeAssistServer) -> None:
    """Register the refactor handlers and feature on ``server``."""
    server.add_feature(RefactorFeature(server))
    server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.RefactorRewrite], resolve_provider=True
        ),
    )(code_action)
    server.feature(types.CODE_ACTION_RESOLVE)(resolve_code_action)
    server.command(methods.CMD_REFACTOR)(refactor_command)
    server.feature(methods.REFACTOR_INSTRUCTIONS)(list_instructions)
