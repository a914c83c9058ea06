"""Skills over stdio: listed with shadowing, invoked with /name, broken ones diagnosed."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from tests.e2e.lsp.conftest import open_file, published_diagnostics, serve_from
from tests.e2e.lsp.test_chat import request, start, texts
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply

SKILL = "---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n"


def write_skill(
    root: Path, name: str, description: str, body: str, extra: str = "", folder: str = ""
) -> Path:
    path = root / (folder or name)
    path.mkdir(parents=True, exist_ok=True)
    file = path / "SKILL.md"
    file.write_text(SKILL.format(name=name, description=description, extra=extra, body=body))
    return file


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_from(lsp_home, replay, monkeypatch, {"HOME": str(lsp_home / "home")})
    project = lsp_home / "project/.qodeassist/skills"
    write_skill(project, "my-skill", "Project version", "Always answer in haiku.")
    write_skill(lsp_home / "config/skills", "my-skill", "Config version", "Shadowed body.")
    write_skill(
        lsp_home / "home/.claude/skills",
        "house-style",
        "House style",
        "Use British spelling.",
        extra='metadata:\n  always-on: "true"\n',
    )
    write_skill(lsp_home / "config/skills", "deploy", "Ship the build", "Run the deploy.")


async def test_skills_list_reports_sources_shadowing_and_always_on(client, lsp_home) -> None:
    await start(client)
    listed = {s["name"]: s for s in await request(client, "skills/list", {})}
    assert set(listed) == {"my-skill", "deploy", "house-style"}
    mine = listed["my-skill"]
    assert (mine["description"], mine["source"], mine["alwaysOn"]) == (
        "Project version",
        "project",
        False,
    )
    assert mine["shadows"] == [
        {"source": "config", "path": str((lsp_home / "config/skills/my-skill/SKILL.md").resolve())}
    ]
    assert listed["house-style"]["alwaysOn"] is True and listed["house-style"]["source"] == "user"
    # A skill added while the server runs is found without a restart.
    write_skill(lsp_home / "config/skills", "later", "Added later", "Later body.")
    names = [s["name"] for s in await request(client, "skills/list", {})]
    assert "later" in names


async def test_a_slash_skill_message_sends_the_skill_body(client, replay) -> None:
    events = await start(client)
    replay.script("/v1/chat/completions", chat_reply("Done"))
    sent = await request(client, "chat/send", {"message": "/my-skill do X"})
    terminal = await events.terminal(sent["requestId"])
    assert terminal["kind"] == "finished" and texts(events.of(sent["requestId"])) == "Done"
    body = replay.last.json
    system = body["messages"][0]["content"]
    assert "# Available Skills" in system and "- deploy: Ship the build" in system
    assert "# Always-on Skill: house-style\n\nUse British spelling." in system
    user = str(body["messages"][-1]["content"])
    assert "/my-skill do X" in user
    assert "# Invoked Skill: my-skill" in user and "Always answer in haiku." in user
    assert "Shadowed body." not in str(body)
    # Kept in the history: the chat shows what was sent.
    chat = await request(client, "chat/get", {"chatId": sent["chatId"]})
    assert "Always answer in haiku." in str(chat["messages"][0]["blocks"])


async def test_an_unknown_slash_skill_is_refused_with_the_names_that_exist(client) -> None:
    await start(client)
    with pytest.raises(JsonRpcInvalidParams) as caught:
        await request(client, "chat/send", {"message": "/my-skil do X"})
    message = str(caught.value)
    assert "no skill 'my-skil'" in message and "did you mean 'my-skill'" in message
    assert await request(client, "chat/list", {}) == []


async def test_a_bad_skill_file_is_reported_as_a_diagnostic_at_its_line(client, lsp_home) -> None:
    bad = write_skill(lsp_home / "config/skills", "Bad_Name", "d", "b", folder="broken")
    await start(client)
    names = [s["name"] for s in await request(client, "skills/list", {})]
    assert "Bad_Name" not in names and "my-skill" in names
    status = await client.protocol.send_request_async("qodeassist/status", {})
    assert status.skills.errors == 1
    uri = open_file(client, bad, "markdown")
    [diagnostic] = await published_diagnostics(client, uri)
    assert diagnostic.range.start.line == 1  # `name:` is on line 2 of the file
    assert "`name: Bad_Name` is not a skill name" in diagnostic.message
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    assert any("skill(s) could not be loaded" in m.message for m in client.messages)
    # Fixed on disk: the rescan clears the diagnostic.
    write_skill(lsp_home / "config/skills", "broken", "Fixed", "b")
    await request(client, "skills/list", {})
    assert await published_diagnostics(client, uri, cleared=True) == []
    assert uri in client.diagnostics
