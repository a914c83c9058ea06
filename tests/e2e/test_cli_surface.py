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


# --------------------------------------------------------------------------- exit codes
def test_a_missing_local_extra_is_a_configuration_error_said_once(tmp_path: Path) -> None:
    # A package that shadows xllamacpp and fails to import, as when the extra is not installed.
    shadow = tmp_path / "shadow" / "xllamacpp"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text('raise ImportError("simulated: no xllamacpp")\n')
    workspace = Workspace(
        tmp_path / "ws",
        "http://127.0.0.1:9",
        log_level="",
        extra_env={"PYTHONPATH": str(shadow.parent)},
    )
    (workspace.config / "pipelines.toml").unlink()  # the bundled Embedded pipelines apply
    source = workspace.project / "a.py"
    source.write_text("def f():\n    return \n")
    result = workspace.run("complete", str(source), "--line", "2", "--col", "12")
    assert result.returncode == 1, result.describe()
    assert result.stderr.count("pip install 'qodeassist-lsp[local]'") == 1, result.describe()
    assert result.stdout == ""


def test_chat_refuses_an_empty_message(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path, "http://127.0.0.1:9")
    for message in ("", "  \n"):
        result = workspace.run("chat", "--agent", TARGETS["openai"].agent, message)
        assert result.returncode == 2, result.describe()
        assert "the message is empty" in result.stderr and result.stdout == ""
