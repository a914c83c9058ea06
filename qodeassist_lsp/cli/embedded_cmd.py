"""``qodeassist-lsp embedded serve|prepare``: the built-in offline model server.

``serve`` is what the bundled Embedded provider instances' ``[launch]`` tables run: it loads a
tiny model (``--bundled``: the base model for completion, the instruct model for chat; assembled
or fetched on first use) into llama.cpp and serves the OpenAI-compatible API on
loopback until SIGTERM/SIGINT or until the language server that started it exits. ``prepare``
assembles both models ahead of time and prints their paths (CI images, air-gapped installs).

Exit codes: 0 after a clean stop, 1 (SPEC §3's configuration error) for a problem the user fixes —
missing ``local`` extra, port taken, model that does not load — which the launcher reports as a
configuration error, 130 when interrupted before the server was up.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from qodeassist_lsp.cli.common import EXIT_OK, CliError
from qodeassist_lsp.cli.embedded_model import (
    BUNDLED_MODELS,
    DEFAULT_CACHE_REUSE,
    DEFAULT_CTX,
    DEFAULT_PORT,
    INSTRUCT_REQUIREMENT,
    MODEL_ID,
    EmbeddedError,
    ServeOptions,
    ensure_instruct_model,
    ensure_model,
    serve,
    with_code_vocab,
)
from qodeassist_lsp.cli.model_download import terminal_progress
from qodeassist_lsp.core.launcher.errors import EX_CONFIG


def register(commands: Any, shared: argparse.ArgumentParser) -> None:
    """Add the ``embedded`` command and its ``serve`` and ``prepare`` actions."""
    embedded = commands.add_parser(
        "embedded", parents=[shared], help="the built-in offline model server"
    )
    actions = embedded.add_subparsers(dest="embedded_action", metavar="ACTION", required=True)
    run = actions.add_parser(
        "serve", parents=[shared], help="serve the embedded model on loopback until stopped"
    )
    run.add_argument("--port", type=int, default=DEFAULT_PORT, help="default: %(default)s")
    run.add_argument("--host", default="127.0.0.1", help="default: %(default)s")
    run.add_argument(
        "--bundled",
        choices=BUNDLED_MODELS,
        default=MODEL_ID,
        help="which bundled model to serve (default: %(default)s)",
    )
    run.add_argument(
        "--model", type=Path, metavar="PATH", help="a GGUF file instead of a bundled model"
    )
    run.add_argument(
        "--threads",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="CPU threads (default: %(default)s)",
    )
    run.add_argument(
        "--ctx-size", type=int, default=DEFAULT_CTX, help="context tokens (default: %(default)s)"
    )
    run.add_argument(
        "--cache-reuse",
        type=int,
        default=DEFAULT_CACHE_REUSE,
        metavar="N",
        help="reuse cached prompt chunks of at least N tokens after a cut (llama.cpp's "
        "--cache-reuse; 0: off; default: %(default)s)",
    )
    run.add_argument(
        "--chat-template",
        metavar="NAME",
        help="'transcript' (Question/Answer lines; default for the base model), 'model' (the "
        "GGUF's own; default otherwise) or a llama.cpp built-in name",
    )
    run.add_argument(
        "--fast-head",
        action="store_true",
        help="serve the bundled Gemma from a copy whose output head is requantized Q8_0 → Q4_0 "
        "(written once): about a fifth faster tokens on a CPU, slightly worse suggestions "
        "(docs/embedded.md)",
    )
    run.add_argument(
        "--full-vocab",
        action="store_true",
        help="serve the bundled Gemma as published, with all 262,144 tokens of its output "
        "head, not the copy cut to the tokens of code (whose tokens take about 0.6x the time, "
        "with the same answers on most code; docs/embedded.md)",
    )
    run.add_argument("--verbose", action="store_true", help="llama.cpp's informational logs")
    run.set_defaults(handler=run_serve)
    prepare = actions.add_parser(
        "prepare",
        parents=[shared],
        help="assemble or fetch the embedded models now and print their paths",
    )
    prepare.set_defaults(handler=run_prepare)


def run_serve(args: argparse.Namespace) -> int:
    """Serve until stopped."""
    options = ServeOptions(
        port=args.port,
        host=args.host,
        model=args.model,
        bundled=args.bundled,
        threads=max(1, args.threads),
        ctx_size=max(256, args.ctx_size),
        cache_reuse=max(0, args.cache_reuse),
        chat_template=args.chat_template,
        code_vocab=not args.full_vocab,
        fast_head=args.fast_head,
        verbose=args.verbose,
    )
    try:
        serve(options)
    except EmbeddedError as exc:
        raise CliError(str(exc), EX_CONFIG) from exc
    return EXIT_OK


def run_prepare(args: argparse.Namespace) -> int:
    """Assemble or fetch the models (and Gemma's code-vocabulary copy) and print where they are."""
    try:
        model = ensure_model()
        print(model)
        served = with_code_vocab(model, lambda line: print(line, file=sys.stderr))
        if served != model:
            print(served)
        print(ensure_instruct_model(progress=terminal_progress(INSTRUCT_REQUIREMENT)))
    except EmbeddedError as exc:
        raise CliError(str(exc), EX_CONFIG) from exc
    return EXIT_OK
