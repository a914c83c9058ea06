"""`BackgroundOutage`: one notice per outage, ended by a success; the fix fits the category."""

from __future__ import annotations

from qodeassist_lsp.lsp.throttle import BackgroundOutage, fix_for
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorInfo

DOWN = ErrorInfo(ErrorCategory.PROVIDER, "Embedded is unavailable (HTTP 503)")


def test_one_notice_per_outage_and_a_success_ends_it() -> None:
    outage = BackgroundOutage()
    assert outage.failed("completion", "Embedded Completion", DOWN) is True
    assert outage.failed("next edit", "Embedded Next Edit", DOWN) is False
    assert outage.failed("completion", "Embedded Completion", DOWN) is False
    assert outage.failure is not None and outage.failure["feature"] == "completion"  # the last
    assert outage.failure["reason"] == DOWN.message
    assert outage.succeeded() is True
    assert outage.failure is None
    assert outage.succeeded() is False  # no outage to end
    assert outage.failed("completion", "Embedded Completion", DOWN) is True  # a new outage


def test_the_fix_names_what_to_do() -> None:
    assert "API key" in fix_for(ErrorCategory.AUTH)
    assert "running and reachable" in fix_for(ErrorCategory.NETWORK)
    assert "agents validate" in fix_for(ErrorCategory.CONFIG)
    assert "qodeassist-lsp doctor" in fix_for(ErrorCategory.PROVIDER)
