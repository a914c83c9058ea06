"""``agent: "auto"``: a small router agent (``pipelines.chat_router``) picks the chat agent.

The router gets one user message: the bundled ``personas/chat-router.md`` prompt with the chat
agents (name, description, tags) and the user's message, and is asked for a JSON object
``{"agent": …, "reason": …}``. The answer is parsed leniently (the first JSON object in the
text that names a chat agent, case and spacing aside). A router that fails, answers with
something unusable, or does not answer within ``[chat] router_timeout_ms`` leaves the choice to
the first chat agent, with the reason saying why.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.config.pipelines import CHAT_ROUTER
from qodeassist_lsp.core.events import FailedEvent
from qodeassist_lsp.core.session_manager import SessionManager
from qodeassist_lsp.features.chat.compressor import ask_once
from qodeassist_lsp.features.chat.settings import CHAT_SETTINGS

log = logging.getLogger("qodeassist.chat")

PROMPT_FILE = "chat-router.md"
MAX_MESSAGE_CHARS = 4000
"""The router needs the gist of the message, not all of a pasted file."""


@dataclass(frozen=True)
class Choice:
    """The agent that answers, why, and whether the router's own answer was used."""

    agent: str
    reason: str
    fallback: bool = False


def prompt(config: Configuration, roster: Sequence[str], message: str) -> str:
    """Return the router's user message for ``message`` and the chat agents ``roster``."""
    lines = []
    for name in roster:
        profile = config.agents[name]
        tags = f" [{', '.join(profile.tags)}]" if profile.tags else ""
        lines.append(f"- {name}: {profile.description or 'a chat assistant'}{tags}")
    template = Path(config.paths.personas / PROMPT_FILE).read_text(encoding="utf-8")
    return template.format(agents="\n".join(lines), message=message[:MAX_MESSAGE_CHARS])


def parse(answer: str, roster: Sequence[str]) -> Choice | None:
    """Return the choice in the router's ``answer``, or None when it names no chat agent."""
    by_key = {" ".join(name.casefold().split()): name for name in roster}
    decoder = json.JSONDecoder()
    start = answer.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(answer, start)
        except ValueError:
            value = None
        if isinstance(value, dict) and isinstance(value.get("agent"), str):
            name = by_key.get(" ".join(value["agent"].casefold().split()))
            if name is not None:
                reason = value.get("reason")
                text = " ".join(reason.split()) if isinstance(reason, str) else ""
                return Choice(name, text[:300] or "chosen by the router")
        start = answer.find("{", start + 1)
    return None


async def choose(
    sessions: SessionManager,
    config: Configuration,
    roster: Sequence[str],
    message: str,
) -> Choice:
    """Return the chat agent for ``message``: the router's pick, else the roster's first."""
    router = config.pipelines.agent(CHAT_ROUTER)
    first = roster[0]
    timeout = config.settings.section(CHAT_SETTINGS).router_timeout_ms / 1000
    try:
        async with asyncio.timeout(timeout):
            answer = await _ask(sessions, router, prompt(config, roster, message))
    except TimeoutError:
        return _fallback(first, f"the router {router} did not answer within {timeout:g} s")
    except _RouterFailed as exc:
        return _fallback(first, f"the router {router} failed: {exc}")
    choice = parse(answer, roster)
    if choice is None:
        return _fallback(first, f"the router {router} named no chat agent")
    return choice


class _RouterFailed(Exception):
    """The router's request failed (the message says why)."""


async def _ask(sessions: SessionManager, router: str, text: str) -> str:
    """Send ``text`` to the router agent; return its answer."""
    try:
        terminal, answer = await ask_once(sessions, router, CHAT_ROUTER, text)
    except (OSError, ValueError, LookupError) as exc:  # an agent that cannot be built
        raise _RouterFailed(str(exc)) from exc
    if isinstance(terminal, FailedEvent):
        raise _RouterFailed(terminal.error.message)
    if terminal.kind == "cancelled":
        raise _RouterFailed("cancelled")
    return answer


def _fallback(agent: str, why: str) -> Choice:
    log.info("auto agent: %s; %s answers", why, agent)
    return Choice(agent, f"{why}; the first chat agent answers", fallback=True)
