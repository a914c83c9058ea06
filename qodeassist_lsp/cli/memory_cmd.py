"""``qodeassist-lsp memory list | add | search | forget``: the persistent memory from a shell.

Entries are global (``<data root>/memory.json``) unless ``--project`` selects the project's
``.qodeassist/memory.json`` (of ``--project-dir DIR``, default the current folder); ``list``
without ``--project`` shows both scopes, and ``forget`` finds the id in either. Text that looks
like a secret is refused (exit 1).

TEXT and QUERY are the rest of the line, taken as typed (``memory add --project The tests run
with pytest -n 2``): options go before them, except the valueless ``--project`` and ``--json``,
which are also read at the end of the line.
"""

from __future__ import annotations

import argparse
from typing import Any

from qodeassist_lsp.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    config_paths,
    print_json,
    scoped_options,
)
from qodeassist_lsp.core.memory import Memory, MemoryEntry, MemoryRefused, Scope


def register(commands: Any, shared: argparse.ArgumentParser) -> None:
    """Add the ``memory`` command group (its ``--project`` is a scope flag)."""
    del shared  # its --project DIR would clash with the --project scope flag below
    memory = commands.add_parser("memory", help="list, add, search or forget memory entries")
    sub = memory.add_subparsers(dest="memory_command", metavar="ACTION", required=True)
    listing = sub.add_parser("list", parents=[_options()], help="list the entries, oldest first")
    listing.set_defaults(handler=list_entries)
    add = sub.add_parser("add", parents=[_options()], help="remember TEXT (the rest of the line)")
    add.add_argument("text", nargs=argparse.REMAINDER, metavar="TEXT")
    add.set_defaults(handler=add_entry)
    search = sub.add_parser("search", parents=[_options()], help="the entries similar to QUERY")
    search.add_argument("query", nargs=argparse.REMAINDER, metavar="QUERY")
    search.set_defaults(handler=search_entries)
    forget = sub.add_parser("forget", parents=[_options()], help="remove the entry ID")
    forget.add_argument("id", metavar="ID")
    forget.set_defaults(handler=forget_entry)


_TRAILING_FLAGS = {"--project": "scope_project", "--json": "json"}
"""The valueless options also read after TEXT (``memory add "Use tabs" --project``)."""


def _options() -> argparse.ArgumentParser:
    return scoped_options(
        "the project's memory: .qodeassist/memory.json of --project-dir (default: here)",
        json_flag=True,
    )


def _words(args: argparse.Namespace, words: list[str], what: str) -> str:
    """Return the rest of the line as one text, after taking the trailing valueless options."""
    words = list(words)
    while words and words[-1] in _TRAILING_FLAGS:
        setattr(args, _TRAILING_FLAGS[words.pop()], True)
    text = " ".join(words)
    if not text.strip():
        raise CliError(f"give the {what} after the options", EXIT_USAGE)
    return text


def _memory(args: argparse.Namespace) -> Memory:
    return Memory.of(config_paths(args))


def _print(args: argparse.Namespace, entries: list[MemoryEntry]) -> int:
    if args.json:
        print_json([e.to_json() for e in entries])
    elif not entries:
        print("no memory entries")
    for entry in [] if args.json else entries:
        print(f"{entry.id}  {entry.scope:<7}  {entry.created}  {entry.text}")
    return EXIT_OK


def list_entries(args: argparse.Namespace) -> int:
    """Print the entries (both scopes, or the project's with ``--project``)."""
    scope: Scope | None = "project" if args.scope_project else None
    try:
        return _print(args, _memory(args).entries(scope))
    except MemoryRefused as exc:
        raise CliError(str(exc)) from exc


def add_entry(args: argparse.Namespace) -> int:
    """Store TEXT; refuse empty or secret-looking text."""
    text = _words(args, args.text, "TEXT")
    scope: Scope = "project" if args.scope_project else "global"
    try:
        entry = _memory(args).add(text, "cli", scope)
    except MemoryRefused as exc:
        raise CliError(str(exc)) from exc
    return _print(args, [entry])


def search_entries(args: argparse.Namespace) -> int:
    """Print the entries most similar to QUERY, best first."""
    query = _words(args, args.query, "QUERY")
    return _print(args, _memory(args).search(query))


def forget_entry(args: argparse.Namespace) -> int:
    """Remove the entry ID from whichever scope holds it."""
    try:
        entry = _memory(args).forget(args.id)
    except MemoryRefused as exc:
        raise CliError(str(exc)) from exc
    print(f"forgot {entry.id}: {entry.text}")
    return EXIT_OK
