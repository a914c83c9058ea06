"""RefactorService over a real Session and GenericProvider on httpx.MockTransport."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.config.pipelines import QUICK_REFACTOR
from qodeassist_lsp.config.secrets import SecretStore
from qodeassist_lsp.context.documents import DocumentStore, offset_at
from qodeassist_lsp.core.agent import AgentFactory
from qodeassist_lsp.core.provider import GenericProvider
from qodeassist_lsp.core.session_manager import SessionManager
from qodeassist_lsp.features.refactor.instructions import Instruction
from qodeassist_lsp.features.refactor.service import (
    DEFAULT_INSTRUCTION,
    RefactorRequest,
    RefactorService,
)

URI = "file:///p/a.py"
TEXT = "def f():\n    return 1\n"


def stream(*parts: str) -> bytes:
    chunks = [{"choices": [{"index": 0, "delta": {"content": p}}]} for p in parts]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def sse(body: bytes, status: int = 200) -> httpx.Response:
    return httpx.Response(status, headers={"content-type": "text/event-stream"}, content=body)


class Hang(httpx.AsyncByteStream):
    def __init__(self, closed: asyncio.Event) -> None:
        self.closed = closed

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield b'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n'
        await asyncio.Event().wait()

    async def aclose(self) -> None:
        self.closed.set()


@dataclass
class Backend:
    configuration: Configuration
    loaded = True
    sessions: SessionManager
    seen: list[dict[str, Any]] = field(default_factory=list)


Handler = Callable[[httpx.Request], httpx.Response]


@pytest.fixture
async def make(tree, tmp_path) -> AsyncIterator[Callable[[Handler], Backend]]:
    tree.write("bundled/agents/other.toml", 'name = "Other"\nextends = "Wire Base"\nmodel = "m2"\n')
    tree.write(
        "bundled/pipelines.toml",
        '[pipelines]\nchat_assistant = ["Chat"]\nquick_refactor = "Chat"\n',
    )
    config = tree.load()
    providers: list[GenericProvider] = []

    def build(handler: Handler) -> Backend:
        seen: list[dict[str, Any]] = []

        def record(request: httpx.Request) -> httpx.Response:
            seen.append(json.loads(request.content))
            return handler(request)

        provider = GenericProvider(
            config.providers["Local"],
            SecretStore(tmp_path, environ={}),
            transport=httpx.MockTransport(record),
        )
        providers.append(provider)
        manager = SessionManager(
            AgentFactory(config), lambda _name: provider, config.settings, config.prompt_roots()
        )
        return Backend(config, manager, seen)

    yield build
    for provider in providers:
        await provider.aclose()


LIBRARY = [
    Instruction("improve", "Improve", "Improve it.", default=True),
    Instruction("tidy", "Tidy", "Tidy it.", agent="Other"),
]


def setup(
    backend: Backend, library: list[Instruction] | None = None
) -> tuple[RefactorService, DocumentStore]:
    documents = DocumentStore()
    documents.open(URI, TEXT, 7, "python")
    lib = LIBRARY if library is None else library
    return RefactorService(backend, documents, lambda: lib), documents


def request(documents: DocumentStore, **kw: Any) -> RefactorRequest:
    doc = documents.get(URI)
    assert doc is not None
    span = kw.pop("span", (1, 4, 1, 12))
    return RefactorRequest(doc, *span, **kw)


async def test_refactor_sends_layer_and_instruction_and_cleans(make) -> None:
    backend = make(lambda r: sse(stream("Here's the code:\n```python\n", "    return 2\n```")))
    service, documents = setup(backend)
    steps: list[str] = []
    result = await service.refactor(request(documents, instruction="make it two"), steps.append)
    assert result.outcome == "ok" and result.new_text == "    return 2"
    assert (result.start_line, result.start_character, result.end_line, result.end_character) == (
        1,
        4,
        1,
        12,
    )
    assert result.agent == "Chat" and result.document_version == 7 and result.error is None
    body = backend.seen[0]
    assert body["model"] == "m1"
    system, user = body["messages"][0], body["messages"][1]
    assert system["role"] == "system" and user == {"role": "user", "content": "make it two"}
    assert "<selection_start>return 1<selection_end><cursor>" in system["content"]
    assert system["content"].startswith("File information:\nLanguage: python")
    assert steps[0] == "Refactoring with Chat…" and "Receiving the answer…" in steps
    assert service.last_instruction is not None
    assert service.last_instruction.instruction == "make it two"


async def test_default_instruction_from_library_then_original_sentence(make) -> None:
    backend = make(lambda r: sse(stream("x")))
    service, documents = setup(backend)
    await service.refactor(request(documents))
    assert backend.seen[-1]["messages"][-1]["content"] == "Improve it."
    service2, documents2 = setup(backend, library=[])
    await service2.refactor(request(documents2))
    assert backend.seen[-1]["messages"][-1]["content"] == DEFAULT_INSTRUCTION


async def test_instruction_id_uses_body_extra_words_and_agent_override(make) -> None:
    backend = make(lambda r: sse(stream("y")))
    service, documents = setup(backend)
    result = await service.refactor(request(documents, instruction_id="tidy", instruction="also x"))
    assert result.outcome == "ok" and result.agent == "Other"
    assert backend.seen[0]["model"] == "m2"
    assert backend.seen[0]["messages"][-1]["content"] == "Tidy it.\n\nalso x"
    assert [i.id for i in service.list_instructions()] == ["improve", "tidy"]


async def test_unknown_instruction_id_fails_without_request(make) -> None:
    backend = make(lambda r: sse(stream("y")))
    service, documents = setup(backend)
    result = await service.refactor(request(documents, instruction_id="nope"))
    assert result.outcome == "failed" and result.error is not None
    assert result.error.category == "validation" and backend.seen == []


async def test_insert_is_an_empty_range_at_the_cursor(make) -> None:
    backend = make(lambda r: sse(stream("a(); ")))
    service, documents = setup(backend)
    result = await service.refactor(request(documents, span=(1, 4, 1, 4)))
    assert result.outcome == "ok" and result.new_text == "a(); "
    assert (result.start_line, result.start_character, result.end_line, result.end_character) == (
        1,
        4,
        1,
        4,
    )
    assert "    <cursor>return 1" in backend.seen[0]["messages"][0]["content"]


async def test_document_edited_meanwhile_is_stale(make) -> None:
    holder: dict[str, DocumentStore] = {}

    def handler(r: httpx.Request) -> httpx.Response:
        holder["docs"].open(URI, TEXT + "# edit\n", 8, "python")
        return sse(stream("    return 2"))

    backend = make(handler)
    service, documents = setup(backend)
    holder["docs"] = documents
    result = await service.refactor(request(documents))
    assert result.outcome == "stale" and result.new_text == ""
    assert "changed" in result.message and result.document_version == 7


async def test_document_closed_meanwhile_is_stale(make) -> None:
    holder: dict[str, DocumentStore] = {}

    def handler(r: httpx.Request) -> httpx.Response:
        holder["docs"].close(URI)
        return sse(stream("    return 2"))

    service, documents = setup(make(handler))
    holder["docs"] = documents
    result = await service.refactor(request(documents))
    assert result.outcome == "stale" and "closed" in result.message


@pytest.mark.parametrize("answer", ["", "\n\n", "```\n```", "<selection_start><selection_end>"])
async def test_empty_answer_never_deletes(make, answer: str) -> None:
    service, documents = setup(make(lambda r: sse(stream(answer))))
    result = await service.refactor(request(documents))
    assert result.outcome == "empty" and result.new_text == ""


async def test_provider_error_is_failed_with_category(make) -> None:
    backend = make(lambda r: httpx.Response(401, json={"error": {"message": "bad key"}}))
    service, documents = setup(backend)
    result = await service.refactor(request(documents))
    assert result.outcome == "failed" and result.error is not None
    assert result.error.category == "auth"


async def test_no_agent_configured_is_config_failure(make) -> None:
    backend = make(lambda r: sse(stream("x")))
    pipelines = backend.configuration.pipelines
    import dataclasses

    backend.configuration = dataclasses.replace(
        backend.configuration, pipelines=pipelines.with_roster(QUICK_REFACTOR, ())
    )
    service, documents = setup(backend)
    result = await service.refactor(request(documents))
    assert result.outcome == "failed" and result.error is not None
    assert result.error.category == "config" and backend.seen == []


async def test_missing_agent_is_config_failure(make) -> None:
    backend = make(lambda r: sse(stream("x")))
    service, documents = setup(
        backend, library=[Instruction("ghost", "Ghost", "b", agent="Nobody")]
    )
    result = await service.refactor(request(documents, instruction_id="ghost"))
    assert result.outcome == "failed" and result.error is not None
    assert result.error.category == "config" and "Nobody" in result.message


async def test_cancelling_the_task_propagates_and_closes_the_stream(make) -> None:
    closed = asyncio.Event()
    backend = make(
        lambda r: httpx.Response(
            200, headers={"content-type": "text/event-stream"}, stream=Hang(closed)
        )
    )
    service, documents = setup(backend)
    steps: list[str] = []
    task = asyncio.create_task(service.refactor(request(documents), steps.append))
    for _ in range(200):
        if "Receiving the answer…" in steps:
            break
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(closed.wait(), 2)
    assert backend.sessions.idle_count("Chat", QUICK_REFACTOR) == 1


async def test_garbage_answer_is_refused_and_kept_for_a_diff(make) -> None:
    # Issue 15: the embedded model answered "Add type hints" with a counting run of numbers.
    numbers = ", ".join(f"{i}.0" for i in range(1, 88))
    service, documents = setup(make(lambda r: sse(stream(numbers))))
    result = await service.refactor(request(documents, span=(0, 0, 1, 12)))
    assert result.outcome == "refused"
    assert result.verdict is not None and result.verdict.kind == "repetition"
    assert result.new_text == numbers
    assert "not applied" in result.message and "repeats itself" in result.message


async def test_answer_that_breaks_the_syntax_is_refused(make) -> None:
    service, documents = setup(make(lambda r: sse(stream("    return (1"))))
    result = await service.refactor(request(documents))
    assert result.outcome == "refused"
    assert result.verdict is not None and result.verdict.kind == "syntax"


LINES = "def f():\n    return 1\nprint(f())\n"


@pytest.mark.parametrize("newline", ["", "\n"])
@pytest.mark.parametrize(
    ("span", "answer"),
    [
        ((1, 0, 2, 0), "    return 2"),  # whole lines: ends at column 0 of the next line
        ((1, 0, 1, 12), "    return 2"),  # ends at the end of the line: its break stays
        ((1, 4, 1, 12), "return 2"),  # mid-line
    ],
)
async def test_a_linewise_selection_keeps_its_line_break(make, span, answer, newline) -> None:
    service, documents = setup(make(lambda r: sse(stream(answer + newline))))
    documents.open(URI, LINES, 8, "python")
    result = await service.refactor(request(documents, span=span))
    assert result.outcome == "ok", result.message
    start, end = offset_at(LINES, *span[:2]), offset_at(LINES, *span[2:])
    assert result.new_text == answer + ("\n" if LINES[start:end].endswith("\n") else "")
    after = LINES[:start] + result.new_text + LINES[end:]
    assert after == "def f():\n    return 2\nprint(f())\n"


async def test_a_linewise_selection_keeps_a_crlf_line_break(make) -> None:
    service, documents = setup(make(lambda r: sse(stream("    return 2"))))
    documents.open(URI, "def f():\r\n    return 1\r\nprint(f())\r\n", 8, "python")
    result = await service.refactor(request(documents, span=(1, 0, 2, 0)))
    assert result.outcome == "ok" and result.new_text == "    return 2\r\n"
