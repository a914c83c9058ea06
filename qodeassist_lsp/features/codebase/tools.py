"""The chat tools of the index: ``search_codebase`` and ``find_definition`` (read class).

Both read the `CodebaseService` of the door's workbench, so every door's chat (LSP, ACP, HTTP,
``mcp serve``, the CLI) offers them while ``[codebase] enabled`` holds. Paths are shown relative
to their workspace folder and lines are 1-based, as in every tool; each snippet is cut to
`MAX_SNIPPET_LINES` lines and the whole answer to the tool output cap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from pydantic import Field

from qodeassist_lsp.config.pipelines import PipelineSpec
from qodeassist_lsp.core.tools import ToolContext, ToolOutput, ToolRegistry, cap_output
from qodeassist_lsp.features.codebase.service import CodebaseService, Found, Hit
from qodeassist_lsp.tools.base import KitTool, ToolArguments

MAX_SNIPPET_LINES: Final = 60
MAX_DEFINITIONS: Final = 5
BUILD_WAIT_S: Final = 10.0
"""How long a call waits for a build under way before it searches what is indexed so far."""


def fence_for(text: str) -> str:
    """Return a code fence longer than any run of backticks in ``text``."""
    return "````" if "```" in text else "```"


def hit_heading(hit: Hit) -> str:
    """Return ``path:first-last (kind name)`` of a hit, lines 1-based."""
    snippet = hit.snippet
    what = f" ({snippet.kind} {snippet.name})" if snippet.name else ""
    return f"{snippet.path}:{snippet.start_line + 1}-{snippet.end_line + 1}{what}"


def hit_text(hit: Hit, max_lines: int = MAX_SNIPPET_LINES) -> str:
    """Return a hit as a heading and a fenced snippet (cut to ``max_lines``)."""
    lines = hit.snippet.text.splitlines()
    body = "\n".join(lines[:max_lines])
    if len(lines) > max_lines:
        body += f"\n… ({len(lines) - max_lines} more lines)"
    fence = fence_for(body)
    language = hit.path.suffix.lstrip(".")
    return f"{hit_heading(hit)}\n{fence}{language}\n{body}\n{fence}"


def found_text(found: Found) -> str:
    """Return a definition as its place, signature and summary."""
    d = found.definition
    container = f" in {d.container}" if d.container else ""
    head = f"{d.kind} {d.name}{container} — {d.path}:{d.start_line + 1}-{d.end_line + 1}"
    fence = fence_for(d.summary)
    language = found.path.suffix.lstrip(".")
    return f"{head}\n{fence}{language}\n{d.summary or d.signature}\n{fence}"


class SearchCodebaseArgs(ToolArguments):
    """Arguments of ``search_codebase``."""

    query: str = Field(
        min_length=1,
        description="What to find, in words or identifiers, e.g. 'where is the config parsed' "
        "or 'parse_config'.",
    )
    limit: int | None = Field(
        default=None, ge=1, le=50, description="At most this many snippets. Optional."
    )


class SearchCodebaseTool(KitTool[SearchCodebaseArgs]):
    """Search the project's index."""

    name = "search_codebase"
    description = (
        "Search the project's code index (functions, classes, methods, text) for a question or "
        "identifiers, best match first. Returns snippets with their file and 1-based lines. "
        "Use it to find where something is implemented before reading files."
    )
    permission = "read"
    arguments = SearchCodebaseArgs

    def __init__(self, service: Callable[[], CodebaseService | None]) -> None:
        """Search the index of ``service()``."""
        super().__init__()
        self._service = service

    async def call(self, args: SearchCodebaseArgs, context: ToolContext) -> ToolOutput:
        """Return the best snippets."""
        service = self._service()
        if service is None:
            return ToolOutput("Error: the codebase index is off ([codebase] enabled)", True)
        complete = await service.ready(BUILD_WAIT_S)
        hits = service.search(args.query, args.limit)
        note = "" if complete else " (the index is still being built: results may be incomplete)"
        if not hits:
            return ToolOutput(f"No snippet matches {args.query!r}{note}.")
        parts = [f"{len(hits)} snippets for {args.query!r}, best first{note}:"]
        parts += [hit_text(hit) for hit in hits]
        return ToolOutput(cap_output("\n\n".join(parts)))


class FindDefinitionArgs(ToolArguments):
    """Arguments of ``find_definition``."""

    symbol: str = Field(
        min_length=1,
        description="The name to look up: 'Class', 'function', 'CONSTANT' or 'Class.method'.",
    )


class FindDefinitionTool(KitTool[FindDefinitionArgs]):
    """Find where a symbol is defined."""

    name = "find_definition"
    description = (
        "Find where a function, class, method, module-level constant or type alias is defined in "
        "the project ('Class', 'func', 'CONSTANT' or 'Class.method'). Returns the file, 1-based "
        "lines, signature and a summary (a class's members' signatures)."
    )
    permission = "read"
    arguments = FindDefinitionArgs

    def __init__(self, service: Callable[[], CodebaseService | None]) -> None:
        """Look names up in the index of ``service()``."""
        super().__init__()
        self._service = service

    async def call(self, args: FindDefinitionArgs, context: ToolContext) -> ToolOutput:
        """Return the definitions found."""
        service = self._service()
        if service is None:
            return ToolOutput("Error: the codebase index is off ([codebase] enabled)", True)
        await service.ready(BUILD_WAIT_S)
        found = service.definitions(args.symbol, MAX_DEFINITIONS)
        if not found:
            return ToolOutput(
                f"No definition of {args.symbol!r} in the index; try search_codebase."
            )
        return ToolOutput(cap_output("\n\n".join(found_text(f) for f in found)))


def contributor(
    service: Callable[[], CodebaseService | None],
) -> Callable[[ToolRegistry, PipelineSpec], None]:
    """Return the `ToolContributor` offering both tools while the index is on."""
    tools = (SearchCodebaseTool(service), FindDefinitionTool(service))

    def contribute(registry: ToolRegistry, pipeline: PipelineSpec) -> None:
        current = service()
        if current is None or not current.settings.enabled:
            return
        for tool in tools:
            registry.register(tool)

    return contribute
