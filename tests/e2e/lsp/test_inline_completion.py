"""Inline completion over stdio against a loopback provider that streams real SSE."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

from tests.e2e.lsp.conftest import serve_from
from tests.support.replay_server import ReplayServer, Reply
from tests.support.streams import chat_reply, completion_reply, sse_reply

DOC = "def add(a, b):\n    return \n\nprint(add(1, 2))\n"


@pytest.fixture(autouse=True)
def embedded_points_at_replay(
    lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A user instance named like the bundled one replaces it (and its [launch] table).
    serve_from(lsp_home, replay, monkeypatch)
    # No idle warm-ups or prefetches (their own tests turn them on): each test scripts every
    # upstream request.
    (lsp_home / "config/settings.toml").write_text(
        "[completion]\ndebounce_ms = 150\ndebounce_min_ms = 50\nwarm_idle_ms = 0\n"
        "prefetch_after_accept = false\n"
    )


async def open_doc(client, home: Path, text: str = DOC, name: str = "a.py") -> str:
    path = home / "project" / name
    path.write_text(text)
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, text))
    )
    return uri


def params(uri: str, line: int, character: int, invoked: bool = True):
    kind = (
        types.InlineCompletionTriggerKind.Invoked
        if invoked
        else types.InlineCompletionTriggerKind.Automatic
    )
    return types.InlineCompletionParams(
        context=types.InlineCompletionContext(trigger_kind=kind),
        text_document=types.TextDocumentIdentifier(uri),
        position=types.Position(line, character),
    )


async def test_inline_completion_is_advertised_and_answers(client, lsp_home, replay) -> None:
    replay.script("/v1/completions", completion_reply("a", " + ", "b"))
    result = await client.initialize_session(client.init_params)
    assert result.capabilities.inline_completion_provider is not None
    uri = await open_doc(client, lsp_home)
    answer = await client.text_document_inline_completion_async(params(uri, 1, 11))
    [item] = answer.items
    assert item.insert_text == "a + b"
    assert item.range == types.Range(types.Position(1, 11), types.Position(1, 11))
    assert item.command.command == "qodeassist.accepted"
    sent = replay.last.json
    assert sent["prompt"] == "def add(a, b):\n    return"  # the trailing space is healed
    assert sent["stream"] is True and sent["model"]
    accepted = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="qodeassist.accepted", arguments=item.command.arguments)
    )
    assert accepted is True


@pytest.mark.parametrize("client", ["visual-studio-code", "neovim"], indirect=True)
async def test_negotiated_position_encoding_is_honoured(client, lsp_home, replay) -> None:
    replay.script("/v1/completions", completion_reply("1"))
    result = await client.initialize_session(client.init_params)
    encoding = result.capabilities.position_encoding or types.PositionEncodingKind.Utf16
    text = 's = "😀😀" + \n'
    prefix = 's = "😀😀" + '
    units = {
        "utf-8": len(prefix.encode()),
        "utf-16": len(prefix.encode("utf-16-le")) // 2,
        "utf-32": len(prefix),
    }[encoding]
    uri = await open_doc(client, lsp_home, text)
    answer = await client.text_document_inline_completion_async(params(uri, 0, units))
    assert replay.last.json["prompt"] == prefix.rstrip()  # the trailing space is healed
    assert answer.items[0].range.start == types.Position(0, units)


async def test_the_answer_does_not_wait_for_the_stream_to_close(client, lsp_home, replay) -> None:
    # The model has stopped, but the server holds the response open (no final chunk yet).
    replay.script("/v1/completions", completion_reply("a", hold_open=True))
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    answer = await client.text_document_inline_completion_async(params(uri, 1, 11))
    [upstream] = replay.requests
    assert [item.insert_text for item in answer.items] == ["a"]
    assert upstream.disconnected_at is None  # answered first, the stream tidied up after
    assert await upstream.wait_disconnected_async(within=2)


async def test_cancel_request_closes_the_upstream_stream(client, lsp_home, replay) -> None:
    # One delta, then the stream is held open before the model stops.
    delta = b'data: {"choices":[{"index":0,"text":"a","finish_reason":null}]}\n\n'
    replay.script("/v1/completions", sse_reply(delta, hold_open=True))
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    task = asyncio.create_task(
        client.protocol.send_request_async(
            types.TEXT_DOCUMENT_INLINE_COMPLETION, params(uri, 1, 11), msg_id="inline-1"
        )
    )
    [upstream] = await asyncio.to_thread(replay.wait_for_requests, 1)
    assert await upstream.wait_holding_async(5)
    cancelled_at = time.monotonic()
    client.cancel_request(types.CancelParams(id="inline-1"))
    with pytest.raises(JsonRpcRequestCancelled):
        await task
    assert await upstream.wait_disconnected_async(within=2)
    # The stream is kept for a short grace period so a follow-up request can reuse it.
    assert upstream.disconnected_at - cancelled_at < 1.0


async def test_a_cancel_does_not_cut_off_a_model_load(client, lsp_home, replay) -> None:
    # The first answer starts only after 2 s, as when Ollama loads the model on demand (and
    # abandons the load if the client hangs up); the second request is at another cursor.
    replay.script(
        "/v1/completions",
        [completion_reply("slow", first_byte_delay=2.0, hold_open=True), completion_reply("fast")],
    )
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    task = asyncio.create_task(
        client.protocol.send_request_async(
            types.TEXT_DOCUMENT_INLINE_COMPLETION, params(uri, 1, 11), msg_id="load-1"
        )
    )
    await asyncio.to_thread(replay.wait_for_requests, 1)
    await asyncio.sleep(1.3)  # past the server's load window, still no answer
    client.cancel_request(types.CancelParams(id="load-1"))
    with pytest.raises(JsonRpcRequestCancelled):
        await task
    answer = await client.text_document_inline_completion_async(params(uri, 2, 0))
    assert [item.insert_text for item in answer.items] == ["fast"]
    loading, second = replay.requests
    assert loading.response_started_at is not None and loading.disconnected_at is not None
    assert loading.disconnected_at >= loading.response_started_at  # hung up once answered
    assert second.received_at >= loading.disconnected_at  # and never queued behind it


async def test_keystroke_storm_costs_at_most_two_upstream_requests(client, lsp_home, replay):
    # The replay server is on loopback, a "local" model, which waits local_debounce_ms
    # (0 by default: every key may go upstream there); give it a debounce to test.
    settings = lsp_home / "config/settings.toml"
    settings.write_text(settings.read_text() + "local_debounce_ms = 150\n")
    replay.script("/v1/completions", [completion_reply("(a, b)", repeat=5)])
    await client.initialize_session(client.init_params)
    await type_storm(client, lsp_home)
    await asyncio.sleep(0.5)
    assert len(replay.requests) <= 2


@pytest.mark.parametrize(("local", "debounced"), [("", True), ("local = true\n", False)])
async def test_a_loopback_proxy_to_a_paid_api_is_debounced_as_remote(
    client, lsp_home, replay, local: str, debounced: bool
):
    # Issue 46: LiteLLM, a company gateway or an SSH tunnel on 127.0.0.1 is billed per request;
    # only a model server's API (llama.cpp, Ollama, LM Studio) on loopback is "this machine",
    # which gets no debounce (local_debounce_ms = 0), or one whose instance says `local = true`.
    (lsp_home / "config/settings.toml").write_text(
        "[completion]\ndebounce_ms = 800\nadaptive_debounce = false\nwarm_idle_ms = 0\n"
        "prefetch_after_accept = false\n"
    )
    (lsp_home / "config/providers/proxy.toml").write_text(
        f'name = "Proxy"\nclient_api = "OpenAI Compatible"\nurl = "{replay.url}/v1"\n{local}'
    )
    (lsp_home / "config/agents/proxy.toml").write_text(
        'name = "Proxy Completion"\nextends = "OpenAI Completion"\nprovider_instance = "Proxy"\n'
    )
    (lsp_home / "config/pipelines.toml").write_text(
        '[pipelines]\ncode_completion = ["Proxy Completion"]\n'
    )
    replay.script("/v1/chat/completions", [chat_reply("a + b"), chat_reply("a + b")])
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    # The first request may wait for a local model's start; an invoked one is not debounced.
    assert (await client.text_document_inline_completion_async(params(uri, 1, 11))).items
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=2, uri=uri),
            [
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(1, 11), types.Position(1, 11)), text="x"
                )
            ],
        )
    )
    asked = time.monotonic()
    answer = await client.text_document_inline_completion_async(params(uri, 1, 12, invoked=False))
    assert answer.items, "no suggestion"
    waited = replay.requests[1].received_at - asked
    if debounced:
        assert waited >= 0.7, f"a loopback proxy was not debounced: asked after {waited:.3f} s"
    else:
        assert waited < 0.7, f"a `local = true` instance was debounced: {waited:.3f} s"


async def type_storm(client, lsp_home: Path) -> None:
    """Type 30 keys at 20 per second with an automatic request on each; wait for the answers."""
    text = "def add(a, b):\n    return a + b\n\nprint(add"
    uri = await open_doc(client, lsp_home, text)
    typed = "print(add"
    pending = []
    for i in range(1, 31):  # 30 keystrokes at 20 characters per second
        version = 1 + i
        char = "x" if i % 2 else "y"
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version=version, uri=uri),
                [
                    types.TextDocumentContentChangePartial(
                        range=types.Range(
                            types.Position(3, len(typed)), types.Position(3, len(typed))
                        ),
                        text=char,
                    )
                ],
            )
        )
        typed += char
        pending.append(
            asyncio.create_task(
                client.text_document_inline_completion_async(
                    params(uri, 3, len(typed), invoked=False)
                )
            )
        )
        await asyncio.sleep(0.05)
    answers = await asyncio.wait_for(asyncio.gather(*pending, return_exceptions=True), 20)
    assert all(
        not isinstance(a, Exception) or isinstance(a, JsonRpcRequestCancelled) for a in answers
    )


async def test_typed_ahead_is_served_without_a_new_request(client, lsp_home, replay) -> None:
    replay.script("/v1/completions", completion_reply("a", " + ", "b"))
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    first = await client.text_document_inline_completion_async(params(uri, 1, 11))
    assert first.items[0].insert_text == "a + b"
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=2, uri=uri),
            [
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(1, 11), types.Position(1, 11)), text="a "
                )
            ],
        )
    )
    second = await client.text_document_inline_completion_async(params(uri, 1, 13, invoked=False))
    assert second.items[0].insert_text == "+ b"
    assert len(replay.requests) == 1


async def shown(client) -> None:
    """Wait (up to 2.5 s) for the server's first ``window/showMessage``."""
    for _ in range(50):
        if client.messages:
            return
        await asyncio.sleep(0.05)


