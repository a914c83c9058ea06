"""``qodeassist-lsp chat [--agent A] [--events jsonl] [--workspace DIR] [--no-tools] MESSAGE``.

One chat turn from a terminal. An agent with ``enable_tools`` gets the tool kit over
``--workspace`` (default: ``--project``, else the current folder) behind
``[tools.permissions]``; a question is asked on the terminal (`tool_kit.TerminalAsker`), or
denied when stdin is not one. The workspace's rules files (``AGENTS.md`` …, see
`qodeassist_lsp.context.rules_files`) go into the system prompt as in every chat. Plain
mode streams the answer text to stdout as it arrives (tool activity goes to stderr);
``--events jsonl`` prints every session event as one JSON object per line. Exit 0 when the
model finished, 3 with the typed error on stderr when the request failed (1 when it failed for a
configuration error), 2 for an empty message, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from qodeassist_lsp.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    agent_named,
    exit_code_for,
    load,
    print_launch_progress,
)
from qodeassist_lsp.cli.tool_kit import close_tools, give_tools, workspace_of
from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT
from qodeassist_lsp.context import rules_files
from qodeassist_lsp.context.ignore import IgnoreFilter
from qodeassist_lsp.context.rules_files import RulesFinder, ignore_rule
from qodeassist_lsp.core.agent import AgentNotAvailable, demo_notice
from qodeassist_lsp.core.content import user_text
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


def register(commands: Any, shared: argparse.ArgumentParser) -> None:
    """Add the ``chat`` command."""
    chat = commands.add_parser("chat", parents=[shared], help="one chat turn, streamed")
    chat.add_argument("message", metavar="MESSAGE")
    chat.add_argument("--agent", metavar="A", help="agent name (default: first chat agent)")
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
    for name in config.pipelines.roster(CHAT_ASSISTANT):
        if name in config.agents:
            return name
    raise CliError("no chat agent is configured; set pipelines.chat_assistant or pass --agent")


def run_chat(args: argparse.Namespace) -> int:
    """Send one message and stream the answer."""
    if not args.message.strip():
        raise CliError("nothing to send: the message is empty", EXIT_USAGE)
    workspace = workspace_of(args)
    config = load(args)
    agent = pick_chat_agent(config, args.agent)
    tools = None if args.no_tools else workspace
    return asyncio.run(
        _chat(
            config,
            agent,
            args.message,
            jsonl=args.events == "jsonl",
            tools=tools,
            workspace=workspace,
        )
    )


class _Printer:
    def __init__(self, jsonl: bool) -> None:
        self.jsonl = jsonl
        self.text_open = False

    def __call__(self, event: SessionEvent) -> None:
        if self.jsonl:
            sys.stdout.write(json.dumps(event.to_json(), ensure_ascii=False) + "\n")
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
        elif isinstance(event, (FinishedEvent, FailedEvent)) and self.text_open:
            sys.stdout.write("\n")
            sys.stdout.flush()
        if isinstance(event, FinishedEvent) and event.stop_reason == REPETITION_STOP:
            print("[stopped: the answer started repeating itself]", file=sys.stderr)


async def _chat(
    config: Configuration,
    agent: str,
    message: str,
    *,
    jsonl: bool,
    tools: Path | None,
    workspace: Path,
) -> int:
    runtime = Runtime(config, on_launch_progress=print_launch_progress)
    bench = None
    printer = _Printer(jsonl)
    try:
        if tools is not None:
            bench = await give_tools(runtime, tools, ask=sys.stdin.isatty())
        try:
            session = runtime.sessions.create(agent)
        except AgentNotAvailable as exc:
            raise CliError(str(exc)) from exc
        ignore = IgnoreFilter(workspace)
        rules = RulesFinder(
            lambda: config.settings.rules, lambda: [workspace], ignore_rule(lambda _: ignore)
        )
        rules_files.set_layer(session.system_prompt, rules.find())
        if session.agent.demo:
            print(f"qodeassist-lsp: {demo_notice(session.agent)}", file=sys.stderr)
        request = session.send(user_text(message))
        try:
            async for event in request.events():
                printer(event)
        except asyncio.CancelledError:
            request.cancel()
            async for event in request.events():
                printer(event)
            raise
        terminal = await request.wait()
    finally:
        if bench is not None:
            await close_tools(bench)
        await runtime.aclose()
    if isinstance(terminal, FailedEvent):
        error = terminal.error
        print(f"qodeassist-lsp: {error.category} error: {error.message}", file=sys.stderr)
        return exit_code_for(str(error.category))
    return EXIT_OK
