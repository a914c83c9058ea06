"""``qodeassist-lsp setup [--yes] [--json] [--probe HOST:PORT …]``: configure local servers.

Probes this machine's usual model-server ports, shows what it found and the configuration it
proposes, and writes it after a y/N question on a terminal (or at once with ``--yes``). Exit
codes: 0 done (or declined, or nothing to change), 1 a written file failed validation or a file
could not be edited, 2 usage (a ``--probe`` that is not a port on this machine), 3 no model
server answered.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from qodeassist_lsp.cli.common import (
    EXIT_CONFIG,
    EXIT_OK,
    EXIT_PROVIDER,
    EXIT_USAGE,
    CliError,
    load,
    print_json,
)
from qodeassist_lsp.config.paths import ConfigPaths
from qodeassist_lsp.core.setup.apply import SetupResult, SetupWriteError, apply_plan
from qodeassist_lsp.core.setup.plan import build_plan
from qodeassist_lsp.core.setup.probe import (
    PROBE_ENV,
    ProbeOutcome,
    ProbeTargetError,
    Target,
    default_targets,
    discover,
    parse_target,
)
from qodeassist_lsp.core.setup.proposals import SetupPlan
from qodeassist_lsp.core.setup.text import (
    NOTHING_FOUND,
    format_findings,
    format_plan,
    format_result,
)


def register(commands: Any, shared: argparse.ArgumentParser) -> None:
    """Add the ``setup`` command."""
    setup = commands.add_parser(
        "setup",
        parents=[shared],
        help="find model servers on this machine and configure agents and pipelines for them",
    )
    setup.add_argument("--yes", action="store_true", help="write the plan without asking")
    setup.add_argument(
        "--json",
        action="store_true",
        help="print findings and plan as JSON (writes only with --yes)",
    )
    setup.add_argument(
        "--probe",
        action="append",
        metavar="HOST:PORT",
        help=f"probe only this port on this machine (repeatable; default: the usual ports, "
        f"or ${PROBE_ENV})",
    )
    setup.set_defaults(handler=run_setup)


def _targets(args: argparse.Namespace) -> list[Target]:
    try:
        if args.probe:
            return [parse_target(item) for item in args.probe]
        return default_targets()
    except ProbeTargetError as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc


def run_setup(args: argparse.Namespace) -> int:
    """Probe, plan, ask, write; print what happened."""
    targets = _targets(args)
    config = load(args)
    outcomes = asyncio.run(discover(targets))
    servers = [o.server for o in outcomes if o.server is not None]
    plan = build_plan(servers, config)
    if args.json:
        return _json(args.yes, outcomes, plan, config.paths)
    sys.stdout.write(format_findings(outcomes))
    if not servers:
        sys.stdout.write("\n" + NOTHING_FOUND + "\n")
        return EXIT_PROVIDER
    sys.stdout.write("\n" + format_plan(plan))
    if not plan.writes:
        return EXIT_OK
    if not args.yes:
        if not sys.stdin.isatty():
            sys.stdout.write("Nothing written: run `qodeassist-lsp setup --yes` to write this.\n")
            return EXIT_OK
        if not _confirm():
            sys.stdout.write("Nothing written.\n")
            return EXIT_OK
    result = _apply(plan, config.paths)
    sys.stdout.write("\n" + format_result(result))
    return EXIT_CONFIG if result.errors else EXIT_OK


def _confirm() -> bool:
    sys.stdout.write("Write these changes? [y/N] ")
    sys.stdout.flush()
    try:
        answer = sys.stdin.readline()
    except KeyboardInterrupt:
        return False
    return answer.strip().casefold() in ("y", "yes")


def _apply(plan: SetupPlan, paths: ConfigPaths) -> SetupResult:
    try:
        return apply_plan(plan, paths)
    except SetupWriteError as exc:
        raise CliError(str(exc)) from exc


def _json(write: bool, outcomes: list[ProbeOutcome], plan: SetupPlan, paths: ConfigPaths) -> int:
    found = any(o.server is not None for o in outcomes)
    document: dict[str, Any] = {
        "probed": [o.to_json() for o in outcomes],
        "plan": plan.to_json(),
        "written": False,
        "changes": [],
        "problems": [],
    }
    code = EXIT_OK if found else EXIT_PROVIDER
    if write and plan.writes:
        result = _apply(plan, paths)
        document["written"] = True
        document["changes"] = [change.to_json() for change in result.changes]
        document["problems"] = [p.format() for p in result.problems]
        code = EXIT_CONFIG if result.errors else EXIT_OK
    print_json(document)
    return code
