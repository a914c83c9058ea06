"""``qodeassist-lsp complete FILE --line L --col C [--agent A] [--json]``: one completion.

It runs the same ``CompletionService`` the language server uses, as an explicit (invoked)
request: no debounce, no suppression. Lines and columns are 1-based; columns count characters.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
from pathlib import Path
from typing import Any

from qodeassist_lsp.cli.common import (
    EXIT_OK,
    CliError,
    agent_named,
    exit_code_for,
    load,
    print_json,
    print_launch_progress,
    read_source,
)
from qodeassist_lsp.cli.tool_kit import workbench_for
from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.config.pipelines import CODE_COMPLETION
from qodeassist_lsp.core.runtime import Runtime
from qodeassist_lsp.features.completion.service import (
    CompletionRequest,
    CompletionResult,
    CompletionService,
    TriggerKind,
)


def register(commands: Any, shared: argparse.ArgumentParser) -> None:
    """Add the ``complete`` command."""
    complete = commands.add_parser(
        "complete", parents=[shared], help="complete code at a position of a file"
    )
    complete.add_argument("file", type=Path, metavar="FILE")
    complete.add_argument("--line", type=int, required=True, metavar="L", help="1-based line")
    complete.add_argument("--col", type=int, required=True, metavar="C", help="1-based column")
    complete.add_argument("--agent", metavar="A", help="agent to use instead of the routed one")
    complete.add_argument("--json", action="store_true", help="machine-readable output")
    complete.set_defaults(handler=run_complete)


def _with_agent(config: Configuration, agent: str | None) -> Configuration:
    if agent is None:
        return config
    agent = agent_named(config, agent)
    pipelines = config.pipelines.with_roster(CODE_COMPLETION, (agent,))
    return dataclasses.replace(config, pipelines=pipelines)


def run_complete(args: argparse.Namespace) -> int:
    """Complete at FILE:L:C and print the suggestion."""
    path = args.file.resolve()
    text = read_source(path)
    lines = text.split("\n")
    if not 1 <= args.line <= len(lines):
        raise CliError(f"--line {args.line} is outside {path} (1–{len(lines)})")
    if not 1 <= args.col <= len(lines[args.line - 1]) + 1:
        raise CliError(
            f"--col {args.col} is outside line {args.line} (1–{len(lines[args.line - 1]) + 1})"
        )
    config = _with_agent(load(args), args.agent)
    result = asyncio.run(_complete(config, path, text, args.line - 1, args.col - 1))
    if result.error is not None:
        category = str(result.error.category)
        raise CliError(f"{category} error: {result.error.message}", exit_code_for(category))
    if args.json:
        payload = {
            "agent": result.agent,
            "outcome": str(result.outcome),
            "elapsedMs": round(result.elapsed_ms, 1),
            "items": [
                {
                    "text": item.insert_text,
                    "line": item.line + 1,
                    "startColumn": item.start_character + 1,
                    "endColumn": item.end_character + 1,
                }
                for item in result.items
            ],
        }
        print_json(payload)
    elif result.items:
        print(result.items[0].insert_text)
    else:
        print(f"qodeassist-lsp: no suggestion ({result.reason or result.outcome})", file=sys.stderr)
    return EXIT_OK


async def _complete(
    config: Configuration, path: Path, text: str, line: int, character: int
) -> CompletionResult:
    runtime = Runtime(config, on_launch_progress=print_launch_progress)
    folder = config.paths.project or path.parent
    bench = workbench_for(runtime, folder)
    document = bench.ports.documents.open(path.as_uri(), text, 1)
    service = CompletionService(
        runtime, bench.ports.documents, ignore=bench.qodeassist_ignore(folder)
    )
    try:
        request = CompletionRequest(document, line, character, TriggerKind.INVOKED)
        return await service.complete(request)
    finally:
        service.close()
        await runtime.aclose()
