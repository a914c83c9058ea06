"""What every command shares: exit codes, the error type, loading the configuration."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qodeassist_lsp.config.paths import ConfigPaths
from qodeassist_lsp.config.problems import UnknownName, resolve_name
from qodeassist_lsp.core.logs import LEVEL_ENV, apply_logging_settings
from qodeassist_lsp.wire.errors import QodeAssistError

if TYPE_CHECKING:
    from qodeassist_lsp.config.configuration import Configuration
    from qodeassist_lsp.config.secrets import SecretStore

EXIT_OK = 0
EXIT_CONFIG = 1
EXIT_USAGE = 2
EXIT_PROVIDER = 3


def exit_code_for(category: str) -> int:
    """Return the exit code of a failed request: 1 for a configuration error, else 3."""
    return EXIT_CONFIG if category == "config" else EXIT_PROVIDER


class CliError(QodeAssistError):
    """A failure to report on stderr as one line, with the exit code it maps to."""

    def __init__(self, message: str, exit_code: int = EXIT_CONFIG) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def read_source(path: Path, *, keep_newlines: bool = False) -> str:
    """Return the UTF-8 text of ``path`` (line ends kept as they are when asked), or fail."""
    try:
        with path.open(encoding="utf-8", newline="" if keep_newlines else None) as handle:
            return handle.read()
    except FileNotFoundError as exc:
        raise CliError(f"{path}: no such file") from exc
    except UnicodeDecodeError as exc:
        raise CliError(f"{path}: not UTF-8 text (byte {exc.start})") from exc
    except OSError as exc:
        raise CliError(f"{path}: {exc.strerror}") from exc


def scoped_options(project_help: str, *, json_flag: bool = False) -> argparse.ArgumentParser:
    """Return the options of a command that writes the user's or the project's file.

    ``--project`` is valueless (it must not swallow the key or text after it); the folder is
    ``--project-dir DIR``.
    """
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument(
        "--config-dir",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="configuration root (default: $QODEASSIST_CONFIG_DIR or the platform config dir)",
    )
    options.add_argument("--project", dest="scope_project", action="store_true", help=project_help)
    options.add_argument(
        "--project-dir",
        dest="project",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="the project folder (default: the current folder)",
    )
    if json_flag:
        options.add_argument("--json", action="store_true", help="print JSON")
    return options


def config_paths(args: argparse.Namespace) -> ConfigPaths:
    """Resolve the configuration roots from the global options and the environment."""
    env = dict(os.environ)
    if args.config_dir:
        env["QODEASSIST_CONFIG_DIR"] = args.config_dir
    project = Path(args.project).resolve() if args.project else Path.cwd()
    return ConfigPaths.discover(project=project, env=env)


def load(
    args: argparse.Namespace,
    extra_agent_files: list[Path] | None = None,
    *,
    report: bool = True,
) -> Configuration:
    """Load the configuration the global options point at and apply its ``[logging]``.

    With ``report``, each configuration problem (a malformed settings.toml, a broken agent file)
    is printed on stderr once per command, however often the command loads: a command that
    silently ran on defaults would hide why it behaves as it does.
    """
    # Start-up cost: pydantic and the config layer add ~220 ms to `serve`, which imports this.
    from qodeassist_lsp.config.configuration import load_configuration
    from qodeassist_lsp.config.templating import default_code_cache_path
    from qodeassist_lsp.lsp.sections import SECTIONS

    config = load_configuration(
        config_paths(args), extra_agent_files or [], None, SECTIONS, default_code_cache_path()
    )
    if report:
        reported: set[str] = vars(args).setdefault("reported_problems", set())
        for problem in config.problems:
            line = problem.format()
            if line not in reported:
                reported.add(line)
                print(f"qodeassist-lsp: {line}", file=sys.stderr)
    apply_logging(config)
    return config


def agent_named(config: Configuration, typed: str) -> str:
    """Return the loaded agent ``typed`` means (``-`` or ``--`` for ``—``, any case), or fail."""
    try:
        return resolve_name(typed, config.agents, "usable agent")
    except UnknownName as exc:
        raise CliError(f"{exc} (run `qodeassist-lsp agents validate` to see load errors)") from exc


def provider_named(config: Configuration, typed: str) -> str:
    """Return the provider instance ``typed`` means (``-`` for ``—``, any case), or fail."""
    try:
        return resolve_name(typed, config.providers, "provider instance")
    except UnknownName as exc:
        raise CliError(str(exc)) from exc


def apply_logging(config: Configuration) -> None:
    """Apply ``config``'s ``[logging]``; ``QODEASSIST_LOG_LEVEL``, when set, wins."""
    apply_logging_settings(
        config.settings.logging,
        env_level=os.environ.get(LEVEL_ENV) or None,
        base_dir=config.paths.config_root,
    )


def secrets_for(config: Configuration) -> SecretStore:
    """Return the secrets store of ``config``: env var, then ``<config>/.env``, then the keyring."""
    # Start-up cost: the keyring backends add ~50 ms to `serve`, which imports this module.
    from qodeassist_lsp.config.secrets import SecretStore

    return SecretStore(config.paths.config_root)


def print_json(value: Any) -> None:
    """Print ``value`` as indented JSON (non-ASCII text kept as it is)."""
    print(json.dumps(value, ensure_ascii=False, indent=2))


def print_launch_progress(instance: str, percent: int | None, message: str) -> None:
    """Show on stderr how far a starting model server got (the embedded model's download)."""
    if percent is not None:
        print(f"qodeassist-lsp: {instance}: {percent}% {message}", file=sys.stderr, flush=True)
