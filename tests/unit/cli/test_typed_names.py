"""Names as typed on a shell: ``-`` or ``--`` for the em dash, any case, in every command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply, write_embedded_instances
from tests.unit.cli.conftest import RunCli


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)


@pytest.mark.parametrize("typed", ["Claude Chat - Sonnet", "claude chat -- sonnet"])
def test_agents_render_takes_a_typed_dash(run_cli: RunCli, typed: str) -> None:
    code, out, err = run_cli("agents", "render", typed)
    assert code == 0, err
    assert json.loads(out)["url"].startswith("https://api.anthropic.com")


def test_an_unknown_agent_gets_a_suggestion(run_cli: RunCli) -> None:
    code, _, err = run_cli("agents", "render", "Claude Chat Sonet")
    assert code == 1
    assert "no usable agent named 'Claude Chat Sonet'; did you mean 'Claude Chat — Sonnet'?" in err


def test_an_ambiguous_name_lists_the_candidates(run_cli: RunCli, config_dir: Path) -> None:
    (config_dir / "agents" / "twin.toml").write_text(
        'schema_version = 1\nname = "Claude Chat -- Sonnet"\nextends = "Claude Chat — Sonnet"\n'
    )
    code, _, err = run_cli("agents", "render", "claude chat - sonnet")
    assert code == 1
    assert "matches 2 usable agents ('Claude Chat -- Sonnet', 'Claude Chat — Sonnet')" in err


def test_secrets_and_models_take_a_typed_provider_name(run_cli: RunCli) -> None:
    code, out, err = run_cli("secrets", "status", "deepseek")
    assert code == 0, err
    assert out.startswith("DeepSeek: ")
    code, _, err = run_cli("models", "deep seek")
    assert code == 1 and "did you mean 'DeepSeek'?" in err


def test_chat_takes_a_typed_agent_name(run_cli: RunCli, config_dir: Path) -> None:
    with ReplayServer() as server:
        write_embedded_instances(config_dir / "providers", server.url)
        server.script("/v1/chat/completions", chat_reply("Hello!"))
        code, out, err = run_cli("chat", "--agent", "embedded CHAT", "hi")
    assert code == 0, err
    assert out == "Hello!\n"
