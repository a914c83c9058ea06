"""Proposed file edits and their life: pending → applied / rejected, applied → undone.

`EditManager` turns a tool call into a `FileEdit` (the new text is computed at once, so the
user sees a diff), shows it as a ``fileEdit`` event in the request's stream, and applies,
rejects or undoes it when ``qodeassist/chat/editFile`` says so (or applies it at once with
``[tools] auto_apply_file_edits``). An edit outlives its request: later status changes go to
the chat's event sink with the proposing request's id. Applying re-reads the file: when it
changed since the proposal, the edit blocks are matched again (and the edit fails if they no
longer match). An open document is changed through the editor (`ports.EditorBuffers`), a file
that is not open is written on disk atomically. The exact bytes before the first change a turn
makes to a file go to the `CheckpointStore` first; undo writes back the bytes the edit replaced,
and only while the file still holds what the edit wrote. Each proposal is parse-checked on the
whole file (``EditScope.parse_check``): an edit that would leave the file unparsable is shown
with ``parseCheck: "broken"`` and its reason, and the model is told so in the tool result.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from qodeassist_lsp.config.atomic import write_atomic
from qodeassist_lsp.config.confinement import Confinement, PathRefused
from qodeassist_lsp.core.events import FileEditEvent, ParseStatus, SessionEvent
from qodeassist_lsp.core.tools import ToolContext, ToolOutput
from qodeassist_lsp.tools.edits.blocks import EditBlock, EditRefused
from qodeassist_lsp.tools.edits.checkpoints import Checkpoint, CheckpointStore
from qodeassist_lsp.tools.edits.diff import unified_diff
from qodeassist_lsp.tools.edits.files import decode, read_bytes
from qodeassist_lsp.tools.edits.matching import Applied, apply_blocks
from qodeassist_lsp.tools.edits.ports import EditorBuffers, ParseCheck, no_parse_check

log = logging.getLogger("qodeassist.tools")

EditKind = Literal["create", "edit", "delete"]
EditAction = Literal["apply", "undo", "reject"]
Status = Literal["pending", "applied", "rejected", "undone", "failed"]

MAX_KEPT_EDITS = 1000
"""Edits remembered for ``editFile``; the oldest settled ones are forgotten first."""
MAX_RESULT_DIFF = 4000
"""Characters of the diff repeated in the tool result for the model."""

EventSink = Callable[[str, SessionEvent], None]
"""Sends an event to a chat (chat id, event), also after the proposing request ended."""


@dataclass(frozen=True)
class EditScope:
    """Where edits may go, read at every call (folders and settings change)."""

    confinement: Callable[[], Confinement]
    base: Callable[[], Path | None]
    """The folder relative paths start from (the first workspace folder)."""
    ignored: Callable[[Path], str | None] = lambda _path: None
    """The ignore file (``.qodeassistignore``, ``.gitignore``) that excludes a path, or None."""
    auto_apply: Callable[[], bool] = lambda: False
    parse_check: ParseCheck = no_parse_check
    """Judges the whole file after an edit against before (see ``ports.ParseCheck``)."""


@dataclass
class _Current:
    """A file as it is now: the editor's text when it is open, else the disk's bytes."""

    uri: str
    data: bytes | None
    text: str | None
    open: bool


@dataclass
class FileEdit:
    """One proposed change of one file."""

    edit_id: str
    chat_id: str
    request_id: str
    kind: EditKind
    path: Path
    uri: str
    label: str
    old_text: str | None
    new_text: str | None
    diff: str
    blocks: Sequence[EditBlock] = ()
    status: Status = "pending"
    message: str = ""
    before: bytes | None = None
    """What the file held right before the edit was applied (None: absent)."""
    after: bytes | None = None
    """What applying wrote (None: the file was deleted)."""
    notes: list[str] = field(default_factory=list)
    call_id: str = ""
    parse_check: ParseStatus = "unchecked"
    parse_reason: str = ""

    def event(self) -> FileEditEvent:
        """Return the ``fileEdit`` event of the edit's current status."""
        return FileEditEvent(
            self.request_id,
            self.edit_id,
            self.uri,
            self.diff,
            self.status,
            self.call_id,
            self.parse_check,
            self.parse_reason,
        )


