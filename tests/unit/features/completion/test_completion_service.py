"""CompletionService end to end over a real Session and httpx.MockTransport.

The provider is an OpenAI-compatible ``/v1/completions`` endpoint whose streamed answer each
test scripts chunk by chunk, so request counts, the exact prefix/suffix sent, early stops and
closed streams are observed on the wire.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.config.pipelines import Pipelines
from qodeassist_lsp.config.secrets import SecretStore
from qodeassist_lsp.config.settings import GeneralSettings
from qodeassist_lsp.config.settings import Settings as CoreSettings
from qodeassist_lsp.context.documents import Document, DocumentStore, LineEdit
from qodeassist_lsp.context.ignore import IgnoreFilter
from qodeassist_lsp.context.positions import position_at
from qodeassist_lsp.core.agent import AgentFactory
from qodeassist_lsp.core.provider import GenericProvider
from qodeassist_lsp.core.session_manager import SessionManager
from qodeassist_lsp.features.completion.service import (
    CompletionRequest,
    CompletionResult,
    CompletionService,
    TriggerKind,
)
from qodeassist_lsp.features.completion.settings import COMPLETION_SETTINGS, CompletionSettings
from qodeassist_lsp.features.completion.stats import Outcome

AGENT = """
name = "Completer"
provider_instance = "Local"
model = "m"
endpoint = "/v1/completions"

[body]
stream = true
prompt = '''{{ (ctx.prefix or "") | tojson }}'''
suffix = '''{{ (ctx.suffix or "") | tojson }}'''
system = '''{% if ctx.system_prompt %}{{ ctx.system_prompt | tojson }}{% endif %}'''
language = '''{{ ctx.language | tojson }}'''
single_line = '''{{ ctx.single_line | tojson }}'''
"""

PY = "file:///proj/a.py"

Settings = CoreSettings.with_sections([COMPLETION_SETTINGS])
"""The settings model with the ``[completion]`` section, as the host builds it."""


def chunk(text: str) -> bytes:
    return f"data: {json.dumps({'choices': [{'index': 0, 'text': text}]})}\n\n".encode()


END = b'data: {"choices":[{"index":0,"text":"","finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'


class Script(httpx.AsyncByteStream):
    """An upstream answer the test feeds chunk by chunk; records when httpx closes it."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.closed = asyncio.Event()

    def send(self, *texts: str, end: bool = False) -> None:
        for text in texts:
            self.queue.put_nowait(chunk(text))
        if end:
            self.queue.put_nowait(END)
            self.queue.put_nowait(None)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            item = await self.queue.get()
            if item is None:
                return
            yield item

    async def aclose(self) -> None:
        self.closed.set()


@dataclass
class Backend:
    configuration: Configuration
    loaded = True
    sessions: SessionManager
    settings_box: list[Settings]

    @property
    def settings(self) -> Settings:
        return self.settings_box[0]


