"""The ``qodeassist.doctor`` command: the doctor report of ``qodeassist-lsp doctor --json``."""

from __future__ import annotations

from typing import Any

from qodeassist_lsp.lsp import methods
from qodeassist_lsp.lsp.errors import InvalidParams
from qodeassist_lsp.lsp.server import QodeAssistServer


def _timeout(args: tuple[Any, ...]) -> float | None:
    options = args[0] if args else None
    if options is None:
        return None
    value = options.get("timeout") if isinstance(options, dict) else None
    if not isinstance(options, dict) or (
        value is not None
        and (isinstance(value, bool) or not isinstance(value, int | float) or value <= 0)
    ):
        raise InvalidParams('qodeassist.doctor takes [] or [{"timeout": seconds > 0}]')
    return float(value) if value is not None else None


def setup(server: QodeAssistServer) -> None:
    """Register the doctor command on ``server``."""

    @server.command(methods.CMD_DOCTOR)
    async def doctor(ls: QodeAssistServer, *args: Any) -> dict[str, Any]:
        # Imported on first use: the doctor brings the core runtime, part of the 450-650 ms of
        # feature imports measured before `initialize` (see chat_handlers).
        from qodeassist_lsp.core.doctor import DEFAULT_TIMEOUT_S, Doctor
        from qodeassist_lsp.core.doctor_text import format_report

        limit = _timeout(args) or DEFAULT_TIMEOUT_S
        report = await Doctor(await ls.backend.runtime(), limit).run()
        return {**report.to_json(), "text": format_report(report)}
