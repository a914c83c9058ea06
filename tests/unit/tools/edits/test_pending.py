"""The edit manager: propose, apply, reject, undo, auto-apply, open buffers, checkpoints."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from qodeassist_lsp.config.confinement import Confinement
from qodeassist_lsp.context.parse_check import file_parse_check
from qodeassist_lsp.core.events import FileEditEvent, SessionEvent
from qodeassist_lsp.core.tools import ToolContext
from qodeassist_lsp.tools.edits.blocks import EditBlock, EditRefused
from qodeassist_lsp.tools.edits.checkpoints import CheckpointStore
from qodeassist_lsp.tools.edits.pending import EditManager, EditScope
from qodeassist_lsp.tools.edits.ports import NoEditor, OpenText, no_parse_check

OLD = "def greet(name):\r\n    return 'héllo ' + name\r\n"  # CRLF and non-ASCII: bytes matter
BLOCK = EditBlock("    return 'héllo ' + name\n", "    return f'hello {name}!'\n")


class Buffers:
    """Open documents held in memory; ``replace_open`` plays the editor's applyEdit."""

    def __init__(self) -> None:
        self.open: dict[Path, str] = {}
        self.applied: list[tuple[str, str]] = []

    async def find_open(self, path: Path) -> OpenText | None:
        text = self.open.get(path)
        return None if text is None else OpenText(path.as_uri(), text)

    async def replace_open(self, uri: str, old: str, new: str) -> None:
        path = next(p for p in self.open if p.as_uri() == uri)
        assert self.open[path] == old
        self.open[path] = new
        self.applied.append((uri, new))


class Harness:
    def __init__(
        self, root: Path, *, auto: bool = False, buffers: Any = None, parse_check: Any = None
    ) -> None:
        self.project = root / "project"
        self.project.mkdir(exist_ok=True)
        self.store_root = root / "data" / "checkpoints"
        self.sunk: list[tuple[str, SessionEvent]] = []
        self.emitted: list[SessionEvent] = []
        self.ignored: set[str] = set()
        self.auto = auto
        self.buffers = buffers or NoEditor()
        self.parse_check = parse_check or no_parse_check
        self.manager = self.new_manager()

    def new_manager(self) -> EditManager:
        scope = EditScope(
            confinement=lambda: Confinement.of([self.project]),
            base=lambda: self.project,
            ignored=lambda path: ".qodeassistignore" if path.name in self.ignored else None,
            auto_apply=lambda: self.auto,
            parse_check=self.parse_check,
        )
        return EditManager(
            CheckpointStore(self.store_root),
            self.buffers,
            scope,
            lambda chat, event: self.sunk.append((chat, event)),
        )

    def context(self, request_id: str = "req-1") -> ToolContext:
        return ToolContext("chat-1", request_id, "call-1", self.emitted.append)

    def file(self, name: str, data: bytes | None = None) -> Path:
        path = self.project / name
        if data is not None:
            path.write_bytes(data)
        return path.resolve()

    def last_edit(self) -> FileEditEvent:
        event = self.emitted[-1]
        assert isinstance(event, FileEditEvent)
        return event


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    return Harness(tmp_path)


async def test_a_proposal_is_pending_with_a_diff_and_leaves_the_file_alone(h: Harness):
    target = h.file("greet.py", OLD.encode())
    result = await h.manager.propose("edit", "greet.py", h.context(), blocks=[BLOCK])
    assert not result.is_error
    assert result.content.startswith("Proposed: change greet.py (edit ")
    assert "waiting for the user" in result.content
    event = h.last_edit()
    assert event.status == "pending" and event.uri == target.as_uri()
    assert "-    return 'héllo ' + name\r\n+    return f'hello {name}!'\r\n" in event.diff
    assert target.read_bytes() == OLD.encode()


async def test_apply_writes_the_new_bytes_and_checkpoints_the_old_ones(h: Harness):
    target = h.file("greet.py", OLD.encode())
    await h.manager.propose("edit", "greet.py", h.context(), blocks=[BLOCK])
    status, message = await h.manager.act("chat-1", h.last_edit().edit_id, "apply")
    assert (status, message) == ("applied", "applied to greet.py")
    assert target.read_bytes() == b"def greet(name):\r\n    return f'hello {name}!'\r\n"
    chat, event = h.sunk[-1]
    assert chat == "chat-1" and isinstance(event, FileEditEvent) and event.status == "applied"
    assert event.request_id == "req-1"
    [checkpoint] = h.manager.checkpoints.entries("chat-1")
    assert h.manager.checkpoints.content(checkpoint, checkpoint.files[0]) == OLD.encode()


async def test_reject_leaves_the_file_and_cannot_be_applied_after(h: Harness):
    target = h.file("greet.py", OLD.encode())
    await h.manager.propose("edit", "greet.py", h.context(), blocks=[BLOCK])
    edit_id = h.last_edit().edit_id
    assert (await h.manager.act("chat-1", edit_id, "reject"))[0] == "rejected"
    status, message = await h.manager.act("chat-1", edit_id, "apply")
    assert status == "rejected" and message == "cannot apply an edit that is rejected"
    assert target.read_bytes() == OLD.encode()
    assert h.manager.checkpoints.entries() == []