@dataclass
class Harness:
    service: CompletionService
    backend: Backend
    store: DocumentStore
    bodies: list[dict[str, Any]]
    scripts: list[Script]
    settings: list[Settings]
    clock: list[float]
    answers: list[Callable[[Script], None]] = field(default_factory=list)
    closed: list[list[bool]] = field(default_factory=list)
    """Per upstream request: which earlier streams were closed when it arrived."""

    def use(self, **completion: Any) -> None:
        base = self.settings[0].section(COMPLETION_SETTINGS).model_dump()
        base.update(completion)
        self.settings[0] = Settings(
            general=self.settings[0].general, completion=CompletionSettings(**base)
        )

    def answer(self, *texts: str) -> None:
        """Queue a complete answer for the next upstream request."""
        self.answers.append(lambda script: script.send(*texts, end=True))

    def hold(self) -> None:
        """The next upstream request stays open until the test feeds its script."""
        self.answers.append(lambda script: None)

    def open(self, text: str, uri: str = PY, language: str = "python") -> Document:
        return self.store.open(uri, text, 1, language)

    def request(
        self, text: str, trigger: TriggerKind = TriggerKind.INVOKED, uri: str = PY, **kw: Any
    ) -> CompletionRequest:
        """A request at the ``|`` marker of ``text`` (the document is opened or updated)."""
        offset = text.index("|")
        text = text.replace("|", "", 1)
        current = self.store.get(uri)
        if current is None:
            document = self.store.open(uri, text, 1, "python")
        elif current.text != text:
            document = self.store.change(uri, text, current.version + 1)
        else:
            document = current
        line, character = position_at(document.text, offset)
        return CompletionRequest(document, line, character, trigger, **kw)

    async def complete(
        self, text: str, trigger: TriggerKind = TriggerKind.INVOKED, uri: str = PY
    ) -> CompletionResult:
        return await self.service.complete(self.request(text, trigger, uri))

    async def key_while_held(self, first: str, then: str) -> asyncio.Task[CompletionResult]:
        """Ask at ``first`` with the model held, then at ``then``: the first is superseded."""
        self.hold()
        asked = asyncio.create_task(self.complete(first))
        await until(lambda: len(self.scripts) == 1)
        second = asyncio.create_task(self.complete(then))
        assert (await asked).outcome is Outcome.SUPERSEDED
        return second


@pytest.fixture
def completer_agent() -> str:
    """The completion agent's TOML (a test module may override this fixture)."""
    return AGENT


@pytest.fixture
async def harness(tree, tmp_path: Path, completer_agent: str) -> AsyncIterator[Harness]:
    tree.write("bundled/agents/completer.toml", completer_agent)
    tree.write(
        "bundled/pipelines.toml",
        '[pipelines]\ncode_completion = ["Completer"]\nchat_assistant = ["Chat"]\n',
    )
    config = tree.load()
    assert not config.errors, tree.messages(config)
    bodies: list[dict[str, Any]] = []
    scripts: list[Script] = []
    answers: list[Callable[[Script], None]] = []
    closed: list[list[bool]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        closed.append([script.closed.is_set() for script in scripts])
        bodies.append(json.loads(request.content))
        script = Script()
        scripts.append(script)
        if answers:
            answers.pop(0)(script)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=script)

    provider = GenericProvider(
        config.providers["Local"],
        SecretStore(tmp_path, environ={}),
        transport=httpx.MockTransport(handler),
    )
    sessions = SessionManager(
        AgentFactory(config), lambda name: provider, config.settings, config.prompt_roots()
    )
    store = DocumentStore()
    settings = [
        Settings(
            completion=CompletionSettings(
                debounce_ms=0,
                char_threshold=0,
                time_budget_ms=0,
                smart_context_trigger=False,
                prefetch_after_accept=False,  # its own tests turn it on
                warm_idle_ms=0,  # so is warming (it would take the first scripted answer)
            )
        )
    ]
    clock = [1000.0]
    backend = Backend(config, sessions, settings)
    service = CompletionService(
        backend,
        store,
        clock=lambda: clock[0],
        reuse_grace_s=0,
    )
    h = Harness(service, backend, store, bodies, scripts, settings, clock, answers, closed)
    yield h
    service.close()
    await asyncio.sleep(0)
    await provider.aclose()


async def until(predicate: Callable[[], bool], seconds: float = 2.0) -> None:
    for _ in range(int(seconds / 0.005)):
        if predicate():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("condition not reached in time")


# --------------------------------------------------------------------------------------------
async def test_invoked_request_sends_prefix_suffix_and_context(harness: Harness) -> None:
    harness.answer("return a ", "+ b\n")
    result = await harness.complete("def add(a, b):\n    |\n\nprint(add(1, 2))\n")
    assert result.outcome is Outcome.MODEL and result.agent == "Completer"
    assert [i.insert_text for i in result.items] == ["return a + b"]
    item = result.items[0]
    assert (item.line, item.start_character, item.end_character) == (1, 4, 4)
    body = harness.bodies[0]
    assert body["prompt"] == "def add(a, b):\n    "  # indentation is not healed
    assert body["suffix"] == "\n\nprint(add(1, 2))\n"
    assert body["language"] == "python"
    assert body["system"].startswith(
        "File information:\nLanguage: python (MIME: text/x-python)\nFile path: /proj/a.py"
    )


