"""``qodeassist-lsp providers override NAME KEY=VALUE …``: change a provider instance's keys.

A bundled instance gets a same-name file in ``<config>/providers/`` that extends it by its own
name and sets only the given keys (``url``, ``max_concurrent`` …); an instance of your own is
changed in its own file. The change is validated by loading the configuration again; one that
does not load is undone (exit 1).
"""

from __future__ import annotations

import argparse
from typing import Any

from qodeassist_lsp.cli.common import EXIT_OK, CliError, load, provider_named
from qodeassist_lsp.config.provider_override import (
    OVERRIDABLE,
    OverrideError,
    parse_assignments,
    write_override,
)


def register(commands: Any, shared: argparse.ArgumentParser) -> None:
    """Add the ``providers`` command and its ``override`` action."""
    providers = commands.add_parser(
        "providers", parents=[shared], help="change provider instances (bundled ones included)"
    )
    actions = providers.add_subparsers(dest="providers_action", metavar="ACTION", required=True)
    override = actions.add_parser(
        "override",
        parents=[shared],
        help="set keys of a provider instance (e.g. url=http://localhost:11435) in your config",
    )
    override.add_argument("name", metavar="NAME", help="the provider instance")
    override.add_argument(
        "assignments",
        nargs="+",
        metavar="KEY=VALUE",
        help=f"keys to set ({', '.join(OVERRIDABLE)}); VALUE a TOML value, else a string",
    )
    override.set_defaults(handler=run_override)


def run_override(args: argparse.Namespace) -> int:
    """Write the override, validate it, and print the file and keys."""
    config = load(args, report=False)
    instance = config.providers[provider_named(config, args.name)]
    try:
        result = write_override(instance, config.paths, parse_assignments(args.assignments))
    except OverrideError as exc:
        raise CliError(str(exc)) from exc
    print(f"{instance.name!r}: {', '.join(result.keys)} set in {result.path}")
    return EXIT_OK
