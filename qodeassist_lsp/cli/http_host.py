"""``serve --http HOST:PORT``: the HTTP host (``http_api``) composed alone or beside the LSP.

Alone, a ``Backend`` (the one the language server uses) loads the configuration of
``--project`` (default: the current folder) and watches it; the HTTP host adds the tool kit and
the file tools itself. Beside ``--stdio``, the HTTP host gets the language server's backend,
documents, workspace folders, skills and edit manager, and runs in its event loop: an editor and
a script share one runtime. The token is printed in the page's address on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from qodeassist_lsp.cli.common import EXIT_OK, CliError, config_paths
from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT

if TYPE_CHECKING:
    from qodeassist_lsp.http_api.host import Surroundings
    from qodeassist_lsp.lsp.backend import Backend
    from qodeassist_lsp.lsp.server import QodeAssistServer


def add_arguments(serve: argparse.ArgumentParser) -> None:
    """Add the ``--http*`` options to ``serve``."""
    serve.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="serve the HTTP API and web chat (alone, or beside --stdio in one process)",
    )
    serve.add_argument(
        "--http-allow-remote",
        action="store_true",
        help="allow --http on an address other than loopback (anyone who can reach it and "
        "has the token can use your agents and tools)",
    )
    serve.add_argument(
        "--http-allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name clients may use in the Host header besides the loopback names",
    )
    serve.add_argument(
        "--http-rotate-token",
        action="store_true",
        help="replace the HTTP API's bearer token with a new one, print it and exit",
    )


def rotate(args: argparse.Namespace) -> int:
    """Write a new token; a running server accepts only the new one from now on."""
    from qodeassist_lsp.http_api.token import TokenFileUnsafe, TokenFromEnvironment, rotate_token

    try:
        token, path = rotate_token(config_paths(args).data_root)
    except (TokenFromEnvironment, TokenFileUnsafe) as exc:
        raise CliError(str(exc)) from None
    print(f"new HTTP API token written to {path}:\n{token}")
    return EXIT_OK


def bind_address(args: argparse.Namespace) -> tuple[str, int]:
    """Return ``--http``'s host and port, refusing a non-loopback host without the flag."""
    from qodeassist_lsp.http_api.safety import is_loopback

    host, _, port = str(args.http).rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise CliError(f"--http: expected HOST:PORT, got {args.http!r}", exit_code=2)
    if not is_loopback(host):
        if not args.http_allow_remote:
            raise CliError(
                f"--http {args.http}: not a loopback address; pass --http-allow-remote to "
                "serve other machines (they need the token, and traffic is not encrypted)"
            )
        print(
            f"qodeassist-lsp: WARNING: the HTTP API listens on {host}, not only on this "
            "machine; anyone with the token can run your agents and tools",
            file=sys.stderr,
        )
    return host, int(port)


def allowed_hosts(args: argparse.Namespace, bind: str) -> set[str] | None:
    """Return the names the Host header may carry (None: any, for a wildcard remote bind)."""
    from qodeassist_lsp.http_api.safety import LOOPBACK_NAMES

    names = set(LOOPBACK_NAMES) | set(args.http_allow_host)
    if bind in ("0.0.0.0", "::"):
        return names if args.http_allow_host else None
    return names | {bind}


def standalone(args: argparse.Namespace) -> int:
    """Serve the HTTP API alone until interrupted."""
    from qodeassist_lsp.lsp.backend import Backend

    project = Path(args.project).resolve() if args.project else Path.cwd()
    backend = Backend(lambda _project: config_paths(args))
    surroundings = _alone(backend, project)

    async def run() -> None:
        await backend.start(project, None)
        backend.watch()
        try:
            await companion(args, surroundings)()
        finally:
            await backend.aclose()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())
    return EXIT_OK


def _alone(backend: Backend, project: Path) -> Surroundings:
    from qodeassist_lsp.http_api.host import Surroundings

    return Surroundings(
        source=backend,
        folders=lambda: [project],
        status=lambda: backend.status([CHAT_ASSISTANT]),
    )


def beside(server: QodeAssistServer) -> Surroundings:
    """Return the surroundings of an HTTP host sharing ``server``'s runtime."""
    from qodeassist_lsp.http_api.host import Surroundings

    return Surroundings(
        source=server.backend,
        folders=server.workspace_folders,
        status=server.status,
        documents=server.documents,
        bench=server.workbench,
    )


def companion(
    args: argparse.Namespace, surroundings: Surroundings, *, beside_lsp: bool = False
) -> Callable[[], Awaitable[None]]:
    """Return the coroutine function that serves HTTP (printing the address once it listens)."""
    from qodeassist_lsp.http_api.app import ListenFailed, build_app, serve
    from qodeassist_lsp.http_api.host import HttpHost
    from qodeassist_lsp.http_api.token import HttpToken, TokenFileUnsafe

    bind, port = bind_address(args)
    try:
        token = HttpToken(config_paths(args).data_root)
    except TokenFileUnsafe as exc:
        raise CliError(f"--http: {exc}") from None
    if token.tightened is not None:
        print(
            f"qodeassist-lsp: {token.path} was open to other users (mode {token.tightened:04o}); "
            "it is now 0600 — rotate the token if others may have read it",
            file=sys.stderr,
        )
    app = build_app(HttpHost(surroundings), token.current, hosts=allowed_hosts(args, bind))
    shown = f"[{bind}]" if ":" in bind else bind

    def started() -> None:
        print(
            f"qodeassist-lsp HTTP API and web chat: http://{shown}:{port}/#token={token.current()}"
            f"\n(token from {token.source}; rotate it with `qodeassist-lsp serve "
            "--http-rotate-token`)",
            file=sys.stderr,
            flush=True,
        )

    async def run() -> None:
        try:
            await serve(app, bind, port, started)
        except ListenFailed as exc:
            if not beside_lsp:
                raise CliError(f"--http: {exc} (is the port in use?)") from None
            # Beside an editor the language server goes on without the HTTP API.
            print(f"qodeassist-lsp: --http: {exc}; the HTTP API is off", file=sys.stderr)

    return run