async def test_invoked_offers_several_items_automatic_one(harness: Harness) -> None:
    harness.answer("x = 1\ny = 2\n\nz = 3")
    invoked = await harness.complete("|")
    assert [i.insert_text for i in invoked.items] == [
        "x = 1\ny = 2\n\nz = 3",
        "x = 1\ny = 2",
        "x = 1",
    ]
    assert len({i.id for i in invoked.items}) == 3
    harness.answer("x = 1\ny = 2")
    automatic = await harness.service.complete(
        harness.request("\n|", TriggerKind.AUTOMATIC)  # another cursor: no cached answer
    )
    assert [i.insert_text for i in automatic.items] == ["x = 1\ny = 2"]


async def test_whitespace_left_out_of_the_prompt_comes_off_the_answer(harness: Harness) -> None:
    harness.answer(" 1\n")
    result = await harness.complete("x = |\n")
    assert harness.bodies[0]["prompt"] == "x ="
    assert [i.insert_text for i in result.items] == ["1"]


async def test_a_line_inserted_mid_block_gets_one_line(harness: Harness) -> None:
    harness.answer("count = 0\n    for x in xs:\n")
    result = await harness.complete("def f(xs):\n    |\n    return count\n")
    assert [i.insert_text for i in result.items] == ["count = 0"]  # code goes on right below
    harness.answer("count = 0\n    return count\n")
    result = await harness.complete("def f(xs):\n    |\n\ndef g():\n    pass\n")
    assert result.items[0].insert_text == "count = 0\n    return count"  # the block ends below


async def test_overlap_sets_the_range_end(harness: Harness) -> None:
    harness.answer("a, b)")
    result = await harness.complete("print(|)\n")
    assert result.items[0].insert_text == "a, b)"
    assert (result.items[0].start_character, result.items[0].end_character) == (6, 7)


async def test_ignored_files_disabled_and_manual_mode_send_nothing(
    harness: Harness, tmp_path: Path
) -> None:
    (tmp_path / ".qodeassistignore").write_text("secret/\n", encoding="utf-8")
    harness.service.ignore = IgnoreFilter(tmp_path)
    uri = f"file://{tmp_path}/secret/k.py"
    result = await harness.service.complete(harness.request("x = |", uri=uri))
    assert result.outcome is Outcome.IGNORED
    harness.use(mode="manual")
    result = await harness.service.complete(harness.request("y|", TriggerKind.AUTOMATIC))
    assert result.outcome is Outcome.DISABLED
    harness.settings[0] = Settings(general=GeneralSettings(enabled=False))
    assert (await harness.complete("z|")).outcome is Outcome.DISABLED
    assert harness.bodies == []


async def test_smart_suppression_and_threshold_for_automatic_only(harness: Harness) -> None:
    harness.use(smart_context_trigger=True, char_threshold=2)
    auto = TriggerKind.AUTOMATIC
    result = await harness.complete("foo|bar\n", auto, "file:///p/1.py")
    assert result.reason == "inside an identifier"
    result = await harness.complete("self.|\n", auto, "file:///p/2.py")
    assert result.reason == "right after a member access"
    result = await harness.complete("ab|\n", auto, "file:///p/3.py")  # opened, nothing typed
    assert result.outcome is Outcome.SUPPRESSED and "char_threshold" in result.reason
    harness.store.change("file:///p/3.py", "abc\n", 9, [LineEdit(0, "c")])
    harness.store.change("file:///p/3.py", "abcd\n", 10, [LineEdit(0, "d")])
    harness.answer("e")
    assert (await harness.complete("abcd|\n", auto, "file:///p/3.py")).outcome is Outcome.MODEL
    harness.answer("bar()")
    assert (await harness.complete("self.|\n", uri="file:///p/2.py")).outcome is Outcome.MODEL
    assert len(harness.bodies) == 2