async def test_provider_down_is_reported_and_the_server_keeps_serving(client, lsp_home) -> None:
    (lsp_home / "config/providers/embedded.toml").write_text(
        'name = "Embedded"\nclient_api = "llama.cpp"\nurl = "http://127.0.0.1:9"\n'
    )
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    answer = await client.text_document_inline_completion_async(params(uri, 1, 11))
    assert list(answer.items) == []
    await shown(client)
    assert any("Embedded" in m.message for m in client.messages)
    status = await client.protocol.send_request_async("qodeassist/status", {})
    assert status.state == "degraded"  # still serving; the status names the outage
    assert "Embedded" in status.outage.reason


@pytest.mark.parametrize("content_type", ["text/html; charset=utf-8", "text/event-stream"])
async def test_a_web_page_instead_of_the_api_is_reported_as_such(
    client, lsp_home, replay, content_type
) -> None:
    # A captive portal or a wrong path answers 200 with a page (labelled as one, or not).
    page = b"<!doctype html><html><body>Welcome to the guest network</body></html>"
    replay.script("/v1/completions", Reply(body=page, content_type=content_type))
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    answer = await client.text_document_inline_completion_async(params(uri, 1, 11))
    assert list(answer.items) == []
    await shown(client)
    [message] = [m.message for m in client.messages if "web page" in m.message]
    assert f"{replay.url}/v1/completions answered with a web page, not the " in message
    assert "check the `url` of provider 'Embedded'" in message
    assert "cut off" not in message


