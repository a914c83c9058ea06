#!/usr/bin/env python3
"""A minimal ACP agent on stdio (the SDK's agent side) that misbehaves on request, for tests.

What the prompt text says decides what it does:

* ``read <path>``: asks the client to read ``path`` (``fs/read_text_file``) and answers with
  the text, or with ``refused: <the client's error>``;
* ``crash``: sends one chunk, then exits with code 3 in the middle of the turn;
* ``flood <n>``: sends ``n`` chunks of 10,000 characters;
* ``hang``: sends one chunk and waits; ``session/cancel`` ends the turn as ``cancelled`` and
  appends a line to the file named by ``ACP_FAULT_LOG``;
* anything else: answers ``echo: <text>`` (with the process id, to tell processes apart).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, run_agent, update_agent_message_text
from acp.schema import InitializeResponse, NewSessionResponse, PromptResponse


class FaultAgent:
    def __init__(self) -> None:
        self.conn: Any = None
        self.cancelled: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=PROTOCOL_VERSION)

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id=f"s-{os.getpid()}")

    async def say(self, session_id: str, text: str) -> None:
        await self.conn.session_update(session_id, update_agent_message_text(text))

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        text = "".join(getattr(block, "text", "") for block in prompt).strip()
        command, _, rest = text.rpartition("\n")[2].partition(" ")
        if command == "read":
            try:
                read = await self.conn.read_text_file(path=rest, session_id=session_id)
                await self.say(session_id, read.content)
            except Exception as exc:
                await self.say(session_id, f"refused: {exc} {getattr(exc, 'data', '')}")
        elif command == "crash":
            await self.say(session_id, "about to crash")
            await asyncio.sleep(0.2)
            os._exit(3)
        elif command == "flood":
            for _ in range(int(rest)):
                await self.say(session_id, "x" * 10_000)
        elif command == "hang":
            event = self.cancelled[session_id] = asyncio.Event()
            await self.say(session_id, "thinking hard")
            await event.wait()
            log = os.environ.get("ACP_FAULT_LOG")
            if log:
                await asyncio.to_thread(Path(log).write_text, f"cancelled {session_id}\n")
            return PromptResponse(stop_reason="cancelled")
        else:
            await self.say(session_id, f"echo: {text} (pid {os.getpid()})")
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        event = self.cancelled.get(session_id)
        if event is not None:
            event.set()


if __name__ == "__main__":
    sys.exit(asyncio.run(run_agent(FaultAgent())))  # type: ignore[arg-type]