async def test_eager_trigger_needs_no_typed_characters(harness: Harness) -> None:
    harness.use(smart_context_trigger=True, char_threshold=5)
    harness.answer("1")
    result = await harness.complete("x = |\n", TriggerKind.AUTOMATIC)
    assert result.outcome is Outcome.MODEL and result.items[0].insert_text == "1"


async def test_typed_ahead_hit_sends_nothing(harness: Harness) -> None:
    harness.answer("compute(a, b)")
    first = await harness.complete("x = |\n")
    assert first.items[0].insert_text == "compute(a, b)"
    harness.store.change(PY, "x = com\n", 5, [LineEdit(0, "com")])
    hit = await harness.complete("x = com|\n", TriggerKind.AUTOMATIC)
    assert hit.outcome is Outcome.TYPED_AHEAD
    assert [i.insert_text for i in hit.items] == ["pute(a, b)"]
    assert hit.items[0].start_character == 7
    assert len(harness.bodies) == 1
    harness.answer("zzz")
    miss = await harness.complete("x = cx|\n")
    assert miss.outcome is Outcome.MODEL and len(harness.bodies) == 2


async def test_typed_ahead_can_be_switched_off(harness: Harness) -> None:
    harness.use(typed_ahead_cache=False)
    harness.answer("compute()")
    await harness.complete("x = |\n")
    harness.answer("pute()")
    assert (await harness.complete("x = com|\n")).outcome is Outcome.MODEL
    assert len(harness.bodies) == 2


async def test_running_generation_is_reused_when_typing_its_output(harness: Harness) -> None:
    harness.use(multi_line="always")
    harness.hold()
    first = asyncio.create_task(harness.complete("x = |\n"))
    await until(lambda: len(harness.scripts) == 1)
    script = harness.scripts[0]
    script.send("compute(")
    await asyncio.sleep(0.05)
    second = asyncio.create_task(harness.complete("x = comp|\n"))
    assert (await first).outcome is Outcome.SUPERSEDED
    script.send("a, b)\n", end=True)
    result = await second
    assert result.outcome is Outcome.REUSED
    assert [i.insert_text for i in result.items] == ["ute(a, b)"]
    assert len(harness.bodies) == 1


async def test_a_key_typed_before_the_model_answered_waits_for_its_verdict(
    harness: Harness,
) -> None:
    # The next key arrives while the running request is still reading its prompt: nothing
    # to judge yet, so the new request waits for the first text instead of starting over.
    harness.use(multi_line="always")
    second = await harness.key_while_held("x = |\n", "x = co|\n")
    await asyncio.sleep(0.05)
    assert not second.done() and not harness.scripts[0].closed.is_set()
    harness.scripts[0].send("compute(a)\n", end=True)
    result = await second
    assert result.outcome is Outcome.REUSED
    assert [i.insert_text for i in result.items] == ["mpute(a)"]
    assert len(harness.bodies) == 1


async def test_typing_on_a_fresh_line_answers_at_the_first_line(harness: Harness) -> None:
    # The editor asked on a fresh line (multi-line allowed), then the user typed "re": that
    # cursor wants one line, so the attached request answers when the line is complete
    # instead of waiting for the block the model goes on to write.
    second = await harness.key_while_held("def f(x):\n    |\n", "def f(x):\n    re|\n")
    harness.scripts[0].send("return x")
    await asyncio.sleep(0.05)
    assert not second.done()
    harness.scripts[0].send(" + 1\n", "    y = 2\n")  # never finishes by itself
    result = await asyncio.wait_for(second, 2)
    assert result.outcome is Outcome.REUSED
    assert [i.insert_text for i in result.items] == ["turn x + 1"]
    assert len(harness.bodies) == 1
    await until(harness.scripts[0].closed.is_set)  # nobody waits for the block: closed


