"""``qodeassist/settings/get|update`` and the ``qodeassist.doctor`` command over stdio."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from qodeassist_lsp.config.folder_lock import folder_lock
from tests.e2e.lsp.conftest import serve_from
from tests.e2e.lsp.test_lifecycle import wait_ready
from tests.support.replay_server import ReplayServer, Reply
from tests.support.streams import chat_reply, completion_reply

PIPELINES = """[pipelines]
code_completion = ["Embedded Completion"]
chat_assistant = ["Embedded Chat"]
chat_compression = ""
quick_refactor = ""
"""
USER_SETTINGS = """# mine: keep me
[completion]
debounce_ms = 300  # slow typist
"""


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_from(lsp_home, replay, monkeypatch)
    (lsp_home / "config/pipelines.toml").write_text(PIPELINES)
    (lsp_home / "config/settings.toml").write_text(USER_SETTINGS)


async def test_settings_update_writes_keeps_comments_and_reloads(
    client: LanguageClient, lsp_home: Path
) -> None:
    await client.initialize_session(client.init_params)
    await wait_ready(client)
    send = client.protocol.send_request_async
    before = await send("qodeassist/settings/get", {"scope": "user"})
    assert before.values.completion.debounce_ms == 300
    assert before.effective.completion.debounce_ms == 300

    answer = await send(
        "qodeassist/settings/update",
        {"scope": "user", "changes": {"completion.debounceMs": 120, "chat.auto_compress": False}},
    )

    settings_file = lsp_home / "config/settings.toml"
    assert Path(answer.written) == settings_file
    text = settings_file.read_text()
    assert text.startswith("# mine: keep me\n[completion]\ndebounce_ms = 120  # slow typist\n")
    after = await send("qodeassist/settings/get", {"scope": "user"})
    assert after.effective.completion.debounce_ms == 120  # reloaded before the answer
    assert after.effective.chat.auto_compress is False
    await client.shutdown_session()


async def test_a_write_waiting_on_the_folder_lock_leaves_the_server_answering(
    client: LanguageClient, lsp_home: Path
) -> None:
    await client.initialize_session(client.init_params)
    await wait_ready(client)
    send = client.protocol.send_request_async
    with folder_lock(lsp_home / "config"):  # another writer holds the user's folder
        update = asyncio.ensure_future(
            send(
                "qodeassist/settings/update",
                {"scope": "user", "changes": {"completion.debounceMs": 90}},
            )
        )
        await asyncio.sleep(0.3)
        status = await asyncio.wait_for(send("qodeassist/status", None), 2)
        assert status is not None and not update.done()
    answer = await asyncio.wait_for(update, 10)
    assert Path(answer.written) == lsp_home / "config/settings.toml"
    await client.shutdown_session()


async def test_settings_update_refuses_bad_values_and_writes_the_project_scope(
    client: LanguageClient, lsp_home: Path
) -> None:
    await client.initialize_session(client.init_params)
    await wait_ready(client)
    send = client.protocol.send_request_async
    settings_file = lsp_home / "config/settings.toml"

    with pytest.raises(JsonRpcException, match="debounce_ms = 'fast' is invalid"):
        await send(
            "qodeassist/settings/update",
            {"scope": "user", "changes": {"completion.debounce_ms": "fast"}},
        )
    with pytest.raises(JsonRpcException, match=r"scope: Input should be 'user' or 'project'"):
        await send("qodeassist/settings/update", {"scope": "team", "changes": {"a.b": 1}})
    assert settings_file.read_text() == USER_SETTINGS

    await send(
        "qodeassist/settings/update",
        {"scope": "project", "changes": {"refactor.lines_before": 5}},
    )
    project = await send("qodeassist/settings/get", {"scope": "project"})
    assert project.path == str(lsp_home / "project/.qodeassist/settings.toml")
    assert project.values.refactor.lines_before == 5
    await client.shutdown_session()


async def test_doctor_command_reports_every_pipeline_agent(
    client: LanguageClient, replay: ReplayServer, lsp_home: Path
) -> None:
    replay.route(
        "/v1/models",
        Reply.json({"data": [{"id": "gemma3-270m"}, {"id": "smollm2-135m-instruct"}]}),
    )
    replay.script("/v1/chat/completions", [chat_reply("OK"), chat_reply("OK")])  # chat, next edit
    replay.script("/v1/completions", completion_reply("a", " + b"))
    (lsp_home / "project/AGENTS.md").write_text("Run the tests first.\n")
    await client.initialize_session(client.init_params)
    await wait_ready(client)

    report = await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="qodeassist.doctor", arguments=[{"timeout": 10}])
        ),
        30,
    )

    assert report["ok"] is True, report["text"]
    names = [agent["name"] for agent in report["agents"]]
    assert names == ["Embedded Completion", "Embedded Chat", "Embedded Next Edit"]
    assert all(agent["checks"]["probe"] == "ok" for agent in report["agents"])
    assert "✓ Embedded Chat" in report["text"]
    assert [f["path"] for f in report["rules"]["files"]] == ["AGENTS.md"]
    assert "project rules (in the chat and refactor system prompts" in report["text"]
    assert "  AGENTS.md (21 characters)" in report["text"]
    await client.shutdown_session()
