"""``qodeassist-lsp config get | set | unset``: read and write ``settings.toml`` from a shell.

Writes go through ``config.settings_writer`` (tomlkit: comments and order survive; validated
like the file before anything is written). ``--project`` on these commands selects the
project's ``.qodeassist/settings.toml`` instead of the user's file; it takes no value (a value
would swallow the KEY), the project folder is ``--project-dir DIR`` (default: the current
folder).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import tomlkit

from qodeassist_lsp.cli.common import EXIT_OK, CliError, config_paths, print_json, scoped_options
from qodeassist_lsp.config.settings_loader import load_settings
from qodeassist_lsp.config.settings_writer import (
    Scope,
    SettingsFile,
    SettingsWriteError,
    effective_value,
    format_value,
    parse_key,
    parse_value,
    settings_path,
)
from qodeassist_lsp.lsp.sections import SETTINGS_MODEL


def register(commands: Any, shared: argparse.ArgumentParser) -> None:
    """Add the ``config`` command group (its ``--project`` is a scope, see the module doc)."""
    del shared  # its --project DIR would clash with the valueless --project scope flag below
    config = commands.add_parser("config", help="read and write settings.toml")
    sub = config.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    get = sub.add_parser(
        "get", parents=[_options()], help="print a setting's effective value (or all settings)"
    )
    get.add_argument("key", nargs="?", metavar="KEY", help="dotted key, e.g. completion.mode")
    get.add_argument("--json", action="store_true", help="print JSON")
    get.set_defaults(handler=get_setting)
    set_cmd = sub.add_parser("set", parents=[_options()], help="write a setting (validated)")
    set_cmd.add_argument("key", metavar="KEY")
    set_cmd.add_argument(
        "value", metavar="VALUE", help='a TOML value (true, 42, ["a"]); other text is a string'
    )
    set_cmd.set_defaults(handler=set_setting)
    unset = sub.add_parser("unset", parents=[_options()], help="remove a setting from the file")
    unset.add_argument("key", metavar="KEY")
    unset.set_defaults(handler=unset_setting)


def _options() -> argparse.ArgumentParser:
    return scoped_options(
        "use the project's .qodeassist/settings.toml (of --project-dir, default: here)"
    )


def _file(args: argparse.Namespace) -> SettingsFile:
    scope: Scope = "project" if args.scope_project else "user"
    paths = config_paths(args)
    try:
        path = settings_path(scope, paths.config_root, paths.project)
        return SettingsFile(path, scope, SETTINGS_MODEL)
    except SettingsWriteError as exc:
        raise CliError(str(exc)) from exc


def get_setting(args: argparse.Namespace) -> int:
    """Print the effective value of KEY (defaults ← user ← project), or of every setting."""
    paths = config_paths(args)
    settings, problems = load_settings(paths.config_root, paths.project, None, SETTINGS_MODEL)
    for problem in problems:
        print(problem.format(), file=sys.stderr)
    try:
        parts = parse_key(args.key, SETTINGS_MODEL) if args.key else ()
    except SettingsWriteError as exc:
        raise CliError(str(exc)) from exc
    value = effective_value(settings, parts)
    if args.json:
        print_json(value)
    elif parts:
        print(format_value(value))
    else:
        sys.stdout.write(tomlkit.dumps(value))
    return EXIT_OK


def set_setting(args: argparse.Namespace) -> int:
    """Write KEY = VALUE to the settings file, keeping its comments; refuse invalid values."""
    settings = _file(args)
    try:
        path = settings.update({args.key: parse_value(args.value)})
    except SettingsWriteError as exc:
        raise CliError(str(exc)) from exc
    print(f"wrote {args.key} to {path}", file=sys.stderr)
    return EXIT_OK


def unset_setting(args: argparse.Namespace) -> int:
    """Remove KEY from the settings file (the lower layers' value or the default applies)."""
    settings = _file(args)
    try:
        path = settings.update({args.key: None})
    except SettingsWriteError as exc:
        raise CliError(str(exc)) from exc
    print(f"removed {args.key} from {path}", file=sys.stderr)
    return EXIT_OK