async def test_a_verdict_against_the_key_starts_a_new_request(harness: Harness) -> None:
    second = await harness.key_while_held("x = |\n", "x = co|\n")
    harness.answer("unt")
    harness.scripts[0].send("value")  # the model disagrees with the typed "co"
    result = await second
    assert [i.insert_text for i in result.items] == ["unt"]
    assert [b["prompt"] for b in harness.bodies] == ["x =", "x = co"]
    assert harness.scripts[0].closed.is_set()


async def test_cancel_previous_closes_the_older_stream(harness: Harness) -> None:
    harness.hold()
    first = asyncio.create_task(harness.complete("x = |\n"))
    await until(lambda: len(harness.scripts) == 1)
    harness.scripts[0].send("something")
    await asyncio.sleep(0.02)
    harness.answer("other")
    second = await harness.complete("y = |\n")
    assert (await first).outcome is Outcome.SUPERSEDED
    assert second.items[0].insert_text == "other"
    await until(harness.scripts[0].closed.is_set)
    assert [b["prompt"] for b in harness.bodies] == ["x =", "y ="]


async def test_one_request_at_a_time_per_provider_instance(harness: Harness) -> None:
    # Another document, the same model server: the new request is sent once the older
    # stream is closed, so it never queues behind it in a one-slot server.
    # A local server reads a prompt to its end even after a hang-up (llama.cpp), so the new
    # request waits until the older one starts answering, then closes it.
    harness.hold()
    first = asyncio.create_task(harness.complete("x = |\n", uri="file:///proj/b.py"))
    await until(lambda: len(harness.scripts) == 1)
    harness.answer("other")
    second = asyncio.create_task(harness.complete("y = |\n"))
    assert (await first).outcome is Outcome.SUPERSEDED
    await asyncio.sleep(0.05)
    assert len(harness.bodies) == 1 and not harness.scripts[0].closed.is_set()
    harness.scripts[0].send("x")  # its prompt is read: the slot frees as the stream closes
    assert (await second).items[0].insert_text == "other"
    assert harness.closed == [[], [True]]


async def test_a_request_that_may_be_loading_the_model_is_not_cut_off(harness: Harness) -> None:
    harness.service.load_window_s = 0.05
    harness.hold()
    first = asyncio.create_task(harness.complete("x = |\n"))
    await until(lambda: len(harness.scripts) == 1)
    await asyncio.sleep(0.1)  # no answer past the load window: the model may be loading
    harness.answer("other")
    second = asyncio.create_task(harness.complete("y = |\n"))
    assert (await first).outcome is Outcome.SUPERSEDED
    await asyncio.sleep(0.1)
    assert not harness.scripts[0].closed.is_set() and len(harness.bodies) == 1
    harness.scripts[0].send("loaded")  # the answer starts: the load is done, hang up now
    await until(harness.scripts[0].closed.is_set)
    assert (await second).items[0].insert_text == "other"
    assert harness.closed == [[], [True]]


