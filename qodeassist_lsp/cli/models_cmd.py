"""``qodeassist-lsp models PROVIDER``: the models a provider instance offers, one per line."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from qodeassist_lsp.cli.common import EXIT_OK, EXIT_PROVIDER, CliError, load, provider_named
from qodeassist_lsp.core.runtime import Runtime
from qodeassist_lsp.wire.errors import CategorizedError


def register(commands: Any, shared: argparse.ArgumentParser) -> None:
    """Add the ``models`` command."""
    models = commands.add_parser("models", parents=[shared], help="list a provider's models")
    models.add_argument("provider", metavar="PROVIDER", help="provider instance name")
    models.set_defaults(handler=list_models)


def list_models(args: argparse.Namespace) -> int:
    """Print every model id of the provider instance."""
    config = load(args)
    return asyncio.run(_list(Runtime(config), provider_named(config, args.provider)))


async def _list(runtime: Runtime, name: str) -> int:
    try:
        models = await runtime.provider(name).list_models()
    except CategorizedError as exc:  # the request, or the [launch] server first
        raise CliError(f"{exc.info.category} error: {exc.info.message}", EXIT_PROVIDER) from exc
    finally:
        await runtime.aclose()
    for model in models:
        print(model)
    return EXIT_OK
