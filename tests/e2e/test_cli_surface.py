"""What the command line promises, checked on the real CLI: ``[logging]``, exit codes, refusals.

Each test runs ``python -m qodeassist_lsp`` as a subprocess against its own configuration roots
(and, where a provider is needed, the loopback replay server).
"""

from __future__ import annotations

from pathlib import Path

from tests.support.replay_server import ReplayServer, Reply
from tests.support.wire_cases import TARGETS
from tests.support.workspace import PLANTED_KEY, Workspace


# --------------------------------------------------------------------------- [logging]
def _chat_once(workspace: Workspace, replay: ReplayServer) -> None:
    target = TARGETS["openai"]
    replay.script(target.route, Reply("openai_chat/stream_text_with_usage.sse", split="events"))
    result = workspace.run("chat", "--agent", target.agent, "A question")
    assert result.returncode == 0, result.describe()


def test_logging_settings_write_the_log_file_bodies_only_with_log_requests(
    tmp_path: Path, replay: ReplayServer
) -> None:
    workspace = Workspace(tmp_path, replay.url, log_level="")
    log = tmp_path / "logs" / "lsp.log"
    workspace.write("settings.toml", f'[logging]\nlevel = "debug"\nlog_file = "{log}"\n')
    _chat_once(workspace, replay)
    text = log.read_text(encoding="utf-8")
    assert "qodeassist.wire: [" in text and "POST " in text
    assert "request body" not in text

    workspace.write(
        "settings.toml", '[logging]\nlevel = "debug"\nlog_file = "lsp2.log"\nlog_requests = true\n'
    )
    _chat_once(workspace, replay)
    text = (workspace.config / "lsp2.log").read_text(encoding="utf-8")
    assert "request body: " in text and "A question" in text and "chunk: " in text
    assert PLANTED_KEY not in text


def test_the_level_setting_quiets_stderr_and_the_environment_wins(
    tmp_path: Path, replay: ReplayServer
) -> None:
    workspace = Workspace(tmp_path, replay.url, log_level="")
    workspace.write("settings.toml", '[logging]\nlevel = "info"\n')
    target = TARGETS["openai"]
    replay.script(target.route, Reply("openai_chat/stream_text_with_usage.sse"))
    info = workspace.run("chat", "--agent", target.agent, "A question")
    assert " INFO qodeassist.wire: " in info.stderr, info.describe()

    workspace.extra_env["QODEASSIST_LOG_LEVEL"] = "ERROR"
    replay.script(target.route, Reply("openai_chat/stream_text_with_usage.sse"))
    quiet = workspace.run("chat", "--agent", target.agent, "A question")
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.describe()
