"""The QodeAssist output channel in a real VS Code: the server's log lines at their own level,
and the LSP messages when ``qodeassist.trace.server`` is on (the session sets ``messages``).

VS Code writes each log output channel to ``<user data>/logs/<session>/exthost<N>/<extension
id>/QodeAssist.log`` with the level of each line, which is what the Output view shows.
"""

from __future__ import annotations

import re

from tests.e2e.vscode.real.conftest import VSCode
from tests.support.vscode_page import Workbench
from tests.support.vscode_web import wait_until


def test_server_log_lines_keep_their_level_and_the_trace_is_shown(
    workbench: Workbench, vscode: VSCode
) -> None:
    channel = vscode.output_channel()
    assert channel is not None
    text = wait_until(
        lambda: "configuration loaded" in (t := channel.read_text()) and t,
        "the server's start-up lines in the output channel",
    )
    # The server's INFO line is an [info] line, without the server's own time stamp and level.
    assert re.search(r"\[info\] qodeassist\.server: configuration loaded: \d+ agents", text), text
    assert not re.search(r"\[error\].* (INFO|DEBUG) ", text), text
    # qodeassist.trace.server = messages: the LSP traffic is in the channel at its default level.
    assert "Sending request 'initialize - (0)'" in text, text
    assert "Received response 'qodeassist/status" in text, text
