"""``mcp serve``: the tools of a session's registry offered to MCP clients (the SDK's server).

The low-level SDK ``Server`` lists the registry's tools (annotated from their permission class)
and runs ``tools/call`` through ``ToolRegistry.execute``, so the permission gate, the path
confinement of each tool and the error mapping are exactly those of chat. It is served over
stdio, or over streamable HTTP at ``http://127.0.0.1:<port>/mcp`` behind a bearer token
(`BearerAuth`; the token comes from ``$QODEASSIST_MCP_TOKEN`` or a file in the data root,
created owner-only on first use).
"""

from __future__ import annotations

import itertools
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcp_types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from qodeassist_lsp import __version__
from qodeassist_lsp.core.tools import ToolContext, ToolRegistry

TOKEN_ENV = "QODEASSIST_MCP_TOKEN"
TOKEN_FILE = "mcp-token"
LOOPBACK = "127.0.0.1"
SCOPE = "mcp-serve"
"""The conversation scope tools see (per-chat state such as a todo list is shared by a run)."""


def build_server(registry: ToolRegistry) -> Server[Any]:
    """Return an SDK server offering ``registry``'s tools."""
    calls = itertools.count(1)

    async def list_tools(
        ctx: Any, params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        tools = [
            mcp_types.Tool(
                name=spec.name,
                description=spec.description,
                input_schema=spec.schema(),
                annotations=mcp_types.ToolAnnotations(
                    read_only_hint=registry.permission_of(spec.name) == "read",
                    destructive_hint=registry.permission_of(spec.name) != "read",
                ),
            )
            for spec in registry.specs()
        ]
        return mcp_types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: Any, params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        call_id = f"mcp-{next(calls)}"
        context = ToolContext(SCOPE, str(getattr(ctx, "request_id", "") or call_id), call_id)
        output = await registry.execute(params.name, params.arguments or {}, context)
        return mcp_types.CallToolResult(
            content=[mcp_types.TextContent(text=output.content)], is_error=output.is_error
        )

    return Server(
        "qodeassist-lsp",
        version=__version__,
        instructions="qodeassist-lsp's tool kit for the workspace it was started in.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(server: Server[Any]) -> None:
    """Serve over this process's stdin and stdout until the client closes them."""
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def serve_http(server: Server[Any], port: int, token: str) -> None:
    """Serve streamable HTTP on 127.0.0.1:``port`` (path ``/mcp``), requiring the bearer token."""
    import uvicorn

    app = BearerAuth(server.streamable_http_app(host=LOOPBACK), token)
    config = uvicorn.Config(app, host=LOOPBACK, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()


class BearerAuth:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>``.

    ``token`` may be a callable, read per request, so a rotated token takes effect at once.
    """

    def __init__(
        self,
        app: ASGIApp,
        token: str | Callable[[], str],
        hint: str = "see `qodeassist-lsp mcp serve`",
    ) -> None:
        self._app = app
        self._token = token if callable(token) else lambda: token
        self._hint = hint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass an authorised request (or a lifespan event) on; answer 401 otherwise."""
        if scope["type"] == "http":
            given = dict(scope.get("headers", ())).get(b"authorization", b"")
            expected = f"Bearer {self._token()}".encode()
            if not secrets.compare_digest(given, expected):
                response = JSONResponse(
                    {"error": f"a bearer token is required ({self._hint})"},
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )
                await response(scope, receive, send)
                return
        await self._app(scope, receive, send)


def server_token(
    data_root: Path, file_name: str = TOKEN_FILE, env: str = TOKEN_ENV
) -> tuple[str, str]:
    """Return the bearer token and where it came from (the env var, or the file it is in)."""
    from_env = os.environ.get(env, "").strip()
    if from_env:
        return from_env, f"${env}"
    path = data_root / file_name
    try:
        token = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        token = ""
    if not token:
        token = write_token(path)
    return token, str(path)


def write_token(path: Path) -> str:
    """Write a new random token to ``path``, readable by its owner only; return it."""
    token = secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    os.chmod(path, 0o600)  # an existing file keeps its mode through O_CREAT
    return token
