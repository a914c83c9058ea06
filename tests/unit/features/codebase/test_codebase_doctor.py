"""The doctor's lines of the codebase index."""

from __future__ import annotations

from qodeassist_lsp.core.doctor import DoctorReport
from qodeassist_lsp.core.doctor_text import format_codebase, format_report


def test_the_index_line_names_state_counts_and_database() -> None:
    part = {
        "state": "ready",
        "files": 12,
        "symbols": 40,
        "folders": [
            {
                "root": "/p",
                "state": "ready",
                "database": "/d/index/p-1.sqlite3",
                "size": 3 * 1024 * 1024,
                "error": None,
            }
        ],
    }
    assert format_codebase(part) == [
        "codebase index: ready — 12 files, 40 symbols",
        "  /p: ready, database 3.0 MiB at /d/index/p-1.sqlite3",
    ]
    report = DoctorReport(agents=[], pipelines={}, codebase=part)
    assert "codebase index: ready" in format_report(report)
    assert report.to_json()["codebase"] == part


def test_an_index_switched_off_or_failed_says_so() -> None:
    assert format_codebase({"state": "off"}) == ["codebase index: off ([codebase] enabled = false)"]
    failed = {"state": "failed", "folders": [{"root": "/p", "state": "failed", "error": "disk"}]}
    assert format_codebase(failed) == ["codebase index: failed", "  /p: failed", "    error: disk"]
