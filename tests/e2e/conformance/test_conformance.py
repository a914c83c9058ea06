"""One scenario, one outcome, whichever door it comes through (issue 44).

Each scenario runs through the LSP server (``qodeassist/chat/send``), the ACP agent
(``session/prompt``), the HTTP API (``POST /v1/chat/completions``) and, where it applies, the
CLI (``qodeassist-lsp chat``: the same chat service, without the file-edit tools), each the
real process against a replayed provider, and expects the same outcome: an ignored file
mentioned is refused before anything is sent or saved; an ignored or ``.gitignore``d file is
neither changed nor created, and the model is told which file lists it; a path outside the
workspace is refused; an edit that breaks the file's syntax is flagged to the model; a tool the
settings deny is not run and the model is told why; a provider failure reaches the user with
the provider's message; a non-ASCII message is answered intact; the project's ``AGENTS.md`` is
in the system prompt; a malformed chat request is refused naming the field and the door keeps
serving.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conformance.doors import (
    DOORS,
    MALFORMED,
    SECRET,
    Outcome,
    make_home,
    saved,
    sent_to_provider,
    told,
)
from tests.support.replay_server import ReplayServer, Reply
from tests.support.streams import chat_reply, tool_call_reply
from tests.support.system_prompt import system_prompt

ROUTE = "/v1/chat/completions"
NON_ASCII = "Grüße 👋 — ¿qué tal? 你好 \u00a0ok"
ALL = ("lsp", "acp", "http", "cli")
CHATS = ("lsp", "acp", "http")
"""The doors with the file-edit tools (the CLI offers none: nobody could review an edit)."""


@dataclass(frozen=True)
class Scenario:
    """A message, what the model replies, and what must hold afterwards."""

    name: str
    message: str
    doors: tuple[str, ...]
    check: Callable[[Outcome, Path, ReplayServer], None]
    replies: Callable[[], list[Reply]] = field(default=lambda: [chat_reply("Done.")])
    files: dict[str, str] = field(default_factory=dict)
    """Files written into the project before the message is sent."""


def calls(tool: str, **arguments: Any) -> Callable[[], list[Reply]]:
    """The model calls ``tool`` once, then answers."""
    return lambda: [tool_call_reply(tool, arguments), chat_reply("Done.")]


def ran(outcome: Outcome) -> None:
    assert outcome.refused is None, outcome.refused


# -- the expected outcomes ---------------------------------------------------------------------
def mention_refused(outcome: Outcome, home: Path, replay: ReplayServer) -> None:
    assert outcome.refused is not None, f"the ignored file was sent: {outcome}"
    assert "secret.txt is excluded by" in outcome.refused, outcome.refused
    assert ".qodeassistignore" in outcome.refused, outcome.refused
    assert not replay.requests, sent_to_provider(replay)
    assert SECRET not in saved(home)


def edit_refused(path: str, listed_by: str) -> Callable[[Outcome, Path, ReplayServer], None]:
    def check(outcome: Outcome, home: Path, replay: ReplayServer) -> None:
        ran(outcome)
        assert f"{path} is excluded by {listed_by}" in told(replay), told(replay)
        assert SECRET not in sent_to_provider(replay)

    return check


def outside_refused(outcome: Outcome, home: Path, replay: ReplayServer) -> None:
    ran(outcome)
    assert "outside the workspace" in told(replay), told(replay)
    assert SECRET not in sent_to_provider(replay)
    assert not (home / "evil.py").exists()


def read_refused(outcome: Outcome, home: Path, replay: ReplayServer) -> None:
    ran(outcome)
    assert ".qodeassistignore" in told(replay), told(replay)
    assert SECRET not in sent_to_provider(replay)


def syntax_flagged(outcome: Outcome, home: Path, replay: ReplayServer) -> None:
    ran(outcome)
    assert "warning:" in told(replay) and "broken.py" in told(replay), told(replay)


def permission_denied(outcome: Outcome, home: Path, replay: ReplayServer) -> None:
    ran(outcome)
    assert "terminal was not run: execute tools are denied by the user's settings" in told(
        replay
    ), told(replay)


def provider_failed(outcome: Outcome, home: Path, replay: ReplayServer) -> None:
    assert outcome.refused is not None, outcome
    assert "the model is overloaded" in outcome.refused, outcome.refused


def answered_intact(outcome: Outcome, home: Path, replay: ReplayServer) -> None:
    ran(outcome)
    assert outcome.answer == "Hallo ✓ 你好", outcome
    last = replay.requests[-1].json["messages"][-1]
    assert NON_ASCII in str(last["content"]), last


RULE = "Answer in British English (conformance rule 6e0d)."


def rules_in_the_system_prompt(outcome: Outcome, home: Path, replay: ReplayServer) -> None:
    ran(outcome)
    sent = system_prompt(replay.requests[-1].json)
    assert "# Project rules (from AGENTS.md)" in sent and f"## AGENTS.md\n\n{RULE}" in sent, sent


SCENARIOS = [
    Scenario("ignored-file-mentioned", "look at @secret.txt:1-1", ALL, mention_refused),
    Scenario(
        "ignored-file-edited",
        "change the secret",
        CHATS,
        edit_refused("secret.txt", ".qodeassistignore"),
        calls(
            "edit_file", path="secret.txt", edits="<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n"
        ),
    ),
    Scenario(
        "gitignored-file-created",
        "add a build file",
        CHATS,
        edit_refused("build/new.py", ".gitignore"),
        calls("create_file", path="build/new.py", content="y = 2\n"),
    ),
    Scenario(
        "gitignored-file-deleted",
        "remove the build output",
        CHATS,
        edit_refused("build/out.py", ".gitignore"),
        calls("delete_file", path="build/out.py"),
    ),
    Scenario(
        "file-created-outside-the-workspace",
        "create it next door",
        CHATS,
        outside_refused,
        calls("create_file", path="../evil.py", content="x = 1\n"),
    ),
    Scenario(
        "file-read-outside-the-workspace",
        "read next door",
        ALL,
        outside_refused,
        calls("read_file", path="../outside.txt"),
    ),
    Scenario(
        "ignored-file-read",
        "read the secret",
        ALL,
        read_refused,
        calls("read_file", path="secret.txt"),
    ),
    Scenario(
        "edit-breaks-the-syntax",
        "write broken code",
        CHATS,
        syntax_flagged,
        calls("create_file", path="broken.py", content="def broken(:\n    pass\n"),
    ),
    Scenario(
        "permission-denied",
        "run it",
        ALL,
        permission_denied,
        calls("terminal", command="echo hi"),
    ),
    Scenario(
        "provider-failure",
        "hello",
        ALL,
        provider_failed,
        lambda: [
            Reply(
                status=500,
                body=b'{"error": {"message": "the model is overloaded"}}',
                content_type="application/json",
                repeat=4,
            )
        ],
    ),
    Scenario(
        "non-ascii-message",
        NON_ASCII,
        ALL,
        answered_intact,
        lambda: [chat_reply("Hallo ✓ ", "你好")],
    ),
    Scenario(
        "project-rules-in-the-system-prompt",
        "hello",
        ALL,
        rules_in_the_system_prompt,
        files={"AGENTS.md": RULE + "\n"},
    ),
]

CASES = [
    pytest.param(scenario, door, id=f"{scenario.name}-{door}")
    for scenario in SCENARIOS
    for door in scenario.doors
]


@pytest.fixture
def replay() -> Any:
    with ReplayServer() as server:
        yield server


@pytest.mark.parametrize(("scenario", "door"), CASES)
async def test_one_outcome_through_every_door(
    scenario: Scenario, door: str, tmp_path: Path, replay: ReplayServer
) -> None:
    home = make_home(tmp_path, replay)
    for name, text in scenario.files.items():
        (home / "project" / name).write_text(text, encoding="utf-8")
    replay.script(ROUTE, scenario.replies())
    outcome = await DOORS[door](home, scenario.message)
    scenario.check(outcome, home, replay)
    project = home / "project"
    assert (project / "secret.txt").read_text() == f"{SECRET}\n"  # never changed, by any door
    assert (project / "build/out.py").exists() and not (project / "build/new.py").exists()


@pytest.mark.parametrize(
    ("door", "field_name", "code"),
    [("lsp", "message", "-32602"), ("acp", "prompt", "-32602"), ("http", "messages", "400")],
)
async def test_a_malformed_request_is_refused_naming_the_field_and_the_door_keeps_serving(
    door: str, field_name: str, code: str, tmp_path: Path, replay: ReplayServer
) -> None:
    home = make_home(tmp_path, replay)
    replay.script(ROUTE, [chat_reply("Done.")])
    error, after = await MALFORMED[door](home)
    assert code in error and field_name in error, error
    assert after == "answered", after
    assert len(replay.requests) == 1  # only the good request reached the provider
