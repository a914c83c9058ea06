"""``qodeassist-lsp chat [--agent A] [--chat ID] [--events jsonl] [--workspace DIR] MESSAGE``.

One chat turn from a terminal, through the chat service every door uses
(`Workbench.chat_service`): ``@file`` and ``@codebase`` mentions, the ignore rule, the rules
files, skills and memory as in an editor, and the chat saved as a history like theirs
(``--chat ID`` continues one). The command line's ports are ``--workspace`` (default:
``--project``, else the current folder), a terminal to ask permission questions on
(`tool_kit.TerminalAsker`; denied when stdin is not one) and ``--no-tools``. Plain mode streams
the answer text to stdout as it arrives (tool activity goes to stderr); ``--events jsonl``
prints every chat event as one JSON object per line, as ``qodeassist/chat/event`` carries it.
Exit 0 when the model finished, 3 with the typed error on stderr when the request failed (1 when
it failed for a configuration error), 1 when the message is refused, 2 for an empty message,
130 when interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qodeassist_lsp.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    agent_named,
    exit_code_for,
    load,
    print_launch_progress,
)
from qodeassist_lsp.cli.tool_kit import chat_workbench, workspace_of
from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT
from qodeassist_lsp.core.agent import AgentNotAvailable, demo_notice
from qodeassist_lsp.core.events import (
    FailedEvent,
    FinishedEvent,
    SessionEvent,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from qodeassist_lsp.core.repetition import REPETITION_STOP
from qodeassist_lsp.core.runtime import Runtime
from qodeassist_lsp.wire.errors import CategorizedError, QodeAssistError

if TYPE_CHECKING:
    from qodeassist_lsp.features.chat.service import ChatService, SendInput

TERMINAL = ("finished", "failed", "cancelled")


def register(commands: Any, shared: argparse.ArgumentParser) -> None:
    """Add the ``chat`` command."""
    chat = commands.add_parser("chat", parents=[shared], help="one chat turn, streamed")
    chat.add_argument("message", metavar="MESSAGE")
    chat.add_argument("--agent", metavar="A", help="agent name (default: first chat agent)")
    chat.add_argument(
        "--chat", metavar="ID", help="continue the saved chat ID (default: a new chat)"
    )
    chat.add_argument("--events", choices=["jsonl"], help="print typed events, one per line")
    chat.add_argument(
        "--workspace",
        metavar="DIR",
        help="the folder the agent's tools see (default: --project, else the current folder)",
    )
    chat.add_argument("--no-tools", action="store_true", help="offer the agent no tools")
    chat.set_defaults(handler=run_chat)


def pick_chat_agent(config: Configuration, requested: str | None) -> str:
    """Return the agent to chat with: the requested one or the first chat pipeline agent."""
    if requested:
        return agent_named(config, requested)
    if agent := config.pipelines.loaded(config.agents).agent(CHAT_ASSISTANT):
        return agent
    raise CliError("no chat agent is configured; set pipelines.chat_assistant or pass --agent")


def run_chat(args: argparse.Namespace) -> int:
    """Send one message and stream the answer."""
    if not args.message.strip():
        raise CliError("nothing to send: the message is empty", EXIT_USAGE)
    workspace = workspace_of(args)
    config = load(args)
    # A continued chat keeps its agent unless --agent names another.
    agent = None if args.chat and not args.agent else pick_chat_agent(config, args.agent)
    return asyncio.run(_chat(_any_agent_may_chat(config), workspace, agent, args))


def _any_agent_may_chat(config: Configuration) -> Configuration:
    """Return ``config`` whose chat roster goes on with every other loaded agent.

    ``--agent`` may name any agent (the other doors offer the chat roster only); its first
    agents, the default, stay first.
    """
    everyone = dict.fromkeys((*config.pipelines.roster(CHAT_ASSISTANT), *config.agents))
    pipelines = config.pipelines.with_roster(CHAT_ASSISTANT, tuple(everyone))
    return dataclasses.replace(config, pipelines=pipelines)


class _Printer:
    """The chat service's sink: prints each event and notes the end of the request."""

    def __init__(self, jsonl: bool) -> None:
        self.jsonl = jsonl
        self.notice: Callable[[str], str | None] = lambda _chat_id: None
        """The demo notice of a chat's agent (None: a real model answers)."""
        self.text_open = False
        self.answered = False
        self.chat_id = ""
        self.terminal: SessionEvent | None = None
        self.ended = asyncio.Event()

    def __call__(self, chat_id: str, event: SessionEvent) -> None:
        self.chat_id = chat_id
        if isinstance(event, TextEvent) and not self.answered:
            notice = self.notice(chat_id)
            if notice is not None and notice in event.text:  # on stderr, not in the answer
                print(f"qodeassist-lsp: {notice}", file=sys.stderr)
                return
            self.answered = True
        self._print(chat_id, event)
        if event.kind in TERMINAL and self.terminal is None:
            self.terminal = event
            self.ended.set()

    def _print(self, chat_id: str, event: SessionEvent) -> None:
        if self.jsonl:
            line = {"chatId": chat_id, **event.to_json()}
            sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
            sys.stdout.flush()
            return
        if isinstance(event, TextEvent):
            sys.stdout.write(event.text)
            sys.stdout.flush()
            self.text_open = not event.text.endswith("\n")
        elif isinstance(event, ToolCallEvent):
            print(f"[tool] {event.name}({json.dumps(event.arguments)})", file=sys.stderr)
        elif isinstance(event, ToolResultEvent):
            state = "error" if event.is_error else "ok"
            print(f"[tool] {event.name} -> {state}", file=sys.stderr)
        elif event.kind in TERMINAL and self.text_open:
            sys.stdout.write("\n")
            sys.stdout.flush()
        if isinstance(event, FinishedEvent) and event.stop_reason == REPETITION_STOP:
            print("[stopped: the answer started repeating itself]", file=sys.stderr)


