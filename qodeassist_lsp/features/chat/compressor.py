"""Summarising a chat into a new one through ``pipelines.chat_compression`` (behaviour §8.3).

The transcript is the user and assistant text of the chat (tool calls, results, thinking and
file edits left out) as ``User: …`` / ``Assistant: …`` paragraphs, sent as one user message to
a pooled compression session; the agent's own system prompt says what to do with it. The
summary becomes the only message of a new chat that records where it came from.
"""

from __future__ import annotations

from collections.abc import Sequence

from qodeassist_lsp.config.pipelines import CHAT_COMPRESSION, PipelineSpec
from qodeassist_lsp.core.content import Message, TextBlock, user_text
from qodeassist_lsp.core.events import CancelledEvent, FailedEvent, TerminalEvent
from qodeassist_lsp.core.session_manager import SessionManager
from qodeassist_lsp.wire.errors import CategorizedError, ErrorCategory, ErrorInfo

SUMMARY_HEADING = "# Chat Summary\n\n"


class CompressionFailed(CategorizedError):
    """The summary could not be made; ``info`` says why, with a category."""


def transcript(messages: Sequence[Message]) -> str:
    """Return the user/assistant text of ``messages`` as the compressor's input."""
    parts = []
    for message in messages:
        text = message.text.strip()
        if text:
            speaker = "User" if message.role == "user" else "Assistant"
            parts.append(f"{speaker}: {text}")
    return "\n\n".join(parts)


async def summarise(sessions: SessionManager, agent: str, messages: Sequence[Message]) -> str:
    """Return the summary of ``messages`` made by ``agent`` (raises ``CompressionFailed``)."""
    text = transcript(messages)
    if not text:
        raise CompressionFailed(
            ErrorInfo(ErrorCategory.VALIDATION, "the chat has no text to summarise yet")
        )
    terminal, summary = await ask_once(sessions, agent, CHAT_COMPRESSION, text)
    if isinstance(terminal, FailedEvent):
        raise CompressionFailed(terminal.error)
    if isinstance(terminal, CancelledEvent):
        raise CompressionFailed(ErrorInfo(ErrorCategory.VALIDATION, "compression cancelled"))
    summary = summary.strip()
    if not summary:
        raise CompressionFailed(
            ErrorInfo(
                ErrorCategory.PROVIDER,
                f"{agent} returned an empty summary; try again or pick another chat_compression "
                "agent in pipelines.toml",
            )
        )
    return summary


async def ask_once(
    sessions: SessionManager, agent: str, pipeline: PipelineSpec, text: str
) -> tuple[TerminalEvent, str]:
    """Send ``text`` to a pooled ``agent`` session; return how it ended and the answer's text."""
    async with sessions.acquire(agent, pipeline) as session:
        request = session.send(user_text(text))
        try:
            terminal = await request.wait()
        except BaseException:
            request.cancel()
            raise
        return terminal, session.history.last_assistant_text()


def summary_message(summary: str) -> Message:
    """Return the single message of a compressed chat."""
    return Message("assistant", (TextBlock(SUMMARY_HEADING + summary),))
