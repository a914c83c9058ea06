"""``qodeassist-lsp [serve] [--stdio | --tcp HOST:PORT | --ws HOST:PORT] [--http HOST:PORT]``.

Runs the language server; ``--http`` adds the HTTP API (`http_host`), alone or beside stdio.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from typing import Any

from qodeassist_lsp.cli.common import EXIT_OK, CliError, apply_logging


def register(commands: Any, shared: argparse.ArgumentParser) -> None:
    """Add the ``serve`` command."""
    serve = commands.add_parser("serve", parents=[shared], help="run the language server")
    _add_arguments(serve)


def build_parser(shared: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Return a parser for ``serve`` alone (the fast path editors take)."""
    parser = argparse.ArgumentParser(prog="qodeassist-lsp serve", parents=[shared])
    _add_arguments(parser)
    return parser


def _add_arguments(serve: argparse.ArgumentParser) -> None:
    transport = serve.add_mutually_exclusive_group()
    transport.add_argument(
        "--stdio", action="store_true", help="speak LSP on stdin/stdout (default)"
    )
    transport.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP socket")
    transport.add_argument("--ws", metavar="HOST:PORT", help="listen for WebSocket clients")
    from qodeassist_lsp.cli import http_host

    http_host.add_arguments(serve)
    serve.set_defaults(handler=serve_server)


def _address(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit():
        raise CliError(f"expected HOST:PORT, got {value!r}", exit_code=2)
    return host, int(port)


def serve_server(args: argparse.Namespace) -> int:
    """Run the server on the chosen transport until the client exits."""
    from qodeassist_lsp.cli import http_host

    if getattr(args, "http_rotate_token", False):
        return http_host.rotate(args)
    http = getattr(args, "http", None)
    tcp, ws = getattr(args, "tcp", None), getattr(args, "ws", None)
    if http and (tcp or ws):
        raise CliError("--http runs alone or beside --stdio, not with --tcp or --ws", 2)
    if http and not getattr(args, "stdio", False):
        return http_host.standalone(args)
    # Start-up cost and order: every other command imports this module and needs no pygls, and
    # lsprotocol must first be imported inside the startup cache below.
    from qodeassist_lsp.lsp.startup_cache import attrs_code_cache, default_cache_path

    # lsprotocol.types builds ~550 attrs classes whose generated methods come from the startup
    # cache (see startup_cache.py), so its first import must happen here, before pygls' below.
    # Only this import: a frozen attrs class (cattrs has one) hashes with a per-process seed in
    # its generated source, would miss on every start and so rewrite the file every time.
    with attrs_code_cache(default_cache_path()):
        import lsprotocol.types  # noqa: F401

    from qodeassist_lsp.lsp.app import create_server
    from qodeassist_lsp.lsp.stdio import serve_stdio

    server = create_server()
    server.backend.listeners.append(apply_logging)  # after each configuration load
    if tcp:
        server.start_tcp(*_address(tcp))
    elif ws:
        if importlib.util.find_spec("websockets") is None:
            raise CliError("serve --ws needs the ws extra: pip install 'qodeassist-lsp[ws]'")
        server.start_ws(*_address(ws))
    else:
        if sys.stdin.isatty():
            print(
                "qodeassist-lsp: speaking LSP on stdin/stdout (run `qodeassist-lsp --help` for "
                "the other commands)",
                file=sys.stderr,
            )
        companion = None
        if http:  # a port in use is one line on stderr; the editor keeps its language server
            companion = http_host.companion(args, http_host.beside(server), beside_lsp=True)
        serve_stdio(server, sys.stdin.buffer, sys.stdout.buffer, companion)
        # LSP: exit code 0 after `shutdown`, 1 when the session ended without one.
        return EXIT_OK if server.shutdown_received else 1
    return EXIT_OK
