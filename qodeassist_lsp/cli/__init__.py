"""The ``qodeassist-lsp`` command line: argument parsing and dispatch to command modules.

Exit codes (SPEC §3): 0 ok, 1 user or configuration error, 2 usage, 3 provider or network
failure. Lines and columns given on the command line are 1-based.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from qodeassist_lsp import __version__
from qodeassist_lsp.cli import serve_cmd
from qodeassist_lsp.cli.common import EXIT_OK, CliError
from qodeassist_lsp.core.logs import LEVEL_ENV, configure_logging


def global_options(suppress: bool) -> argparse.ArgumentParser:
    """Options every command accepts, before or after the subcommand name."""
    default = argparse.SUPPRESS if suppress else None
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument(
        "--config-dir",
        metavar="DIR",
        default=default,
        help="configuration root (default: $QODEASSIST_CONFIG_DIR or the platform config dir)",
    )
    options.add_argument(
        "--project",
        "--project-dir",
        dest="project",
        metavar="DIR",
        default=default,
        help="workspace folder whose .qodeassist/ layers on top (default: the current folder)",
    )
    return options


def build_parser() -> argparse.ArgumentParser:
    """Return the parser for every subcommand."""
    parser = argparse.ArgumentParser(
        prog="qodeassist-lsp",
        description="LLM code completion, quick refactor and chat for every LSP editor.",
        parents=[global_options(suppress=False)],
    )
    parser.add_argument("--version", action="version", version=f"qodeassist-lsp {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    shared = global_options(suppress=True)
    # Start-up cost: the command modules load their layers (pydantic, httpx …) at import time;
    # the server path in main() skips them all.
    from qodeassist_lsp.cli import (
        acp_cmd,
        agents_cmd,
        chat_cmd,
        complete_cmd,
        config_cmd,
        doctor_cmd,
        embedded_cmd,
        mcp_cmd,
        memory_cmd,
        models_cmd,
        providers_cmd,
        refactor_cmd,
        secrets_cmd,
        setup_cmd,
    )

    acp_cmd.register(commands, shared)
    agents_cmd.register(commands, shared)
    chat_cmd.register(commands, shared)
    complete_cmd.register(commands, shared)
    config_cmd.register(commands, shared)
    doctor_cmd.register(commands, shared)
    embedded_cmd.register(commands, shared)
    mcp_cmd.register(commands, shared)
    memory_cmd.register(commands, shared)
    models_cmd.register(commands, shared)
    providers_cmd.register(commands, shared)
    refactor_cmd.register(commands, shared)
    secrets_cmd.register(commands, shared)
    serve_cmd.register(commands, shared)
    setup_cmd.register(commands, shared)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return the process exit code."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not arguments or arguments[0] == "serve":
        # How editors start the server: parse only `serve`, so `initialize` is answered fast.
        parser = serve_cmd.build_parser(global_options(suppress=False))
        args = parser.parse_args(arguments[1:])
    else:
        args = build_parser().parse_args(arguments)
    # Until a command loads the configuration and applies its [logging] (see common.load).
    configure_logging(os.environ.get(LEVEL_ENV) or "WARNING", sys.stderr)
    # With no command, run the server on stdio: that is how editors start language servers.
    handler = getattr(args, "handler", serve_cmd.serve_server)
    try:
        return int(handler(args))
    except CliError as exc:
        print(f"qodeassist-lsp: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`… | head`): stop quietly, like other command-line tools.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