async def test_completion_fallback_for_clients_without_inline_completion(
    client, lsp_home, replay
) -> None:
    replay.script("/v1/completions", completion_reply("a + b"))
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    request = types.CompletionParams(
        text_document=types.TextDocumentIdentifier(uri),
        position=types.Position(1, 11),
        context=types.CompletionContext(trigger_kind=types.CompletionTriggerKind.Invoked),
    )
    for _ in range(10):  # an answer slower than the budget is empty + isIncomplete: ask again
        answer = await client.text_document_completion_async(request)
        if answer.items:
            break
        assert answer.is_incomplete
    [item] = answer.items
    assert item.text_edit.new_text == "a + b" and answer.is_incomplete


async def test_agents_are_routed_per_file(client, lsp_home, replay) -> None:
    (lsp_home / "config/agents/md.toml").write_text(
        'name = "Markdown Completion"\nextends = "Embedded Completion"\nmodel = "md-model"\n'
        '[match]\nfile_patterns = ["*.md"]\n'
    )
    (lsp_home / "config/pipelines.toml").write_text(
        '[pipelines]\ncode_completion = ["Markdown Completion", "Embedded Completion"]\n'
    )
    replay.script("/v1/completions", [completion_reply("x"), completion_reply("y")])
    await client.initialize_session(client.init_params)
    md = await open_doc(client, lsp_home, "# Title\n", "README.md")
    py = await open_doc(client, lsp_home)
    await client.text_document_inline_completion_async(params(md, 1, 0))
    await client.text_document_inline_completion_async(params(py, 1, 11))
    assert [r.json["model"] for r in replay.requests] == ["md-model", "gemma3-270m"]


