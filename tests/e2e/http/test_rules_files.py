"""The project's rules files through ``POST /v1/chat/completions``: in, and gone once deleted."""

from __future__ import annotations

from tests.e2e.http.conftest import HttpServer
from tests.support.system_prompt import system_prompt

CHAT_AGENT = "Claude Chat — Sonnet"
HELLO = "anthropic/stream_text_hello.sse"
RULE = "Name every test after the behaviour it checks (rule 5b7e)."


def test_an_agents_md_reaches_the_system_prompt_and_leaves_when_deleted(
    http_server: HttpServer,
) -> None:
    rules = http_server.workspace.project / "AGENTS.md"
    rules.write_text(f"# Conventions\n\n{RULE}\n", encoding="utf-8")
    http_server.replay.script("/v1/messages", [HELLO, HELLO])
    body = {"model": CHAT_AGENT, "messages": [{"role": "user", "content": "Hi"}]}
    with http_server.client() as client:
        first = client.post("/v1/chat/completions", json=body)
        assert first.status_code == 200, first.text
        sent = system_prompt(http_server.replay.requests[-1].json)
        assert "# Project rules (from AGENTS.md)" in sent
        assert f"## AGENTS.md\n\n# Conventions\n\n{RULE}" in sent
        rules.unlink()
        second = client.post("/v1/chat/completions", json=body)
        assert second.status_code == 200, second.text
    assert len(http_server.replay.requests) == 2
    after = system_prompt(http_server.replay.requests[-1].json)
    assert RULE not in after and "Project rules" not in after
