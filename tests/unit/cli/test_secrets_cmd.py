"""``secrets status``: where each provider's key comes from, and which providers need none."""

from __future__ import annotations

import pytest

from tests.unit.cli.conftest import RunCli

LOCAL = (
    "Ollama (Native)",
    "Ollama (OpenAI-compatible)",
    "llama.cpp",
    "LM Studio (Chat Completions)",
    "LM Studio (Responses API)",
)


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    for name in ("OLLAMA_API_KEY", "LLAMACPP_API_KEY", "LMSTUDIO_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def _status_lines(run_cli: RunCli) -> dict[str, str]:
    code, out, err = run_cli("secrets", "status")
    assert code == 0, err
    return dict(line.split(": ", 1) for line in out.splitlines())


def test_local_servers_need_no_key(run_cli: RunCli) -> None:
    lines = _status_lines(run_cli)
    for name in LOCAL:
        assert lines[name].startswith("no key needed"), lines[name]
        assert "not set" not in lines[name]
    assert "OLLAMA_API_KEY" in lines["Ollama (Native)"]  # still says how, for a proxied server
    assert "is not set" in lines["OpenAI (Chat Completions)"]  # cloud providers do need one


def test_a_local_server_key_that_is_set_is_reported(
    run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LMSTUDIO_API_KEY", "lm-secret-value")
    lines = _status_lines(run_cli)
    line = lines["LM Studio (Chat Completions)"]
    assert "LMSTUDIO_API_KEY" in line and "no key needed" not in line
    assert "lm-secret-value" not in line


def test_a_provider_with_several_keys_gets_a_line_per_key(
    run_cli: RunCli, config_dir, monkeypatch: pytest.MonkeyPatch
) -> None:
    (config_dir / "providers").mkdir(exist_ok=True)
    (config_dir / "providers" / "rotating.toml").write_text(
        'name = "Rotating"\nclient_api = "OpenAI Compatible"\nurl = "https://api.example.com/v1"\n'
        'api_key_env = ["ROTATING_KEY_1", "ROTATING_KEY_2"]\n'
    )
    monkeypatch.setenv("ROTATING_KEY_1", "sk-first-0123456789abcdef")
    monkeypatch.delenv("ROTATING_KEY_2", raising=False)
    lines = _status_lines(run_cli)
    assert (
        "ROTATING_KEY_1" in lines["Rotating key 1/2"] and "not set" not in lines["Rotating key 1/2"]
    )
    assert "ROTATING_KEY_2 is not set" in lines["Rotating key 2/2"]
    assert "sk-first" not in str(lines)


def test_cloud_providers_on_a_local_api_are_not_called_local(
    run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 43: DeepSeek and Qwen are "OpenAI Compatible" (key_optional) but on https hosts.
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    monkeypatch.delenv("DASHSCOPE_API_KEY", raising=False)
    lines = _status_lines(run_cli)
    for name, env in (("DeepSeek", "DEEPSEEK_API_KEY"), ("Qwen", "DASHSCOPE_API_KEY")):
        assert "no key needed" not in lines[name], lines[name]
        assert "is not set" in lines[name] and env in lines[name], lines[name]


def test_a_local_api_on_another_host_needs_its_key(
    run_cli: RunCli, config_dir, monkeypatch: pytest.MonkeyPatch
) -> None:
    (config_dir / "providers").mkdir(exist_ok=True)
    (config_dir / "providers" / "boxes.toml").write_text(
        'name = "Ollama (Native)"\nclient_api = "Ollama (Native)"\n'
        'url = "http://gpu-box.example:11434"\napi_key_env = "OLLAMA_API_KEY"\n'
    )
    lines = _status_lines(run_cli)
    assert "no key needed" not in lines["Ollama (Native)"]
    assert "is not set" in lines["Ollama (Native)"]