def ndjson(*objects: dict) -> bytes:
    return "".join(json.dumps(o) + "\n" for o in objects).encode()


async def test_native_fim_agent(client, lsp_home, replay) -> None:
    """Ollama FIM (/api/generate): prompt and suffix go to the model, NDJSON comes back."""
    (lsp_home / "config/providers/ollama.toml").write_text(
        f'name = "Ollama (Native)"\nclient_api = "Ollama (Native)"\nurl = "{replay.url}"\n'
    )
    (lsp_home / "config/pipelines.toml").write_text(
        '[pipelines]\ncode_completion = ["Ollama Completion — FIM"]\n'
    )
    body = ndjson(
        {"model": "m", "response": "a + ", "done": False},
        {"model": "m", "response": "b", "done": False},
        {
            "model": "m",
            "response": "",
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": 12,
            "eval_count": 2,
        },
    )
    replay.script("/api/generate", Reply(body=body, content_type="application/x-ndjson"))
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    answer = await client.text_document_inline_completion_async(params(uri, 1, 11))
    assert answer.items[0].insert_text == "a + b"
    sent = replay.last.json
    assert sent["prompt"] == "def add(a, b):\n    return"  # the trailing space is healed
    assert sent["suffix"] == "\n\nprint(add(1, 2))\n"
    assert sent["model"] == "qwen2.5-coder:7b-base-q5_K_M"


async def test_chat_style_agent_answer_is_cleaned(client, lsp_home, replay) -> None:
    """A chat model answers with a fenced block; only the code reaches the editor."""
    (lsp_home / "config/providers/openai.toml").write_text(
        f'name = "OpenAI (Chat Completions)"\nclient_api = "OpenAI (Chat Completions)"\n'
        f'url = "{replay.url}/v1"\n'
    )
    (lsp_home / "config/pipelines.toml").write_text(
        '[pipelines]\ncode_completion = ["OpenAI Completion"]\n'
    )
    replay.script("/v1/chat/completions", chat_reply("```python\n", "a + b\n", "```"))
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    answer = await client.text_document_inline_completion_async(params(uri, 1, 11))
    assert answer.items[0].insert_text == "a + b"
    messages = replay.last.json["messages"]
    assert messages[0]["role"] == "system" and "completion" in messages[0]["content"].lower()
    assert "<code_context>" in messages[-1]["content"]
    assert "def add(a, b):\n    return <cursor>" in messages[-1]["content"]


def use_qwen_fim(home: Path) -> None:
    """Route completion to a Qwen2.5-Coder FIM agent (its prompt starts with the ring)."""
    (home / "config/agents/qwen.toml").write_text(
        'name = "Qwen FIM"\nextends = "Embedded Base Completions"\n'
        'model = "qwen2.5-coder-1.5b-base"\n'
        "[body]\nprompt = '''{{ fim_prompt(ctx) | tojson }}'''\nmax_tokens = 16\n"
    )
    (home / "config/pipelines.toml").write_text('[pipelines]\ncode_completion = ["Qwen FIM"]\n')


async def test_other_open_files_come_first_in_a_fim_prompt(client, lsp_home, replay) -> None:
    """The extra-context ring: another open file's chunk leads the prompt the model receives."""
    use_qwen_fim(lsp_home)
    replay.script("/v1/completions", [completion_reply("a + b"), completion_reply("a + b")])
    await client.initialize_session(client.init_params)
    helper = "def mul(a, b):\n    return a * b\n"
    await open_doc(client, lsp_home, helper, "util.py")
    uri = await open_doc(client, lsp_home)
    answer = await client.text_document_inline_completion_async(params(uri, 1, 11))
    assert answer.items[0].insert_text == "a + b"
    util = str(lsp_home / "project" / "util.py")
    assert replay.last.json["prompt"] == (
        f"<|file_sep|>{util}\n{helper}"
        "<|fim_prefix|>def add(a, b):\n    return<|fim_suffix|>\n\nprint(add(1, 2))\n"
        "<|fim_middle|>"
    )
    # The cursor file's own chunk is left out: the window already holds all of it.
    assert replay.last.json["prompt"].count("<|file_sep|>") == 1


