"""``qodeassist-lsp doctor [--json]``: probe every pipeline agent; exit 1 if a pipeline fails."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from qodeassist_lsp.cli.common import EXIT_CONFIG, EXIT_OK, load, print_json, print_launch_progress
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
    report = asyncio.run(
        _run(Runtime(config, on_launch_progress=print_launch_progress), args.timeout)
    )
    if args.json:
        print_json(report.to_json())
    else:
        sys.stdout.write(format_report(report))
        hint = asyncio.run(find_setup_hint(config))
        if hint:
            sys.stdout.write(f"\n{hint}\n")
    return EXIT_OK if report.ok else EXIT_CONFIG


async def _run(runtime: Runtime, limit: float) -> DoctorReport:
    try:
        return await Doctor(runtime, limit).run()
    finally:
        await runtime.aclose()
