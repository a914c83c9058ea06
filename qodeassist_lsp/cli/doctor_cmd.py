"""``qodeassist-lsp doctor [--json]``: probe every pipeline agent; exit 1 if a pipeline fails.

Log lines the probes cause (a retried model list, a server that did not answer) are held back
while the doctor runs and written to stderr after the report, so they never land between the
progress lines or inside the report; a log file still gets them as they happen.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
from collections.abc import Iterator
from typing import Any

from qodeassist_lsp.cli.common import EXIT_CONFIG, EXIT_OK, load, print_json, print_launch_progress
from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.context.ignore import IgnoreFilter
from qodeassist_lsp.context.rules_files import RulesFinder, ignore_rule
from qodeassist_lsp.core.doctor import DEFAULT_TIMEOUT_S, Doctor, DoctorReport
from qodeassist_lsp.core.doctor_text import format_report
from qodeassist_lsp.core.runtime import Runtime
from qodeassist_lsp.core.setup.hint import find_setup_hint


def register(commands: Any, shared: argparse.ArgumentParser) -> None:
    """Add the ``doctor`` command."""
    doctor = commands.add_parser(
        "doctor",
        parents=[shared],
        help="probe every pipeline agent: reachable, key, model, FIM, speed",
    )
    doctor.add_argument("--json", action="store_true", help="machine-readable report")
    doctor.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"limit per probe (default {DEFAULT_TIMEOUT_S:g})",
    )
    doctor.set_defaults(handler=run_doctor)


def run_doctor(args: argparse.Namespace) -> int:
    """Probe, print the report, and return 1 when a pipeline has no working agent."""
    if args.timeout <= 0:
        args.timeout = DEFAULT_TIMEOUT_S
    config = load(args)
    with _held_logs() as held:
        report = asyncio.run(
            _run(Runtime(config, on_launch_progress=print_launch_progress), args.timeout)
        )
        report.rules = _rules(config)
        report.codebase = _codebase(config)
        hint = None if args.json else asyncio.run(find_setup_hint(config))
    if args.json:
        print_json(report.to_json())
    else:
        sys.stdout.write(format_report(report))
        if hint:
            sys.stdout.write(f"\n{hint}\n")
    sys.stdout.flush()
    held.replay()
    return EXIT_OK if report.ok else EXIT_CONFIG


def _rules(config: Configuration) -> dict[str, Any] | None:
    """Return the project's rules files in effect (None without a project folder)."""
    project = config.paths.project
    if project is None:
        return None
    ignore = IgnoreFilter(project)
    settings = config.settings.rules
    finder = RulesFinder(lambda: settings, lambda: [project], ignore_rule(lambda _root: ignore))
    return finder.find().status(settings.max_chars)


def _codebase(config: Configuration) -> dict[str, Any] | None:
    """Return the project's codebase index as stored (None without a project folder)."""
    from qodeassist_lsp.context.codebase.index import database_path_for
    from qodeassist_lsp.features.codebase.settings import CODEBASE_SETTINGS

    project = config.paths.project
    if project is None:
        return None
    if not config.settings.section(CODEBASE_SETTINGS).enabled:
        return {"state": "off"}
    database = database_path_for(config.paths.data_root, project)
    try:
        size = database.stat().st_size
    except OSError:
        size = 0
    state = "stored" if size else "not built yet (an editor, ACP, HTTP or mcp serve builds it)"
    folder = {"root": str(project), "state": state, "database": str(database) if size else ""}
    return {"state": state, "folders": [{**folder, "size": size}]}


class _HeldLogs(logging.Handler):
    """Keeps the records meant for the terminal until the report is out."""

    def __init__(self, targets: list[logging.Handler]) -> None:
        super().__init__(logging.NOTSET)
        self.targets = targets
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        """Keep ``record``."""
        self.records.append(record)

    def replay(self) -> None:
        """Write the kept records through the terminal handlers, in order."""
        for record in self.records:
            for handler in self.targets:
                if record.levelno >= handler.level:
                    handler.handle(record)
        self.records.clear()


@contextlib.contextmanager
def _held_logs() -> Iterator[_HeldLogs]:
    """Swap the terminal log handlers (not log files) for one that holds their records."""
    root = logging.getLogger("qodeassist")
    terminal: list[logging.Handler] = [
        h
        for h in root.handlers
        if isinstance(h, logging.StreamHandler) and not isinstance(h, logging.FileHandler)
    ]
    held = _HeldLogs(terminal)
    for handler in terminal:
        root.removeHandler(handler)
    root.addHandler(held)
    failed = True
    try:
        yield held
        failed = False
    finally:
        root.removeHandler(held)
        for handler in terminal:
            root.addHandler(handler)
        if failed:
            held.replay()  # the run failed: its logs say why


async def _run(runtime: Runtime, limit: float) -> DoctorReport:
    try:
        return await Doctor(runtime, limit).run()
    finally:
        await runtime.aclose()
