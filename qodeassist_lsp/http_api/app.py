"""The Starlette application of ``serve --http`` and the uvicorn server that runs it.

Routes: ``POST /v1/chat/completions`` and ``GET /v1/models`` (`openai_routes`), the web chat's
``/v1/qodeassist/…`` (`chat_routes`), the features' operations
``POST /v1/qodeassist/{feature}/{op}`` (`operation_routes`), ``POST /mcp`` (the tool kit as an
MCP server over streamable HTTP: the SDK's transport around `mcp.server.build_server`, with the
headless gate of ``mcp serve``), ``GET /health`` (the ``qodeassist/status`` object with each
feature's part, as the LSP shows it) and ``GET /`` (the web chat, one static page).
`safety.Guard` stands in front of all of them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Collection
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from qodeassist_lsp.core.tools import ToolRegistry
from qodeassist_lsp.http_api import chat_routes, openai_routes, operation_routes
from qodeassist_lsp.http_api.errors import exception_handlers
from qodeassist_lsp.http_api.host import HttpHost
from qodeassist_lsp.http_api.safety import Guard
from qodeassist_lsp.wire.errors import QodeAssistError

PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
        "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'"
    ),
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
}


async def page(request: Request) -> Response:
    """Return the web chat (static: it holds no data until it has the token)."""
    text = resources.files(__package__).joinpath("static/index.html").read_text("utf-8")
    return HTMLResponse(text, headers=PAGE_HEADERS)


async def health(request: Request) -> Response:
    """Return the ``qodeassist/status`` object, the feature table's parts included."""
    host: HttpHost = request.app.state.host
    parts = host.bench.features.status() if host.bench is not None else {}
    return JSONResponse({**parts, **host.surroundings.status()})


class McpEndpoint:
    """``/mcp``: the SDK's streamable HTTP transport over the runtime's chat tools.

    The registry is filled on the first request, once the runtime exists (beside an editor it
    is built when the editor starts the server), behind the headless gate of ``mcp serve``, and
    without the file tools, as there.
    """

    def __init__(self, host: HttpHost) -> None:
        """Serve the tools of ``host``'s runtime."""
        from mcp.server.transport_security import TransportSecuritySettings

        from qodeassist_lsp.mcp.server import build_server

        self._host = host
        self.registry = ToolRegistry()
        # Host and Origin are checked by `Guard` for every route, with the names it allows.
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        self.app = build_server(self.registry).streamable_http_app(transport_security=security)
        self._filled = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Fill the registry once, then hand the request to the SDK."""
        if not self._filled:
            self._fill(await self._host.runtime())
        await self.app(scope, receive, send)

    def _fill(self, runtime: Any) -> None:
        from qodeassist_lsp.workbench.bench import offer_over_mcp

        view = self._host.surroundings.source
        offer_over_mcp(
            self.registry, runtime.contributors, lambda: view.runtime_now.configuration.settings
        )
        self._filled = True

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Run the SDK's session manager (the app's lifespan)."""
        async with self.app.router.lifespan_context(self.app):
            yield


def build_app(
    host: HttpHost,
    token: Callable[[], str],
    *,
    hosts: Collection[str] | None,
    max_body: int | None = None,
) -> ASGIApp:
    """Return the guarded application serving ``host``."""
    mcp = McpEndpoint(host)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with mcp.running():
            starting = asyncio.create_task(operation_routes.start_features(host))
            try:
                yield
            finally:
                starting.cancel()
                await asyncio.wait([starting])
                await operation_routes.close_features(host)
                await host.aclose()

    api = "/v1/qodeassist"
    routes = [
        Route("/", page, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        Route("/v1/models", openai_routes.list_models, methods=["GET"]),
        Route("/v1/chat/completions", openai_routes.chat_completions, methods=["POST"]),
        Route(f"{api}/chats", chat_routes.list_chats, methods=["GET"]),
        Route(f"{api}/chats/{{chat_id}}", chat_routes.get_chat, methods=["GET"]),
        Route(f"{api}/chats/{{chat_id}}", chat_routes.delete_chat, methods=["DELETE"]),
        Route(f"{api}/chats/{{chat_id}}/cancel", chat_routes.cancel_chat, methods=["POST"]),
        Route(f"{api}/edits/{{edit_id}}", chat_routes.act_on_edit, methods=["POST"]),
        Route(
            f"{api}/permissions/{{question_id}}", chat_routes.answer_permission, methods=["POST"]
        ),
        Route("/mcp", mcp, methods=["GET", "POST", "DELETE"]),
        Route(operation_routes.PATH, operation_routes.call_operation, methods=["POST"]),
    ]
    app = Starlette(routes=routes, exception_handlers=exception_handlers(), lifespan=lifespan)
    app.state.host = host
    if max_body is None:
        return Guard(app, token, hosts=hosts)
    return Guard(app, token, hosts=hosts, max_body=max_body)


class ListenFailed(QodeAssistError):
    """uvicorn could not start serving (the address is in use, say; it logged why)."""


SHUTDOWN_GRACE_S = 3
"""Seconds running requests get to finish once `serve` is cancelled; then they are cancelled."""


async def serve(app: ASGIApp, bind: str, port: int, started: Callable[[], None]) -> None:
    """Serve ``app`` on ``bind:port`` with uvicorn until cancelled; call ``started`` once up.

    Cancelled (beside the LSP: the editor's stdin ended), uvicorn stops as on a signal: it stops
    listening, gives requests `SHUTDOWN_GRACE_S` to finish and runs the app's lifespan shutdown
    (the HTTP chats' pending saves). Cancelling uvicorn's task instead left its lifespan task
    to be cancelled, which uvicorn logs as a ``CancelledError`` traceback. A second cancellation
    cancels it at once.
    """
    import uvicorn

    class Server(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started:
                started()

    config = uvicorn.Config(app, host=bind, port=port, log_level="warning", lifespan="on")
    server = Server(config)

    async def run() -> None:
        try:
            await server.serve()
        except SystemExit:  # uvicorn exits when it cannot bind or start
            raise ListenFailed(f"could not serve on {bind}:{port}") from None

    serving = asyncio.ensure_future(run())
    try:
        await asyncio.shield(serving)
    except asyncio.CancelledError:
        config.timeout_graceful_shutdown = SHUTDOWN_GRACE_S
        server.should_exit = True
        try:
            await asyncio.wait([serving])
        finally:
            serving.cancel()
        raise
