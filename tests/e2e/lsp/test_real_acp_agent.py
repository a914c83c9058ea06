"""A real ACP agent from npm as the provider of our LSP chat, offline: OpenCode on the embedded model.

``opencode-ai`` (pinned) is installed by `tests.support.npm_agents` into the ignored ``.cache/``
(the tests fail with the reason when npm cannot install it: never a silent skip). The embedded SmolLM2 chat server is
started on a free port with an 8k context; OpenCode's ``opencode.json`` in the workspace names
it as a custom OpenAI-compatible provider (``@ai-sdk/openai-compatible``, bundled in OpenCode),
with its tools off and a one-line prompt, so the tiny model's context holds the request.
OpenCode's models.dev fetch is disabled: nothing leaves the machine.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.lsp.conftest import server_env
from tests.e2e.lsp.test_chat import request, start, texts
from tests.support.npm_agents import NpmUnavailable, install

OPENCODE_VERSION = "1.18.33"
MODEL = "smollm2-135m-instruct"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def opencode() -> Path:
    try:
        return install("opencode-ai", OPENCODE_VERSION, "opencode")
    except NpmUnavailable as exc:
        pytest.fail(f"opencode-ai cannot be installed here: {exc}", pytrace=False)


@pytest.fixture(scope="module")
def embedded_chat_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    pytest.importorskip("xllamacpp", reason="the embedded model needs qodeassist-lsp[local]")
    port = free_port()
    home = tmp_path_factory.mktemp("embedded")
    command = [sys.executable, "-m", "qodeassist_lsp", "embedded", "serve", "--bundled", MODEL,
               "--port", str(port), "--ctx-size", "8192"]  # fmt: skip
    env = {**os.environ, "QODEASSIST_DATA_DIR": str(home / "data"),
           "QODEASSIST_CONFIG_DIR": str(home / "config")}  # fmt: skip
    with (home / "server.log").open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=log, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(
                    f"the embedded server exited: {(home / 'server.log').read_text()[-400:]}",
                    pytrace=False,
                )
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        yield f"{url}/v1"
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture(autouse=True)
def setup(
    lsp_home: Path, opencode: Path, embedded_chat_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in server_env(lsp_home).items():
        monkeypatch.setenv(key, value)
    (lsp_home / "oc-home").mkdir()
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "Embedded",
        "options": {"baseURL": embedded_chat_url},
        "models": {MODEL: {"name": "SmolLM2", "tool_call": False,
                           "limit": {"context": 8192, "output": 128}}},
    }  # fmt: skip
    config = {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "provider": {"embedded": provider},
        "model": f"embedded/{MODEL}",
        "small_model": f"embedded/{MODEL}",
        "tools": {"*": False},
        # No session title: its request would go first to the one-slot model (half the time).
        "agent": {
            "build": {"prompt": "You are a helpful assistant. Answer briefly."},
            "title": {"disable": True},
        },
    }
    (lsp_home / "project/opencode.json").write_text(json.dumps(config, indent=2))
    # The bundled "OpenCode (ACP)" instance, with the installed program and a home of its own.
    (lsp_home / "config/providers/opencode_acp.toml").write_text(
        'schema_version = 1\nname = "OpenCode (ACP)"\nclient_api = "ACP Agent"\n'
        f'command = ["{opencode}", "acp"]\npackage = "opencode-ai"\n'
        f'[env]\nHOME = "{lsp_home / "oc-home"}"\nOPENCODE_DISABLE_MODELS_FETCH = "1"\n'
        'OPENCODE_DISABLE_AUTOUPDATE = "1"\n'
    )
    (lsp_home / "config/pipelines.toml").write_text(
        '[pipelines]\nchat_assistant = ["OpenCode Chat — ACP"]\n'
    )


async def test_opencode_answers_our_chat_offline_on_the_embedded_model(client, lsp_home):
    events = await start(client)
    sent = await request(client, "chat/send", {"message": "Say hi"})
    terminal = await events.terminal(sent["requestId"], within=240)
    streamed = events.of(sent["requestId"])
    assert terminal["kind"] == "finished", streamed
    assert terminal["agent"] == "OpenCode Chat — ACP"
    assert texts(streamed).strip()
