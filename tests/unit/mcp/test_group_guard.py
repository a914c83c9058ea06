"""group_guard: the server's exit stops everything it started; its exit code is passed on."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from qodeassist_lsp.mcp import group_guard
from tests.support.processes import gone

pytestmark = pytest.mark.skipif(os.name != "posix", reason="process groups")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_server_that_exits_takes_its_background_children_with_it() -> None:
    script = "sleep 600 & echo $!; read line; exit 3"  # a helper, then serve until stdin ends
    guard = subprocess.Popen(
        [sys.executable, "-I", group_guard.__file__, "sh", "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert guard.stdout is not None and guard.stdin is not None
    helper = int(guard.stdout.readline())
    assert not gone(helper)
    guard.stdin.close()  # what the SDK does first at shutdown
    assert guard.wait(10) == 3
    guard.stdout.close()
    deadline = time.monotonic() + 5
    while not gone(helper) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert gone(helper)


def test_a_program_that_cannot_start_is_exit_code_127() -> None:
    done = subprocess.run(
        [sys.executable, "-I", group_guard.__file__, "qa-no-such-program"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 127 and "cannot start qa-no-such-program" in done.stderr
