"""``ClientTerminal``: execute tools' programs run in the ACP client's terminal (``terminal/*``).

When the client declares the ``terminal`` capability, the ``terminal`` tool's command (already
split, allow-listed and given a confined ``cwd`` by the tool) runs through ``terminal/create``;
the agent waits for its exit within the tool's time limit (killing it past that), reads its
output and releases it; the running tool call shows the terminal (``tool_terminal_ref``) while
it runs. A client that fails any step is the tool's error.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path

from acp import tool_terminal_ref, update_tool_call
from acp.schema import EnvVariable

from qodeassist_lsp.acp_agent.session import CURRENT
from qodeassist_lsp.tools.base import ToolInputError
from qodeassist_lsp.tools.permissions import RUNNING_CALL
from qodeassist_lsp.tools.process import OUTPUT_CAP, Finished


class ClientTerminal:
    """The `tools.workspace.ProgramRunner` of a session whose client has a terminal."""

    async def __call__(
        self,
        argv: Sequence[str],
        cwd: Path,
        timeout_s: float,
        *,
        env: Mapping[str, str] | None = None,
    ) -> Finished:
        """Run ``argv`` in the client's terminal (``env`` added); return its exit and output."""
        session = CURRENT.get()
        if session is None:
            raise ToolInputError("no ACP session to run the command in")
        client, sid = session.client, session.session_id
        try:
            created = await client.create_terminal(
                session_id=sid,
                command=argv[0],
                args=list(argv[1:]),
                cwd=str(cwd),
                env=[EnvVariable(name=k, value=v) for k, v in (env or {}).items()],
                output_byte_limit=OUTPUT_CAP,
            )
        except Exception as exc:
            raise ToolInputError(f"the editor could not start {argv[0]!r}: {exc}") from None
        terminal = created.terminal_id
        call_id = RUNNING_CALL.get()
        if call_id:  # the editor shows the terminal live in the tool call
            session.send(update_tool_call(call_id, content=[tool_terminal_ref(terminal)]))
        timed_out = False
        exit_code: int | None = None
        try:
            try:
                async with asyncio.timeout(timeout_s):
                    status = await client.wait_for_terminal_exit(
                        session_id=sid, terminal_id=terminal
                    )
                exit_code = status.exit_code
            except TimeoutError:
                timed_out = True
                await client.kill_terminal(session_id=sid, terminal_id=terminal)
            output = await client.terminal_output(session_id=sid, terminal_id=terminal)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await client.kill_terminal(session_id=sid, terminal_id=terminal)
            raise
        except Exception as exc:
            raise ToolInputError(f"the editor's terminal failed: {exc}") from None
        finally:
            with contextlib.suppress(Exception):
                await client.release_terminal(session_id=sid, terminal_id=terminal)
        text = output.output
        if output.truncated:  # ACP clients cut the start of the output to stay in the limit
            text = f"[the editor's terminal dropped the start of the output]\n{text}"
        return Finished(exit_code, text, 0, timed_out)
