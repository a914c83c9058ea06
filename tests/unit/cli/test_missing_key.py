"""The missing-key check before sending: a key is optional only for a local API on this machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.cli.conftest import RunCli

# TEST-NET-1 (RFC 5737): never routed. The check refuses before connecting, so nothing is sent.
REMOTE_URL = "https://192.0.2.1:9/v1"


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    monkeypatch.delenv("REMOTE_BOX_KEY", raising=False)


def _remote_agent(config_dir: Path, client_api: str) -> None:
    (config_dir / "providers").mkdir(exist_ok=True)
    (config_dir / "providers" / "remote.toml").write_text(
        f'name = "Remote Box"\nclient_api = "{client_api}"\nurl = "{REMOTE_URL}"\n'
        'api_key_env = "REMOTE_BOX_KEY"\n'
    )
    (config_dir / "agents" / "remote.toml").write_text(
        'schema_version = 1\nname = "Remote Chat"\nextends = "DeepSeek Chat"\n'
        'provider_instance = "Remote Box"\nenable_tools = false\n'
    )


def test_an_openai_compatible_cloud_host_without_a_key_fails_before_sending(
    run_cli: RunCli, config_dir: Path
) -> None:
    # Issue 43: "OpenAI Compatible" is key_optional, so a missing key went unnoticed on https.
    _remote_agent(config_dir, "OpenAI Compatible")
    code, out, err = run_cli("chat", "--agent", "Remote Chat", "hi")
    assert code == 3, err  # an auth error, like a rejected key
    assert "missing API key for Remote Box: set REMOTE_BOX_KEY" in err
    assert out == ""


def test_a_local_server_api_on_another_machine_says_how_to_go_keyless(
    run_cli: RunCli, config_dir: Path
) -> None:
    _remote_agent(config_dir, "Ollama (OpenAI-compatible)")
    code, _, err = run_cli("chat", "--agent", "Remote Chat", "hi")
    assert code == 3, err
    assert 'if that server needs no key, set api_key_ref = "" and api_key_env = ""' in err
