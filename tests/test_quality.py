"""Static checks run as tests, so the one test command enforces them: layers, lint, types."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.quality


def _tool(name: str) -> str:
    found = Path(sys.executable).with_name(name)
    if found.exists():
        return str(found)
    located = shutil.which(name)
    if located is None:
        pytest.fail(f"{name} is not installed; install the test extra: pip install -e '.[test]'")
    return located


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )


def test_import_layers() -> None:
    result = _run(_tool("lint-imports"), "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_lint() -> None:
    result = _run(_tool("ruff"), "check", "qodeassist_lsp", "tests", "benchmarks")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format() -> None:
    result = _run(_tool("ruff"), "format", "--check", "qodeassist_lsp", "tests", "benchmarks")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict() -> None:
    result = _run(_tool("mypy"), "--strict", "qodeassist_lsp")
    assert result.returncode == 0, result.stdout + result.stderr


def test_tests_read_nothing_outside_the_repository() -> None:
    """A user's clone has nothing beside it: no test, benchmark or CI file reaches for ``shared/``."""
    outside = re.compile(r"\.\./shared|parent\s*/\s*[\"']shared[\"']|[\"']shared[\"']\s*/")
    offenders = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for folder in ("tests", "benchmarks", ".ci")
        for path in sorted((ROOT / folder).rglob("*"))
        if path.is_file()
        and path.suffix in {".py", ".sh", ".lua", ".el", ".ts", ".json", ""}
        and "fixtures" not in path.parts
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if outside.search(line)
    ]
    assert not offenders, "\n".join(offenders)
    assert (ROOT / "tests" / "fixtures" / "wire" / "SOURCES.md").is_file()