class EditManager:
    """The file edits of every chat of one server, and their checkpoints."""

    def __init__(
        self,
        checkpoints: CheckpointStore,
        buffers: EditorBuffers,
        scope: EditScope,
        sink: EventSink,
    ) -> None:
        """Keep checkpoints in ``checkpoints``; reach open documents through ``buffers``."""
        self.checkpoints = checkpoints
        self._buffers = buffers
        self._scope = scope
        self._sink = sink
        self._edits: OrderedDict[str, FileEdit] = OrderedDict()
        self._lock = asyncio.Lock()

    # -- proposing ---------------------------------------------------------------------------
    async def propose(
        self,
        kind: EditKind,
        raw_path: str,
        context: ToolContext,
        *,
        blocks: Sequence[EditBlock] = (),
        content: str = "",
    ) -> ToolOutput:
        """Turn a tool call into a pending (or, with auto-apply, applied) edit."""
        async with self._lock:
            path, label = self._resolve(raw_path)
            current = await self._read(path)
            applied, new_text = await self._new_text(kind, label, current, blocks, content)
            edit = FileEdit(
                edit_id=secrets.token_hex(6),
                chat_id=context.scope or context.request_id,
                request_id=context.request_id,
                kind=kind,
                path=path,
                uri=current.uri,
                label=label,
                old_text=current.text,
                new_text=new_text,
                diff=unified_diff(current.text, new_text, label),
                blocks=tuple(blocks),
                notes=applied.notes() if applied is not None else [],
                call_id=context.call_id,
            )
            if new_text is not None:
                edit.parse_check, edit.parse_reason = await asyncio.to_thread(
                    self._scope.parse_check, path, current.text, new_text
                )
            self._keep(edit)
            if self._scope.auto_apply():
                await self._apply(edit)
            context.emit(edit.event())
            return _tool_result(edit)

    async def preview(
        self, kind: EditKind, raw_path: str, *, blocks: Sequence[EditBlock] = (), content: str = ""
    ) -> tuple[Path, str | None, str | None]:
        """Return the path, current text and new text an edit would give (nothing is kept).

        The ACP host shows this diff in its permission question, before the tool runs.
        """
        path, label = self._resolve(raw_path)
        current = await self._read(path)
        _applied, new_text = await self._new_text(kind, label, current, blocks, content)
        return path, current.text, new_text

    def get(self, edit_id: str) -> FileEdit | None:
        """Return the edit ``edit_id`` while it is kept."""
        return self._edits.get(edit_id)

    async def _new_text(
        self,
        kind: EditKind,
        label: str,
        current: _Current,
        blocks: Sequence[EditBlock],
        content: str,
    ) -> tuple[Applied | None, str | None]:
        if kind == "create":
            if current.data is not None:
                raise EditRefused(f"{label} already exists; change it with edit_file")
            return None, content
        if current.text is None:
            raise EditRefused(f"{label} does not exist; create it with create_file")
        if kind == "edit":
            applied = await asyncio.to_thread(apply_blocks, current.text, blocks, label)
            return applied, applied.text
        return None, None

    def _resolve(self, raw_path: str) -> tuple[Path, str]:
        """Return the real path a tool names and how to show it; refuse what may not be written."""
        if not raw_path.strip():
            raise EditRefused('"path" is empty; give the file\'s path relative to the project')
        base = self._scope.base()
        confinement = self._scope.confinement()
        try:
            path = confinement.for_write(raw_path, base)
        except PathRefused as exc:
            raise EditRefused(str(exc)) from None
        label = _label(path, confinement.roots)
        if ".git" in Path(label).parts:
            # Git runs what its own files name (hooks, config): no tool may write those.
            raise EditRefused(f"{label} is inside .git; git's own files are not changed by tools")
        listed_by = self._scope.ignored(path)
        if listed_by is not None:
            raise EditRefused(
                f"{label} is excluded by {listed_by}; tools may not create, change or delete it"
            )
        return path, label

    async def _read(self, path: Path) -> _Current:
        opened = await self._buffers.find_open(path)
        if opened is not None:
            return _Current(opened.uri, opened.text.encode("utf-8"), opened.text, True)
        data = await asyncio.to_thread(read_bytes, path)
        text = None if data is None else decode(data, path.name)
        return _Current(path.as_uri(), data, text, False)

    def _keep(self, edit: FileEdit) -> None:
        self._edits[edit.edit_id] = edit
        if len(self._edits) > MAX_KEPT_EDITS:
            for old in [e for e in self._edits.values() if e.status != "pending"]:
                del self._edits[old.edit_id]
                if len(self._edits) <= MAX_KEPT_EDITS:
                    break

    # -- the user's answer -------------------------------------------------------------------
    async def act(self, chat_id: str, edit_id: str, action: EditAction) -> tuple[Status, str]:
        """Apply, undo or reject edit ``edit_id`` of ``chat_id``; return its status and why."""
        async with self._lock:
            edit = self._edits.get(edit_id)
            if edit is None or edit.chat_id != chat_id:
                raise EditRefused(
                    f"no edit {edit_id!r} in chat {chat_id!r} (edits are kept while the server "
                    "runs; restore a checkpoint with qodeassist/checkpoints/restore)"
                )
            before = edit.status
            if action == "apply" and before in ("pending", "undone", "failed"):
                await self._apply(edit)
            elif action == "reject" and before in ("pending", "failed"):
                edit.status, edit.message = "rejected", "rejected; the file was not changed"
            elif action == "undo" and before == "applied":
                await self._undo(edit)
            else:
                return edit.status, f"cannot {action} an edit that is {edit.status}"
            self._sink(edit.chat_id, edit.event())
            return edit.status, edit.message

    async def _apply(self, edit: FileEdit) -> None:
        """Write the edit; on failure the edit is ``failed`` with the reason."""
        try:
            current = await self._read(edit.path)
            new_text = await asyncio.to_thread(self._target, edit, current)
            after = None if new_text is None else new_text.encode("utf-8")
            await asyncio.to_thread(
                self.checkpoints.save,
                edit.chat_id,
                edit.request_id,
                edit.path,
                edit.uri,
                current.data,
            )
            await self._write(edit.path, current, after)
        except (EditRefused, OSError) as exc:
            edit.status, edit.message = "failed", f"not applied: {exc}"
            log.info("edit %s of %s failed: %s", edit.edit_id, edit.label, exc)
            return
        edit.before, edit.after = current.data, after
        edit.status = "applied"
        notes = f" ({'; '.join(edit.notes)})" if edit.notes else ""
        edit.message = f"applied to {edit.label}{notes}"

    def _target(self, edit: FileEdit, current: _Current) -> str | None:
        """Return the text the file gets now (matching the blocks again if it changed)."""
        if edit.kind == "create":
            if current.data is not None:
                raise EditRefused(f"{edit.label} was created meanwhile")
            return edit.new_text
        if current.text is None:
            raise EditRefused(f"{edit.label} no longer exists")
        if edit.kind == "delete" or current.text == edit.old_text:
            return edit.new_text
        applied = apply_blocks(current.text, edit.blocks, edit.label)
        edit.old_text, edit.new_text, edit.notes = current.text, applied.text, applied.notes()
        edit.diff = unified_diff(edit.old_text, edit.new_text, edit.label)
        return edit.new_text

    async def _undo(self, edit: FileEdit) -> None:
        current = await self._read(edit.path)
        if current.data != edit.after:
            edit.message = (
                f"not undone: {edit.label} changed after the edit was applied; restore the "
                "turn's checkpoint (qodeassist/checkpoints/restore) to get its old bytes back"
            )
            return
        try:
            await self._write(edit.path, current, edit.before)
        except (EditRefused, OSError) as exc:
            edit.message = f"not undone: {exc}"
            return
        edit.status, edit.message = "undone", f"undone; {edit.label} has its old content again"

    async def _write(self, path: Path, current: _Current, data: bytes | None) -> None:
        """Make ``path`` hold ``data``: through the editor when it is open, else on disk."""
        if current.open and current.text is not None and data is not None:
            await self._buffers.replace_open(current.uri, current.text, data.decode("utf-8"))
        else:
            await asyncio.to_thread(write_atomic, path, data)

    # -- checkpoints -------------------------------------------------------------------------
    async def list_checkpoints(self, chat_id: str | None) -> list[Checkpoint]:
        """Return the checkpoints of ``chat_id`` (every chat's without it), newest first."""
        return await asyncio.to_thread(self.checkpoints.entries, chat_id)

    async def restore(self, checkpoint_id: str) -> list[str]:
        """Give every file of checkpoint ``checkpoint_id`` its saved bytes; return their URIs."""
        async with self._lock:
            checkpoint = await asyncio.to_thread(self.checkpoints.get, checkpoint_id)
            confinement = self._scope.confinement()
            restored = []
            for file in checkpoint.files:
                try:
                    path = confinement.for_write(file.path)
                except PathRefused as exc:
                    raise EditRefused(f"checkpoint {checkpoint_id}: {exc}") from None
                data = await asyncio.to_thread(self.checkpoints.content, checkpoint, file)
                opened = await self._buffers.find_open(path)
                if opened is not None and data is not None:
                    text = decode(data, path.name)
                    await self._buffers.replace_open(opened.uri, opened.text, text)
                else:
                    await asyncio.to_thread(write_atomic, path, data)
                restored.append(file.uri)
                self._settle_restored(checkpoint, path)
            return restored

    def _settle_restored(self, checkpoint: Checkpoint, path: Path) -> None:
        """Mark the turn's applied edits of ``path`` undone: the file is back before them."""
        for edit in self._edits.values():
            if (
                edit.request_id == checkpoint.request_id
                and edit.chat_id == checkpoint.chat_id
                and edit.path == path
                and edit.status == "applied"
            ):
                edit.status = "undone"
                edit.message = f"undone by checkpoint {checkpoint.checkpoint_id}"
                self._sink(edit.chat_id, edit.event())


