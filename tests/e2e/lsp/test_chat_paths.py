"""Chat over stdio reads nothing outside the workspace folders and the user's allowed roots.

Attachments, linked files and ``@``-mentions that lead outside (``..``, absolute paths, a symlink
pointing out, a file under a symlinked folder) are refused with a message naming the path and
the setting; their content reaches neither the provider nor the chat's content folder. A history
file placed in the history folder cannot make the next send read outside either.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from qodeassist_lsp.core.content import Message, StoredAttachmentBlock, TextBlock
from qodeassist_lsp.features.chat.history_format import ChatFile, encode
from tests.e2e.lsp.conftest import serve_from
from tests.e2e.lsp.test_chat import PIPELINES, request, start
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply

SECRET = "TOP-SECRET-CONTENT"
REFUSED = r"is outside the workspace folders.*allowed_roots"


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    serve_from(lsp_home, replay, monkeypatch)
    (lsp_home / "config/pipelines.toml").write_text(PIPELINES)
    outside = lsp_home / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "secret.txt").write_text(SECRET)
    (outside / "dir/deep.txt").write_text(SECRET)
    project = lsp_home / "project"
    os.symlink(outside / "secret.txt", project / "link.txt")
    os.symlink(outside / "dir", project / "linked_dir")
    (project / "inside.txt").write_text("inside")
    return outside


def history_dir(home: Path) -> Path:
    return home / "data/chat_history"


def assert_nothing_leaked(home: Path, replay: ReplayServer) -> None:
    assert all(SECRET.encode() not in r.body for r in replay.requests)
    folder = history_dir(home)
    if folder.exists():
        for path in folder.rglob("*"):
            assert not path.is_file() or SECRET.encode() not in path.read_bytes(), path


async def test_files_leading_outside_are_refused(client, lsp_home, replay, setup):
    project, outside = lsp_home / "project", setup
    await start(client)
    leading_out = [
        (outside / "secret.txt").as_uri(),
        "../outside/secret.txt",
        str(project / "../outside/secret.txt"),
        (project / "link.txt").as_uri(),
        (project / "linked_dir/deep.txt").as_uri(),
    ]
    for target in leading_out:
        for params in (
            {"message": "see", "attachments": [target]},
            {"message": "see", "linkedFiles": [target]},
        ):
            with pytest.raises(JsonRpcInvalidParams, match=REFUSED):
                await request(client, "chat/send", params)
    for mention in ("@../outside/secret.txt", "@link.txt:1-1", "@linked_dir/deep.txt"):
        with pytest.raises(JsonRpcInvalidParams, match=REFUSED):
            await request(client, "chat/send", {"message": f"look at {mention}"})
    assert replay.requests == []
    assert await request(client, "chat/list", {}) == []
    assert not history_dir(lsp_home).exists() or not any(history_dir(lsp_home).iterdir())


async def test_a_fifo_is_refused_as_a_fifo(client, lsp_home, replay):
    os.mkfifo(lsp_home / "project/pipe.txt")
    await start(client)
    for params in (
        {"message": "see", "attachments": [(lsp_home / "project/pipe.txt").as_uri()]},
        {"message": "see @pipe.txt"},
    ):
        with pytest.raises(JsonRpcInvalidParams, match=r"pipe\.txt is a FIFO, not a regular file"):
            await request(client, "chat/send", params)
    assert replay.requests == []


def plant_chat(home: Path, chat_id: str, data: ChatFile) -> None:
    folder = history_dir(home)
    (folder / f"{chat_id}_content").mkdir(parents=True, exist_ok=True)
    (folder / f"{chat_id}.json").write_text(encode(data))


async def test_a_planted_history_file_cannot_read_outside(client, lsp_home, replay, setup):
    outside = setup
    question = Message("user", (TextBlock("earlier"),))
    plant_chat(
        lsp_home,
        "stored",
        ChatFile(
            messages=[
                Message(
                    "user",
                    (TextBlock("see"), StoredAttachmentBlock("s.txt", str(outside / "secret.txt"))),
                ),
                Message("assistant", (TextBlock("ok"),)),
            ],
            agent="Embedded Chat",
        ),
    )
    plant_chat(
        lsp_home,
        "dotdot",
        ChatFile(
            messages=[
                Message("user", (StoredAttachmentBlock("s.txt", "../../../outside/secret.txt"),)),
                Message("assistant", (TextBlock("ok"),)),
            ],
            agent="Embedded Chat",
        ),
    )
    plant_chat(
        lsp_home,
        "linked",
        ChatFile(
            messages=[question, Message("assistant", (TextBlock("ok"),))],
            agent="Embedded Chat",
            linked_files=[str(outside / "secret.txt")],
        ),
    )
    events = await start(client)
    for chat_id in ("stored", "dotdot"):
        with pytest.raises(JsonRpcInvalidParams, match="is not a name inside its content folder"):
            await request(client, "chat/send", {"chatId": chat_id, "message": "again"})
    with pytest.raises(JsonRpcInvalidParams, match=f"links a file that may not be read.*{REFUSED}"):
        await request(client, "chat/send", {"chatId": "linked", "message": "again"})
    assert replay.requests == []

    # Replacing the chat's linked files makes it usable again, without the outside file.
    replay.script("/v1/chat/completions", chat_reply("fine"))
    sent = await request(
        client, "chat/send", {"chatId": "linked", "message": "again", "linkedFiles": []}
    )
    await events.terminal(sent["requestId"])
    assert "earlier" in json.dumps(replay.last.json)
    assert_nothing_leaked(lsp_home, replay)


async def test_a_project_cannot_allow_another_root(client, lsp_home, replay, setup):
    outside = setup
    project_config = lsp_home / "project/.qodeassist"
    project_config.mkdir()
    (project_config / "settings.toml").write_text(f"[general]\nallowed_roots = ['{outside}']\n")
    await start(client)
    attach = {"message": "see", "attachments": [(outside / "secret.txt").as_uri()]}
    with pytest.raises(JsonRpcInvalidParams, match=REFUSED):
        await request(client, "chat/send", attach)
    assert replay.requests == []


async def test_user_settings_allow_another_root(client, lsp_home, replay, setup):
    outside = setup
    (lsp_home / "config/settings.toml").write_text(f"[general]\nallowed_roots = ['{outside}']\n")
    events = await start(client)
    replay.script("/v1/chat/completions", chat_reply("ok"))
    attach = {"message": "see", "attachments": [(outside / "secret.txt").as_uri()]}
    sent = await request(client, "chat/send", attach)
    await events.terminal(sent["requestId"])
    assert SECRET in json.dumps(replay.last.json)


async def test_every_workspace_folder_counts(client, lsp_home, replay):
    second = lsp_home / "second"
    second.mkdir()
    (second / "notes.md").write_text("from the second folder")
    client.init_params.workspace_folders.append(types.WorkspaceFolder(second.as_uri(), "second"))
    events = await start(client)
    replay.script("/v1/chat/completions", chat_reply("ok"))
    sent = await request(
        client, "chat/send", {"message": "see", "attachments": [(second / "notes.md").as_uri()]}
    )
    await events.terminal(sent["requestId"])
    assert "from the second folder" in json.dumps(replay.last.json)
