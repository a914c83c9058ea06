"""``ProcessProvider``: the shared shape of providers that are local programs on pipes.

A process provider is a ``GenericProvider`` to everything above it (health, circuit breaker,
failover, the same typed event stream), but instead of an HTTP request it hands the latest user
message to a program started from the instance's ``command``. Subclasses implement `_turn` for
their protocol. The program is looked up on PATH at use: a missing one is a configuration error
naming the npm package that provides it. Processes run in their own process group, which is
killed when they are closed; an answer longer than `MAX_OUTPUT_CHARS` is cut off as a failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path
from typing import Any

from qodeassist_lsp.config.providers import ProviderInstance
from qodeassist_lsp.core.agent import PreparedRequest
from qodeassist_lsp.core.launcher.processes import KILL, signal_group
from qodeassist_lsp.core.provider import GenericProvider
from qodeassist_lsp.core.request_host import RequestHost
from qodeassist_lsp.core.tools import ToolRegistry
from qodeassist_lsp.wire.client import Timeouts
from qodeassist_lsp.wire.errors import CategorizedError, ErrorCategory, ErrorInfo
from qodeassist_lsp.wire.events import StreamError, TextDelta, ThinkingDelta, WireEvent
from qodeassist_lsp.wire.retry import RetryPolicy

MAX_OUTPUT_CHARS = 1_000_000
"""The most answer text (and thinking) one turn may produce before it is stopped as a failure."""
LINE_LIMIT = 16 * 1024 * 1024
"""The longest line read from a program's stdout (a JSON message)."""
STOP_GRACE_S = 3.0


class ProcessConfigError(CategorizedError):
    """The instance's program cannot be started (missing on PATH, not executable)."""


def program_of(instance: ProviderInstance) -> str:
    """Return the full path of the instance's program; raise ``ProcessConfigError`` if absent."""
    program = instance.command[0]
    found = shutil.which(program)
    if found is None:
        install = (
            f"; install it with `npm install -g {instance.package}`" if instance.package else ""
        )
        raise ProcessConfigError(
            ErrorInfo(
                ErrorCategory.CONFIG,
                f"provider {instance.name!r}: the program {program!r} is not on PATH{install}, "
                f"or set `command` in its provider file ({instance.source or 'providers/'})",
            )
        )
    return found


async def start_process(
    instance: ProviderInstance, cwd: Path | None, extra_args: Sequence[str] = ()
) -> asyncio.subprocess.Process:
    """Start the instance's ``command`` (plus ``extra_args``) on pipes in its own process group."""
    program = program_of(instance)
    try:
        return await asyncio.create_subprocess_exec(
            program,
            *instance.command[1:],
            *extra_args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=str(cwd) if cwd is not None else None,
            env={**os.environ, **instance.env},
            start_new_session=True,
            limit=LINE_LIMIT,
        )
    except OSError as exc:
        raise ProcessConfigError(
            ErrorInfo(
                ErrorCategory.CONFIG, f"provider {instance.name!r}: cannot start {program}: {exc}"
            )
        ) from exc


async def stop_process(process: asyncio.subprocess.Process) -> None:
    """End ``process`` and its group: close its stdin, then terminate, then kill."""
    if process.returncode is None and process.stdin is not None:
        process.stdin.close()
    for signum in (None, 15, KILL):
        if signum is not None:
            signal_group(process, signum)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(process.wait(), STOP_GRACE_S)
            break
    signal_group(process, KILL)  # what it started outlives it otherwise


async def stderr_tail(process: asyncio.subprocess.Process, keep: list[str]) -> None:
    """Keep the last lines ``process`` printed on stderr in ``keep`` (for failure messages)."""
    if process.stderr is None:
        return
    with contextlib.suppress(ValueError, OSError):
        async for line in process.stderr:
            keep.append(line.decode("utf-8", "replace").rstrip())
            del keep[:-20]


def prompt_of(body: dict[str, Any]) -> tuple[str, str]:
    """Return the latest user message's text and the conversation before it, as text.

    The agent's ``[body]`` is rendered in the OpenAI chat shape; a program that already holds
    the conversation gets only the latest message, a fresh one the transcript too.
    """
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    texts = [(str(m.get("role", "")), _text(m.get("content"))) for m in messages]
    last = max((i for i, (role, _t) in enumerate(texts) if role == "user"), default=-1)
    if last < 0:
        return "", ""
    earlier = "\n\n".join(f"{role}: {text}" for role, text in texts[:last] if role != "system")
    return texts[last][1], earlier


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict)]
        return "\n".join(part for part in parts if isinstance(part, str))
    return ""


def count_at(usage: dict[str, Any], key: str) -> int:
    """Return the token count ``usage[key]`` a program reported; 0 when it is not one."""
    value = usage.get(key)
    return value if isinstance(value, int) and value >= 0 else 0


def failure(message: str, detail: str = "") -> StreamError:
    """Return the final error event of a turn the program could not finish."""
    return StreamError(ErrorInfo(ErrorCategory.PROVIDER, message, provider_detail=detail))


class ProcessProvider(GenericProvider):
    """Base of the agent-process providers: one turn of a program per request."""

    async def stream(
        self,
        request: PreparedRequest,
        *,
        timeouts: Timeouts,
        retry: RetryPolicy,
        request_id: str,
        api_key: str | None = None,
        host: RequestHost | None = None,
    ) -> AsyncGenerator[list[WireEvent], None]:
        """Run one turn of the program for ``request``; yield its events (see GenericProvider)."""
        if not self.breaker.allow():
            raise self.breaker.refusal()
        host = host or RequestHost(request_id, request_id, ToolRegistry(), _ignore)
        turn = _capped(self._turn(request, host), self.instance.name)
        tracked = self._tracked(turn, program=True)
        async with contextlib.aclosing(tracked) as batches:
            async for batch in batches:
                yield batch

    def _turn(
        self, request: PreparedRequest, host: RequestHost
    ) -> AsyncGenerator[list[WireEvent], None]:
        """Run one turn; yield event batches, ending with ``MessageStop`` or a final error."""
        raise NotImplementedError

    async def list_models(self, timeouts: Timeouts | None = None) -> list[str]:
        """Return no models: an agent program picks its own."""
        return []


async def _capped(
    turn: AsyncGenerator[list[WireEvent], None], name: str
) -> AsyncGenerator[list[WireEvent], None]:
    """Pass ``turn`` on until its text passes `MAX_OUTPUT_CHARS`; then end it as failed."""
    total = 0
    async with contextlib.aclosing(turn) as batches:
        async for batch in batches:
            for event in batch:
                if isinstance(event, TextDelta):
                    total += len(event.text)
                elif isinstance(event, ThinkingDelta):
                    total += len(event.thinking)
            if total > MAX_OUTPUT_CHARS:
                yield [
                    failure(
                        f"provider {name!r}: the agent's answer passed {MAX_OUTPUT_CHARS} "
                        "characters and was stopped"
                    )
                ]
                return
            yield batch


def _ignore(_event: Any) -> None:
    """Drop an event (a request without a host)."""