async def test_cancelling_the_request_closes_the_upstream_stream(harness: Harness) -> None:
    harness.hold()
    task = asyncio.create_task(harness.complete("x = |\n"))
    await until(lambda: len(harness.scripts) == 1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await until(harness.scripts[0].closed.is_set)
    assert harness.service.stats.outcomes[Outcome.CANCELLED] == 1


async def test_grace_period_lets_a_follow_up_attach(harness: Harness) -> None:
    harness.service.reuse_grace_s = 0.5
    harness.use(multi_line="always")
    harness.hold()
    task = asyncio.create_task(harness.complete("x = |\n"))
    await until(lambda: len(harness.scripts) == 1)
    harness.scripts[0].send("value")
    await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    follow_up = asyncio.create_task(harness.complete("x = va|\n"))
    await asyncio.sleep(0.02)
    harness.scripts[0].send("s()", end=True)
    result = await follow_up
    assert result.outcome is Outcome.REUSED and result.items[0].insert_text == "lues()"
    assert len(harness.bodies) == 1


async def test_time_budget_returns_complete_lines(harness: Harness) -> None:
    harness.use(time_budget_ms=400, multi_line="always")
    harness.hold()
    task = asyncio.create_task(harness.complete("def f():\n|", TriggerKind.AUTOMATIC))
    await until(lambda: len(harness.scripts) == 1)
    harness.scripts[0].send("    a = 1\n    b = 2\n    c =")
    result = await task
    assert result.outcome is Outcome.TIMEOUT
    assert result.items[0].insert_text == "    a = 1\n    b = 2"
    await until(harness.scripts[0].closed.is_set)  # nobody waits: closed (grace 0)
    assert harness.service.stats.agents["Completer"].timeouts == 1


async def test_single_line_stops_the_stream_early(harness: Harness) -> None:
    harness.hold()
    task = asyncio.create_task(harness.complete("total = |  # sum\n"))
    await until(lambda: len(harness.scripts) == 1)
    harness.scripts[0].send("a + b\n", "c = 3\n")  # never finishes by itself
    result = await task
    assert result.items[0].insert_text == "a + b"
    await until(harness.scripts[0].closed.is_set)


async def test_a_started_line_is_answered_when_it_is_complete(harness: Harness) -> None:
    # The cursor ends a line the user has started: the answer is that line, and the stream
    # (the model server's slot) is closed as soon as it is complete.
    harness.hold()
    task = asyncio.create_task(harness.complete("def f(x):\n    re|\n"))
    await until(lambda: len(harness.scripts) == 1)
    harness.scripts[0].send("turn x\n", "    y = 1\n")  # never finishes by itself
    result = await asyncio.wait_for(task, 2)
    assert [i.insert_text for i in result.items] == ["turn x"]
    await until(harness.scripts[0].closed.is_set)


async def test_a_line_looping_within_itself_is_answered_before_its_line_ends(
    harness: Harness,
) -> None:
    # A small model writing ``\d+`` forever on one line: closed at the third copy, not after
    # max_tokens.
    harness.hold()
    task = asyncio.create_task(harness.complete("num_re = re.compile(r|\n"))
    await until(lambda: len(harness.scripts) == 1)
    harness.scripts[0].send('"(', "\\d+)", "(\\d+)", "(\\d+)", "(\\d+)")  # no line end
    result = await asyncio.wait_for(task, 2)
    assert [i.insert_text for i in result.items] == ['"(\\d+)']
    await until(harness.scripts[0].closed.is_set)


async def test_stops_at_the_existing_next_line(harness: Harness) -> None:
    harness.hold()
    task = asyncio.create_task(harness.complete("def f():\n|\n    return x\n"))
    await until(lambda: len(harness.scripts) == 1)
    harness.scripts[0].send("    x = 1\n", "    return x\n")
    result = await task
    assert result.items[0].insert_text == "    x = 1"
    await until(harness.scripts[0].closed.is_set)


async def test_fenced_chat_answer_is_cleaned(harness: Harness) -> None:
    harness.answer("Sure:\n```python\nreturn 42\n```\nDone.")
    result = await harness.complete("def f():\n    |\n")
    assert result.items[0].insert_text == "# Sure:\nreturn 42\n# Done."
    harness.use(drop_prose=True)
    harness.answer("Sure:\n```python\nreturn 43\n```\nDone.")
    result = await harness.complete("def g():\n    |\n")
    assert result.items[0].insert_text == "return 43"


async def test_provider_error_is_reported(harness: Harness) -> None:
    def fail(script: Script) -> None:
        raise httpx.ConnectError("refused")

    harness.answers.append(fail)
    result = await harness.complete("x = |")
    assert result.outcome is Outcome.ERROR and result.items == ()
    assert result.error is not None and result.error.category == "network"
    agent = harness.service.stats.agents["Completer"]
    assert agent.errors == 1 and agent.last_error == result.error


async def test_no_matching_agent_is_a_config_error(harness: Harness) -> None:
    harness.backend.configuration = dataclasses.replace(
        harness.backend.configuration, pipelines=Pipelines()
    )
    result = await harness.complete("x = |")
    assert result.outcome is Outcome.ERROR and result.error is not None
    assert result.error.category == "config" and "code_completion" in result.error.message
    assert harness.bodies == []


async def test_debounce_lets_only_the_last_request_through(harness: Harness) -> None:
    harness.use(debounce_ms=400, adaptive_debounce=False, local_debounce_ms=400)
    first = asyncio.create_task(harness.complete("x = a|\n", TriggerKind.AUTOMATIC))
    await asyncio.sleep(0.02)
    harness.answer("b")
    second = await harness.complete("x = ab|\n", TriggerKind.AUTOMATIC)
    assert (await first).outcome is Outcome.SUPERSEDED
    assert second.outcome is Outcome.MODEL
    assert [b["prompt"] for b in harness.bodies] == ["x = ab"]


async def test_debounce_deducts_time_since_the_last_keystroke(harness: Harness) -> None:
    harness.use(debounce_ms=5000, adaptive_debounce=False, local_debounce_ms=5000)
    harness.store.open(PY, "x = a\n", 1)
    harness.store.change(PY, "x = ab\n", 2, [LineEdit(0, "b")])
    harness.clock[0] += 10.0  # the user paused: no waiting
    harness.answer("c")
    result = await asyncio.wait_for(harness.complete("x = ab|\n", TriggerKind.AUTOMATIC), 2)
    assert result.outcome is Outcome.MODEL


async def test_document_changed_during_debounce(harness: Harness) -> None:
    harness.use(debounce_ms=400, adaptive_debounce=False, local_debounce_ms=400)
    request = harness.request("x = |\n", TriggerKind.AUTOMATIC)
    task = asyncio.create_task(harness.service.complete(request))
    await asyncio.sleep(0.01)
    harness.store.change(PY, "x = 1\nother\n", 7, [LineEdit(1, "other")])
    result = await task
    assert result.outcome is Outcome.SUPERSEDED and result.reason == "document changed"
    assert harness.bodies == []


async def test_licence_header_and_recent_changes_reach_the_model(harness: Harness) -> None:
    harness.use(use_recent_changes=True)
    other = "file:///proj/b.py"
    harness.store.open(other, "alpha = 1\n", 1, "python")
    harness.store.change(other, "alpha = 2\n", 2, [LineEdit(0, "2")])
    harness.answer("pass")
    await harness.complete("# Copyright 2024 Jane Doe\n# All rights reserved.\n\nimport os\n|\n")
    body = harness.bodies[0]
    assert body["prompt"] == "\nimport os\n"
    assert "Recent Project Changes Context:\nalpha = 2" in body["system"]


class HeldFilter:
    """A `PathFilter` with ``held`` (as `IgnoredFiles`): counts holds and checks made outside."""

    def __init__(self, ignored: set[str]) -> None:
        self.ignored = ignored
        self.holds = 0
        self.depth = 0
        self.inside = 0
        self.outside = 0

    def is_ignored(self, path: str) -> bool:
        if self.depth:
            self.inside += 1
        else:
            self.outside += 1
        return path in self.ignored

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        self.holds += 1
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1


async def test_a_prompt_asks_about_the_open_documents_under_one_hold(harness: Harness) -> None:
    harness.use(use_recent_changes=True)
    ignore = HeldFilter({"/proj/secret.py"})
    harness.service.ignore = ignore
    for name in ("b", "c", "secret"):
        uri = f"file:///proj/{name}.py"
        harness.store.open(uri, f"{name} = 1\n", 1, "python")
        harness.store.change(uri, f"{name} = 2\n", 2, [LineEdit(0, "2")])
    harness.open("import os\n\n")
    ignore.inside = ignore.outside = 0
    harness.answer("pass")
    await harness.complete("import os\n|\n")
    system = harness.bodies[0]["system"]
    assert "b = 2\nc = 2" in system and "secret = 2" not in system
    # The requested file is checked before its prompt; the prompt's checks (the extra
    # context's chunks, the recent changes of the three others) are made under one hold.
    assert (ignore.holds, ignore.outside) == (1, 1) and ignore.inside >= 3


async def test_closing_the_document_cancels_its_generation(harness: Harness) -> None:
    harness.hold()
    task = asyncio.create_task(harness.complete("x = |\n"))
    await until(lambda: len(harness.scripts) == 1)
    harness.store.close(PY)
    result = await task
    assert result.outcome is Outcome.SUPERSEDED
    await until(harness.scripts[0].closed.is_set)


async def test_accept_and_status(harness: Harness) -> None:
    harness.answer("done()")
    result = await harness.complete("x = |")
    assert harness.service.accept(result.items[0].id)
    assert not harness.service.accept(result.items[0].id)  # counted once
    assert not harness.service.accept("unknown")
    status = harness.service.status()
    assert status["accepted"] == 1 and status["outcomes"] == {"model": 1}
    assert status["agents"]["Completer"]["accepted"] == 1
    assert status["inFlight"] == 0 and status["cachedSuggestions"] == 1


async def test_empty_answer_gives_no_items(harness: Harness) -> None:
    harness.answer("   \n\n")
    result = await harness.complete("x = |")
    assert result.outcome is Outcome.EMPTY and result.items == ()


async def test_request_computes_offset_and_clamps_character() -> None:
    document = Document("file:///a", "ab\ncd\n")
    request = CompletionRequest(document, 1, 99)
    assert (request.offset, request.character) == (5, 2)


async def test_orphaned_generation_is_closed_after_the_grace_period(harness: Harness) -> None:
    harness.service.reuse_grace_s = 0.3
    harness.hold()
    task = asyncio.create_task(harness.complete("x = |\n"))
    await until(lambda: len(harness.scripts) == 1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0.03)
    assert not harness.scripts[0].closed.is_set()  # still inside the grace period
    await until(harness.scripts[0].closed.is_set)
    assert harness.service.status()["inFlight"] == 0


async def test_finished_orphan_fills_the_typed_ahead_cache(harness: Harness) -> None:
    harness.service.reuse_grace_s = 1.0
    harness.use(time_budget_ms=80, multi_line="always")
    harness.hold()
    result = await asyncio.wait_for(harness.complete("x = |\n", TriggerKind.AUTOMATIC), 2)
    assert result.outcome is Outcome.TIMEOUT and result.items == ()
    harness.scripts[0].send("late_answer()", end=True)
    await until(lambda: harness.service.status()["cachedSuggestions"] == 1)
    hit = await harness.complete("x = |\n", TriggerKind.AUTOMATIC)
    assert hit.outcome is Outcome.TYPED_AHEAD and hit.items[0].insert_text == "late_answer()"
    assert len(harness.bodies) == 1


async def test_reset_drops_the_cache_and_cancels_generations(harness: Harness) -> None:
    harness.answer("cached()")
    await harness.complete("a = |\n")
    harness.hold()
    task = asyncio.create_task(harness.complete("b = |\n", uri="file:///proj/b.py"))
    await until(lambda: len(harness.scripts) == 2)
    harness.service.reset()
    assert (await task).outcome is Outcome.SUPERSEDED
    await until(harness.scripts[1].closed.is_set)
    assert harness.service.status()["cachedSuggestions"] == 0
