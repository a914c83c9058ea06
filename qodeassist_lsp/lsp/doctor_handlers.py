"""The ``qodeassist.doctor`` command: the doctor report of ``qodeassist-lsp doctor --json``."""

from __future__ import annotations

from typing import Any

from qodeassist_lsp.lsp import methods
from qodeassist_lsp.lsp.rules_handlers import finder_of
from qodeassist_lsp.lsp.server import QodeAssistServer


async def doctor(ls: QodeAssistServer, *args: Any) -> dict[str, Any]:
    """Probe every pipeline agent and answer the doctor report (JSON and text)."""
    # Imported on first use: the doctor brings the core runtime, part of the 450-650 ms of
    # feature imports measured before `initialize` (see chat_handlers).
    from qodeassist_lsp.core.doctor import DEFAULT_TIMEOUT_S, Doctor
    from qodeassist_lsp.core.doctor_text import format_report
    from qodeassist_lsp.lsp.params import DoctorParams, parse

    limit = parse(DoctorParams, args[0] if args else None).timeout or DEFAULT_TIMEOUT_S
    report = await Doctor(await ls.backend.runtime(), limit).run()
    report.rules = finder_of(ls).find().status(ls.backend.settings.rules.max_chars)
    table = ls.ports.features
    if table is not None and "codebase" in table.features:
        report.codebase = table.status().get("codebase")
    return {**report.to_json(), "text": format_report(report)}


def setup(server: QodeAssistServer) -> None:
    """Register the doctor command on ``server``."""
    server.command(methods.CMD_DOCTOR)(doctor)