def _label(path: Path, roots: Sequence[Path]) -> str:
    """Return ``path`` relative to the root that holds it (absolute when none does)."""
    for root in roots:
        if path.is_relative_to(root):
            return path.relative_to(root).as_posix()
    return str(path)


def _tool_result(edit: FileEdit) -> ToolOutput:
    """Tell the model what became of its edit (the diff included, cut to a size)."""
    warnings = [*edit.notes]
    if edit.parse_check == "broken":
        warnings.append(f"warning: {edit.parse_reason}")
    notes = f" ({'; '.join(warnings)})" if warnings else ""
    diff = edit.diff if len(edit.diff) <= MAX_RESULT_DIFF else edit.diff[:MAX_RESULT_DIFF] + "…\n"
    what = {"create": "create", "edit": "change", "delete": "delete"}[edit.kind]
    if edit.status == "applied":
        return ToolOutput(f"Applied: {what} {edit.label} (edit {edit.edit_id}){notes}.\n{diff}")
    if edit.status == "failed":
        return ToolOutput(f"Error: {edit.message}", is_error=True)
    return ToolOutput(
        f"Proposed: {what} {edit.label} (edit {edit.edit_id}){notes}. It is waiting for the "
        "user to apply or reject it; do not propose it again.\n" + diff
    )