async def test_undo_gives_the_exact_old_bytes_back(h: Harness):
    target = h.file("greet.py", OLD.encode())
    await h.manager.propose("edit", "greet.py", h.context(), blocks=[BLOCK])
    edit_id = h.last_edit().edit_id
    await h.manager.act("chat-1", edit_id, "apply")
    status, _ = await h.manager.act("chat-1", edit_id, "undo")
    assert status == "undone" and target.read_bytes() == OLD.encode()
    assert [e.status for _, e in h.sunk if isinstance(e, FileEditEvent)] == ["applied", "undone"]


async def test_undo_refuses_when_the_file_changed_after_applying(h: Harness):
    target = h.file("greet.py", OLD.encode())
    await h.manager.propose("edit", "greet.py", h.context(), blocks=[BLOCK])
    edit_id = h.last_edit().edit_id
    await h.manager.act("chat-1", edit_id, "apply")
    target.write_bytes(b"the user rewrote it\n")
    status, message = await h.manager.act("chat-1", edit_id, "undo")
    assert status == "applied" and "changed after the edit was applied" in message
    assert target.read_bytes() == b"the user rewrote it\n"


async def test_auto_apply_applies_at_once_and_says_so(tmp_path: Path):
    h = Harness(tmp_path, auto=True)
    target = h.file("greet.py", OLD.encode())
    result = await h.manager.propose("edit", "greet.py", h.context(), blocks=[BLOCK])
    assert result.content.startswith("Applied: change greet.py")
    assert h.last_edit().status == "applied"
    assert b"hello {name}!" in target.read_bytes()


async def test_the_open_buffer_wins_over_the_disk_and_is_changed_through_the_editor(
    tmp_path: Path,
):
    buffers = Buffers()
    h = Harness(tmp_path, buffers=buffers)
    target = h.file("greet.py", b"stale disk content\n")
    buffers.open[target] = OLD  # unsaved in the editor
    await h.manager.propose("edit", "greet.py", h.context(), blocks=[BLOCK])
    await h.manager.act("chat-1", h.last_edit().edit_id, "apply")
    assert buffers.applied == [
        (target.as_uri(), OLD.replace("'héllo ' + name", "f'hello {name}!'"))
    ]
    assert target.read_bytes() == b"stale disk content\n"  # the editor saves, not us
    [checkpoint] = h.manager.checkpoints.entries()
    assert h.manager.checkpoints.content(checkpoint, checkpoint.files[0]) == OLD.encode()


async def test_a_file_changed_before_apply_is_matched_again_or_fails(h: Harness):
    target = h.file("greet.py", OLD.encode())
    await h.manager.propose("edit", "greet.py", h.context(), blocks=[BLOCK])
    edit_id = h.last_edit().edit_id
    target.write_bytes(b"# a comment\r\n" + OLD.encode())
    assert (await h.manager.act("chat-1", edit_id, "apply"))[0] == "applied"
    assert target.read_bytes().startswith(b"# a comment\r\ndef greet(name):\r\n    return f'")

    await h.manager.propose(
        "edit", "greet.py", h.context(), blocks=[EditBlock("# a comment\n", "")]
    )
    second = h.last_edit().edit_id
    target.write_bytes(b"completely different\n")
    status, message = await h.manager.act("chat-1", second, "apply")
    assert status == "failed" and "matches nothing" in message
    assert target.read_bytes() == b"completely different\n"


async def test_create_and_delete_round_trip_through_undo(h: Harness):
    created = h.file("pkg/new.py")
    await h.manager.propose("create", "pkg/new.py", h.context(), content="x = 1\n")
    new_id = h.last_edit().edit_id
    await h.manager.act("chat-1", new_id, "apply")
    assert created.read_bytes() == b"x = 1\n"
    await h.manager.act("chat-1", new_id, "undo")
    assert not created.exists()

    doomed = h.file("old.py", b"bye\n")
    await h.manager.propose("delete", "old.py", h.context("req-2"))
    gone_id = h.last_edit().edit_id
    await h.manager.act("chat-1", gone_id, "apply")
    assert not doomed.exists()
    await h.manager.act("chat-1", gone_id, "undo")
    assert doomed.read_bytes() == b"bye\n"


@pytest.mark.parametrize(
    ("kind", "path", "setup", "fragment"),
    [
        ("edit", "../outside.py", None, "is outside the workspace folders"),
        ("edit", "secret.env", "ignored", "excluded by .qodeassistignore"),
        ("edit", "missing.py", None, "does not exist; create it with create_file"),
        ("create", "greet.py", "exists", "already exists; change it with edit_file"),
        ("delete", "missing.py", None, "does not exist"),
        ("edit", "blob.bin", "binary", "binary file"),
        ("edit", "  ", None, '"path" is empty'),
        ("create", ".git/hooks/pre-commit", None, "inside .git"),
        ("edit", ".git/config", "git-config", "inside .git"),
    ],
)
async def test_refusals_are_errors_that_say_why(h: Harness, kind, path, setup, fragment):
    if setup == "ignored":
        h.file("secret.env", b"KEY=1\n")
        h.ignored.add("secret.env")
    elif setup == "exists":
        h.file("greet.py", OLD.encode())
    elif setup == "binary":
        h.file("blob.bin", b"\x00\x01")
    elif setup == "git-config":
        (h.project / ".git").mkdir()
        h.file(".git/config", b"[core]\n")
    with pytest.raises(EditRefused, match=fragment):
        await h.manager.propose(kind, path, h.context(), blocks=[BLOCK])
    assert h.emitted == []


