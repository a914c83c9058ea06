"""Spawning the ``[launch]`` command: command lookup, variable expansion, working directory."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from qodeassist_lsp.core.launcher.errors import LaunchError
from qodeassist_lsp.wire.errors import ErrorCategory
from tests.support.tiny_launch import Tiny


async def test_missing_command_is_a_configuration_error(tiny: Tiny, launchers: list) -> None:
    launcher = tiny.launcher(command="qodeassist-no-such-server-binary")
    launchers.append(launcher)
    with pytest.raises(LaunchError) as caught:
        await launcher.ensure_ready()
    info = caught.value.info
    assert info.category is ErrorCategory.CONFIG
    assert "'qodeassist-no-such-server-binary' was not found" in info.message
    assert "[launch] command" in info.message


async def test_environment_expansion_and_default_cwd(tiny: Tiny, launchers: list) -> None:
    report = tiny.root / "report.json"
    launcher = tiny.launcher(
        "--report",
        "${REPORT_FILE}",
        "${PROVIDER_NAME}-${HOME}-${NOT_SET_ANYWHERE}",
        env={"REPORT_FILE": str(report), "EXTRA": "1"},
        name="Tiny Local",
    )
    launchers.append(launcher)
    await launcher.ensure_ready()
    seen = json.loads(report.read_text())
    assert seen["cwd"] == str(Path.home())
    assert seen["env"]["PROVIDER_NAME"] == "Tiny Local" and seen["env"]["EXTRA"] == "1"
    assert seen["env"]["QODEASSIST_OWNER_PID"] == str(os.getpid())
    assert seen["argv"][-1] == f"Tiny Local-{os.environ['HOME']}-${{NOT_SET_ANYWHERE}}"


async def test_cwd_is_expanded_and_checked(tiny: Tiny, launchers: list) -> None:
    launcher = tiny.launcher(cwd="${NOWHERE_DIR}/x", env={"NOWHERE_DIR": str(tiny.root / "no")})
    launchers.append(launcher)
    with pytest.raises(LaunchError) as caught:
        await launcher.ensure_ready()
    assert caught.value.info.category is ErrorCategory.CONFIG
    assert "working directory" in caught.value.info.message
