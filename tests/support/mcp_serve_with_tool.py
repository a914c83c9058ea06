"""``qodeassist-lsp mcp serve`` with two test tools added, for the SDK-client end-to-end tests.

Run as ``python -m tests.support.mcp_serve_with_tool mcp serve [--stdio | --port N]
--workspace DIR``: the real command (`run_serve`), plus ``read_text`` (read: a file confined to
the workspace through the package's one resolver) and ``write_note`` (write: changes nothing),
since the tool kit is not part of this package yet.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from qodeassist_lsp.cli import build_parser
from qodeassist_lsp.cli.mcp_cmd import run_serve
from qodeassist_lsp.config.confinement import Confinement
from qodeassist_lsp.config.pipelines import PipelineSpec
from qodeassist_lsp.core.tools import PermissionClass, ToolContext, ToolOutput, ToolRegistry
from qodeassist_lsp.wire.tools import ToolSpec

PATH_SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


class ReadText:
    permission: PermissionClass = "read"
    spec = ToolSpec("read_text", "Read a text file of the workspace.", PATH_SCHEMA)

    def __init__(self, workspace: Path) -> None:
        self.confinement = Confinement.of([workspace])
        self.workspace = workspace

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        path = self.confinement.for_read(arguments["path"], self.workspace)
        return ToolOutput(path.read_text(encoding="utf-8"))


class WriteNote:
    permission: PermissionClass = "write"
    spec = ToolSpec("write_note", "Pretend to write a note.", {"type": "object"})

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        return ToolOutput("written")


def main() -> int:
    args = build_parser().parse_args(sys.argv[1:])
    workspace = Path(args.workspace).resolve()

    def contribute(registry: ToolRegistry, pipeline: PipelineSpec) -> None:
        registry.register(ReadText(workspace))
        registry.register(WriteNote())

    return run_serve(args, extra=[contribute])


if __name__ == "__main__":
    sys.exit(main())