async def test_the_ring_is_warmed_when_the_user_is_idle(client, lsp_home, replay) -> None:
    """Opening a file and reading it: the model server gets the extra context before any key."""
    use_qwen_fim(lsp_home)
    settings = lsp_home / "config/settings.toml"
    settings.write_text(settings.read_text().replace("warm_idle_ms = 0", "warm_idle_ms = 200"))
    delta = b'data: {"choices":[{"index":0,"text":"x","finish_reason":null}]}\n\n'
    replay.script("/v1/completions", sse_reply(delta, hold_open=True))
    await client.initialize_session(client.init_params)
    helper = "def mul(a, b):\n    return a * b\n"
    await open_doc(client, lsp_home, helper, "util.py")
    [warm] = await asyncio.to_thread(replay.wait_for_requests, 1)
    util = str(lsp_home / "project" / "util.py")
    assert warm.json["prompt"] == (
        f"<|file_sep|>{util}\n{helper}<|fim_prefix|><|fim_suffix|><|fim_middle|>"
    )
    # Closed at its first token (the prompt is cached by then), not left to generate.
    assert await warm.wait_disconnected_async(within=2)
    status = await client.protocol.send_request_async("qodeassist/status", {})
    assert status.completion.warmUps == 1
    await asyncio.sleep(0.5)
    assert len(replay.requests) == 1  # idle on: nothing changed, nothing more is sent


async def test_opening_a_file_and_a_code_action_warm_the_request_there(
    client, lsp_home, replay
) -> None:
    """The embedded agent's first request reads its window cached: warmed where it will be.

    Warming the cursor window is on by default; the other tests here turn it off.
    """
    settings = lsp_home / "config/settings.toml"
    settings.write_text(settings.read_text().replace("warm_idle_ms = 0", "warm_idle_ms = 200"))
    client.init_params.initialization_options["qodeassist"]["completion"].pop("warm_cursor_window")
    delta = b'data: {"choices":[{"index":0,"text":"x","finish_reason":null}]}\n\n'
    replay.script("/v1/completions", sse_reply(delta, hold_open=True))
    replay.script("/v1/completions", sse_reply(delta, hold_open=True))
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    [opened] = await asyncio.to_thread(replay.wait_for_requests, 1)
    assert opened.json["prompt"] == DOC  # the end of the file, where it is written
    assert await opened.wait_disconnected_async(within=2)
    caret = types.Range(types.Position(1, 11), types.Position(1, 11))
    await client.text_document_code_action_async(
        types.CodeActionParams(
            types.TextDocumentIdentifier(uri), caret, types.CodeActionContext(diagnostics=[])
        )
    )
    [_, hinted] = await asyncio.to_thread(replay.wait_for_requests, 2)
    assert hinted.json["prompt"] == "def add(a, b):\n    return"  # what a key there sends
    assert await hinted.wait_disconnected_async(within=2)
    status = await client.protocol.send_request_async("qodeassist/status", {})
    assert status.completion.warmUps == 2


async def test_the_caret_a_client_tells_is_warmed(client, lsp_home, replay) -> None:
    """``qodeassist/didMoveCursor`` right after opening: that place is warmed, not the end."""
    settings = lsp_home / "config/settings.toml"
    settings.write_text(settings.read_text().replace("warm_idle_ms = 0", "warm_idle_ms = 200"))
    client.init_params.initialization_options["qodeassist"]["completion"].pop("warm_cursor_window")
    delta = b'data: {"choices":[{"index":0,"text":"x","finish_reason":null}]}\n\n'
    replay.script("/v1/completions", sse_reply(delta, hold_open=True))
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    where = {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 10}}
    client.protocol.notify("qodeassist/didMoveCursor", where)
    client.protocol.notify("qodeassist/didMoveCursor", {"textDocument": {"uri": uri}})  # no harm
    [warm] = await asyncio.to_thread(replay.wait_for_requests, 1)
    assert warm.json["prompt"] == "def add(a, b):\n    "  # `return` healed, as a key there sends
    assert await warm.wait_disconnected_async(within=2)
    await asyncio.sleep(0.6)
    assert len(replay.requests) == 1