def _demo_notice(runtime: Runtime, agent_name: str) -> str | None:
    """Return the demo notice of ``agent_name``, or None when a real model answers."""
    try:
        agent = runtime.factory.create(agent_name)
    except AgentNotAvailable:
        return None
    return demo_notice(agent) if agent.demo else None


async def _chat(
    config: Configuration, workspace: Path, agent: str | None, args: argparse.Namespace
) -> int:
    from qodeassist_lsp.features.chat.service import SendInput
    from qodeassist_lsp.features.chat.settings import CHAT_SETTINGS

    runtime = Runtime(config, on_launch_progress=print_launch_progress)
    printer = _Printer(args.events == "jsonl")
    try:
        async with chat_workbench(
            runtime, workspace, ask=sys.stdin.isatty(), tools=not args.no_tools
        ) as bench:
            chats = bench.chat_service(printer)
            printer.notice = lambda chat_id: _demo_notice(runtime, chats.agent_of(chat_id))
            try:
                message = SendInput(args.message, chat_id=args.chat, agent=agent)
                await _turn(chats, printer, message)
            finally:
                await chats.aclose()
            saved = chats.settings.section(CHAT_SETTINGS).autosave
    finally:
        await runtime.aclose()
    if saved and not printer.jsonl and sys.stderr.isatty():
        said = f"saved as chat {printer.chat_id}; continue it with --chat {printer.chat_id}"
        print(f"qodeassist-lsp: {said}", file=sys.stderr)
    if isinstance(printer.terminal, FailedEvent):
        error = printer.terminal.error
        print(f"qodeassist-lsp: {error.category} error: {error.message}", file=sys.stderr)
        return exit_code_for(str(error.category))
    return EXIT_OK


async def _turn(chats: ChatService, printer: _Printer, message: SendInput) -> None:
    """Send ``message``; wait until its last event is printed (cancel it when interrupted)."""
    from qodeassist_lsp.features.chat.store import ChatNotFound

    try:
        chat_id, _request = await chats.send(message)
    except ChatNotFound:
        where = chats.store().root
        raise CliError(f"no chat {message.chat_id!r} is saved in {where}") from None
    except CategorizedError as exc:  # the long chat had to be compressed first, and that failed
        category = str(exc.info.category)
        raise CliError(f"{category} error: {exc}", exit_code_for(category)) from None
    except QodeAssistError as exc:  # refused: an ignored file mentioned, an unusable agent
        raise CliError(str(exc)) from None
    try:
        await printer.ended.wait()
    except asyncio.CancelledError:
        chats.cancel(chat_id)
        await printer.ended.wait()
        raise