async def test_an_edit_of_another_chat_is_unknown(h: Harness):
    h.file("greet.py", OLD.encode())
    await h.manager.propose("edit", "greet.py", h.context(), blocks=[BLOCK])
    with pytest.raises(EditRefused, match="no edit"):
        await h.manager.act("chat-2", h.last_edit().edit_id, "apply")


async def test_a_checkpoint_restores_every_file_of_the_turn_after_a_restart(h: Harness):
    first = h.file("a.py", b"A\r\n")
    await h.manager.propose("edit", "a.py", h.context(), blocks=[EditBlock("A", "A2")])
    await h.manager.act("chat-1", h.last_edit().edit_id, "apply")
    await h.manager.propose("edit", "a.py", h.context(), blocks=[EditBlock("A2", "A3")])
    await h.manager.act("chat-1", h.last_edit().edit_id, "apply")
    created = h.file("b.py")
    await h.manager.propose("create", "b.py", h.context(), content="B\n")
    await h.manager.act("chat-1", h.last_edit().edit_id, "apply")
    assert first.read_bytes() == b"A3\r\n" and created.exists()

    restarted = h.new_manager()  # a new server: nothing in memory but the folder
    [checkpoint] = await restarted.list_checkpoints("chat-1")
    restored = await restarted.restore(checkpoint.checkpoint_id)
    assert restored == [first.as_uri(), created.as_uri()]
    assert first.read_bytes() == b"A\r\n"  # the bytes before the turn's first change
    assert not created.exists()


async def test_a_planted_checkpoint_cannot_write_outside_the_workspace(h: Harness, tmp_path: Path):
    outside = tmp_path / "outside.txt"
    h.manager.checkpoints.save("chat-1", "req-9", outside, outside.as_uri(), b"pwned")
    [checkpoint] = h.manager.checkpoints.entries("chat-1")
    with pytest.raises(EditRefused, match="is outside the workspace folders"):
        await h.manager.restore(checkpoint.checkpoint_id)
    assert not outside.exists()


async def test_restoring_an_open_document_goes_through_the_editor(tmp_path: Path):
    buffers = Buffers()
    h = Harness(tmp_path, buffers=buffers)
    target = h.file("greet.py", OLD.encode())
    await h.manager.propose("edit", "greet.py", h.context(), blocks=[BLOCK])
    edit_id = h.last_edit().edit_id
    await h.manager.act("chat-1", edit_id, "apply")  # not open: written on disk
    buffers.open[target] = target.read_bytes().decode()  # the user opens it now
    [checkpoint] = await h.manager.list_checkpoints("chat-1")
    assert await h.manager.restore(checkpoint.checkpoint_id) == [target.as_uri()]
    assert buffers.applied == [(target.as_uri(), OLD)]
    chat, event = h.sunk[-1]
    assert chat == "chat-1" and isinstance(event, FileEditEvent)
    assert (event.edit_id, event.status) == (edit_id, "undone")


async def test_an_edit_that_breaks_the_file_is_marked_broken_and_the_model_told(tmp_path: Path):
    # Issue 25: a block that dedents a method out of its class parses as a fragment, not as a file.
    h = Harness(tmp_path, parse_check=file_parse_check())
    h.file("box.py", b"class Box:\n    def area(self):\n        return 1\n")
    dedent = EditBlock("    def area(self):\n", "def area(self):\n")
    result = await h.manager.propose("edit", "box.py", h.context(), blocks=[dedent])
    event = h.last_edit()
    assert event.parse_check == "broken" and "IndentationError" in event.parse_reason
    assert event.to_json()["parseCheck"] == "broken"
    assert "IndentationError" in event.to_json()["parseReason"]
    assert "warning: the file compiled before and not after" in result.content
    await h.manager.act("chat-1", event.edit_id, "apply")  # the user may still apply it
    _chat, applied = h.sunk[-1]
    assert isinstance(applied, FileEditEvent) and applied.parse_check == "broken"


async def test_a_good_edit_is_ok_and_an_unknown_language_unchecked(tmp_path: Path):
    h = Harness(tmp_path, parse_check=file_parse_check())
    h.file("greet.py", OLD.encode())
    await h.manager.propose("edit", "greet.py", h.context(), blocks=[BLOCK])
    assert h.last_edit().parse_check == "ok" and "parseReason" not in h.last_edit().to_json()
    await h.manager.propose("create", "notes.txt", h.context(), content="(((")
    assert h.last_edit().parse_check == "unchecked"
    await h.manager.propose("create", "new.py", h.context(), content="def f(:\n")
    assert h.last_edit().parse_check == "broken"
