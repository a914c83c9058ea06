"""Drive the real ``qodeassist-lsp acp`` process over stdio with the ACP SDK's own client.

`Editor` is the test's ACP client: it records every ``session/update``, answers
``session/request_permission`` with the option it was told to pick (or never, to test the
timeout), and, when it declares ``fs``, serves reads from its own buffers and records writes
(or fails them). The agent talks to a loopback `ReplayServer` through the embedded instances.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from tests.support.replay_server import ReplayServer
from tests.support.streams import write_embedded_instances

AGENTS = {
    "E2E Tool Chat": 'extends = "Embedded Chat"\nenable_tools = true\n',
    "E2E Other Chat": 'extends = "Embedded Chat"\nenable_tools = false\n[body]\nmodel = "other"\n',
}


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    """A loopback provider of this test's own."""
    with ReplayServer() as server:
        yield server


@pytest.fixture
def acp_home(tmp_path: Path, replay: ReplayServer) -> Path:
    """Config and data roots and a project whose chat agents talk to ``replay``."""
    for name in ("config/agents", "config/providers", "data", "project", "home"):
        (tmp_path / name).mkdir(parents=True)
    write_embedded_instances(tmp_path / "config/providers", replay.url)
    for index, (name, body) in enumerate(AGENTS.items()):
        (tmp_path / f"config/agents/e2e_{index}.toml").write_text(
            f'schema_version = 1\nname = "{name}"\n{body}'
        )
    names = ", ".join(f'"{name}"' for name in AGENTS)
    (tmp_path / "config/pipelines.toml").write_text(f"[pipelines]\nchat_assistant = [{names}]\n")
    (tmp_path / "config/settings.toml").write_text('[tools.permissions]\nwrite = "ask"\n')
    return tmp_path


def agent_env(home: Path) -> dict[str, str]:
    """The environment of the agent process: every root inside ``home``."""
    return {
        **os.environ,
        "HOME": str(home / "home"),
        "QODEASSIST_CONFIG_DIR": str(home / "config"),
        "QODEASSIST_DATA_DIR": str(home / "data"),
        "QODEASSIST_LOG_LEVEL": "INFO",
    }


class Editor:
    """The ACP client of the tests (implements ``acp.Client``)."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.permission_requests: list[Any] = []
        self.answer: str | None = "allow_once"
        """The option picked for permission questions; None never answers."""
        self.fs = False
        self.buffers: dict[str, str] = {}
        self.writes: list[tuple[str, str]] = []
        self.fail_writes = False
        self.terminal = False
        self.commands: list[tuple[str, list[str], str | None]] = []
        self.released: list[str] = []

    def capabilities(self) -> ClientCapabilities:
        fs = FileSystemCapabilities(read_text_file=self.fs, write_text_file=self.fs)
        return ClientCapabilities(fs=fs, terminal=self.terminal)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permission_requests.append((tool_call, options))
        if self.answer is None:
            await asyncio.sleep(3600)
        if self.answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=self.answer)
        )

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:  # fmt: skip
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        try:
            return ReadTextFileResponse(content=await asyncio.to_thread(Path(path).read_text))
        except OSError:
            raise RequestError.resource_not_found(path) from None

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        if self.fail_writes:
            raise RequestError.internal_error({"message": "the buffer is read-only"})
        self.writes.append((path, content))
        self.buffers[path] = content
        return WriteTextFileResponse()

    async def create_terminal(
        self, session_id: str, command: str, args: list[str] | None = None, env: Any = None,
        cwd: str | None = None, output_byte_limit: int | None = None, **kwargs: Any,
    ) -> CreateTerminalResponse:  # fmt: skip
        self.commands.append((command, list(args or []), cwd))
        return CreateTerminalResponse(terminal_id=f"term-{len(self.commands)}")

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        return WaitForTerminalExitResponse(exit_code=0)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        command, args, _cwd = self.commands[-1]
        return TerminalOutputResponse(output=f"editor ran {command} {' '.join(args)}\n",
                                      truncated=False)  # fmt: skip

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        self.released.append(terminal_id)

    def on_connect(self, conn: Any) -> None:
        pass

    # -- what the tests read ------------------------------------------------------------
    def of_kind(self, kind: str) -> list[Any]:
        return [u for _s, u in self.updates if u.session_update == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of_kind(kind))


@contextlib.asynccontextmanager
async def running_agent(
    home: Path, editor: Editor, *args: str
) -> AsyncIterator[ClientSideConnection]:
    """Start ``qodeassist-lsp acp`` in the project folder and initialize it.

    Its stderr (the log) goes to ``home/agent.log``; leaving the block closes its stdin and
    waits for it to exit (the SDK's shutdown), killing it only if it does not.
    """
    with (home / "agent.log").open("ab") as log:
        async with spawn_agent_process(
            editor,
            sys.executable,
            "-m",
            "qodeassist_lsp",
            "acp",
            *args,
            env=agent_env(home),
            cwd=str(home / "project"),
            transport_kwargs={"stderr": log.fileno(), "shutdown_timeout": 10.0},
        ) as (conn, _process):
            await asyncio.wait_for(
                conn.initialize(
                    protocol_version=PROTOCOL_VERSION, client_capabilities=editor.capabilities()
                ),
                30,
            )
            yield conn
