"""The web chat at ``/`` in headless Chromium: token from the fragment, a streamed answer with
folded thinking, an inline permission question, and past chats reopened."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.http.conftest import HttpServer, start_http, stop
from tests.e2e.http.test_openai_api import HELLO
from tests.support.chromium import LAUNCH_ARGS, chromium_executable
from tests.support.replay_server import ReplayServer
from tests.support.workspace import Workspace

THINKING = "anthropic/stream_thinking_signature_text.sse"
TOOL_CALLS = "anthropic/stream_tool_use_kit_calls_SYNTHETIC.sse"


@contextlib.contextmanager
def browser_page(tmp_path: Path) -> Iterator[Any]:
    """A tab of the system's headless Chromium with a fresh profile (fail without one)."""
    try:
        from playwright import sync_api
    except ImportError:
        pytest.fail("the web-chat test needs the test extra's playwright", pytrace=False)
    executable, why = chromium_executable()
    if executable is None:
        pytest.fail(f"no Chromium for the web-chat test: {why}", pytrace=False)
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=executable,
            headless=True,
            args=list(LAUNCH_ARGS),
            bypass_csp=True,  # the page's CSP forbids eval, which wait_for_function uses
        )
        try:
            tab = context.new_page()
            tab.set_default_timeout(30_000)
            yield tab
        finally:
            context.close()


@pytest.fixture
def page(tmp_path: Path, http_server: HttpServer) -> Iterator[Any]:
    with browser_page(tmp_path) as tab:
        yield tab


def test_the_page_streams_an_answer_and_reopens_the_chat(
    page: Any, http_server: HttpServer
) -> None:
    http_server.replay.script("/v1/messages", [THINKING, HELLO])
    page.goto(f"{http_server.url}/#token={http_server.token}")
    page.wait_for_function("document.querySelectorAll('#agent option').length > 0")
    assert "#token" not in page.url  # read once, then dropped from the address
    box = page.locator("#input")
    box.fill("Name a pelican")
    box.press("Shift+Enter")  # a new line, not a send
    box.type("please")
    assert box.input_value() == "Name a pelican\nplease"
    box.press("Enter")
    page.locator(".assistant .text").first.wait_for()
    page.wait_for_function(
        "!document.querySelector('#stop') || document.querySelector('#stop').hidden"
    )
    answer = page.locator(".assistant .text").first.inner_text()
    assert "Pouch" in answer
    thinking = page.locator("details.thinking")
    assert thinking.count() == 1 and thinking.get_attribute("open") is None  # folded
    sent = http_server.replay.requests[0].json["messages"][-1]
    assert "Name a pelican\nplease" in json.dumps(sent["content"]).replace("\\n", "\n")

    page.locator("#chats button.chat").first.wait_for()
    page.click("#new")
    assert page.locator(".msg").count() == 0
    page.locator("#chats button.chat").first.click()
    page.locator(".msg.user", has_text="Name a pelican").wait_for()
    assert "Pouch" in page.locator(".assistant .text").first.inner_text()


def test_a_permission_question_is_answered_inline(page: Any, http_server: HttpServer) -> None:
    http_server.replay.script("/v1/messages", [TOOL_CALLS, HELLO])
    page.goto(f"{http_server.url}/#token={http_server.token}")
    page.wait_for_function("document.querySelectorAll('#agent option').length > 0")
    page.locator("#input").fill("run it")
    page.locator("#input").press("Enter")
    question = page.locator(".ask")
    question.wait_for()
    assert "terminal" in question.inner_text()
    question.get_by_role("button", name="Allow once").click()
    page.locator(".assistant .text", has_text="Hello").wait_for()
    results = json.dumps(http_server.replay.requests[1].json["messages"][-1])
    assert "tool-ran" in results
    terminal = page.locator(".tool", has_text="terminal")
    assert "\u2713" in terminal.inner_text()  # the call's line shows it ran


OLD = "def greet(name):\n    return 'hello ' + name\n"
NEW = "def greet(name):\n    return f'hello {name}!'\n"
EDITS = "<<<<<<< SEARCH\n    return 'hello ' + name\n=======\n    return f'hello {name}!'\n>>>>>>> REPLACE\n"


def test_a_proposed_edit_is_applied_from_the_page(
    tmp_path: Path, workspace: Workspace, replay: ReplayServer
) -> None:
    from tests.e2e.lsp.test_file_edits import tool_call_reply
    from tests.support.streams import chat_reply

    workspace.write(
        "agents/e2e_tools.toml",
        'schema_version = 1\nname = "E2E Tools"\nextends = "OpenAI Base Chat"\n'
        'model = "e2e-model"\nenable_tools = true\n',
    )
    workspace.write("pipelines.toml", '[pipelines]\nchat_assistant = ["E2E Tools"]\n')
    workspace.write("settings.toml", '[tools.permissions]\nwrite = "allow"\n')
    target = workspace.project / "greet.py"
    target.write_text(OLD, encoding="utf-8")
    replay.script(
        "/v1/chat/completions",
        [
            tool_call_reply("call_1", "edit_file", {"path": "greet.py", "edits": EDITS}),
            chat_reply("Proposed."),
        ],
    )
    server = start_http(workspace, replay)
    try:
        with browser_page(tmp_path) as tab:
            tab.goto(f"{server.url}/#token={server.token}")
            tab.wait_for_function("document.querySelectorAll('#agent option').length > 0")
            tab.locator("#input").fill("make greet nicer")
            tab.locator("#input").press("Enter")
            edit = tab.locator(".edit")
            edit.get_by_role("button", name="Apply").wait_for()
            assert (
                "greet.py" in edit.inner_text()
                and "+    return f'hello {name}!'" in edit.inner_text()
            )
            assert target.read_text(encoding="utf-8") == OLD  # proposed, not written
            edit.get_by_role("button", name="Apply").click()
            edit.locator(".status", has_text="applied").wait_for()
            assert target.read_text(encoding="utf-8") == NEW
    finally:
        stop(server)


def test_a_chat_in_any_script_goes_on_in_the_same_chat(page: Any, http_server: HttpServer) -> None:
    http_server.replay.script("/v1/messages", [HELLO, HELLO])
    page.goto(f"{http_server.url}/#token={http_server.token}")
    page.wait_for_function("document.querySelectorAll('#agent option').length > 0")
    for text in ("Привет, 日本語 👋🏽", "שלום e\u0301"):
        page.locator("#input").fill(text)
        page.locator("#input").press("Enter")
        page.locator(".msg.user", has_text=text).wait_for()
        page.wait_for_function(
            "document.querySelector('#stop').hidden && document.querySelectorAll("
            "'#chats button.chat').length > 0"
        )
    assert page.locator(".error").count() == 0
    second = http_server.replay.requests[1].json["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]  # the same chat
    with http_server.client() as http:
        assert len(http.get("/v1/qodeassist/chats").json()) == 1


def test_a_message_into_a_busy_chat_shows_why(page: Any, http_server: HttpServer) -> None:
    from tests.e2e.http.test_openai_api import client_of
    from tests.e2e.test_cancellation import first_half

    http_server.replay.script("/v1/messages", [first_half(HELLO)])
    stream = client_of(http_server).chat.completions.create(
        model="Claude Chat — Sonnet", messages=[{"role": "user", "content": "long"}], stream=True
    )
    try:
        assert http_server.replay.wait_for_requests(1)[0].wait_holding(10)
        page.goto(f"{http_server.url}/#token={http_server.token}")
        page.locator("#chats button.chat").first.click()
        page.locator(".msg.user", has_text="long").wait_for()
        page.locator("#input").fill("and now?")
        page.locator("#input").press("Enter")
        error = page.locator(".error")
        error.wait_for()
        assert "This chat is still answering" in error.inner_text()
        assert "wait for it to finish or cancel it" in error.inner_text()
        assert not http_server.replay.requests[0].disconnected.is_set()
    finally:
        stream.close()


def test_while_its_answer_runs_the_page_offers_stop_not_send(
    page: Any, http_server: HttpServer
) -> None:
    from tests.e2e.test_cancellation import first_half

    http_server.replay.script("/v1/messages", [first_half(HELLO)])
    page.goto(f"{http_server.url}/#token={http_server.token}")
    page.wait_for_function("document.querySelectorAll('#agent option').length > 0")
    page.locator("#input").fill("long")
    page.locator("#input").press("Enter")
    assert http_server.replay.wait_for_requests(1)[0].wait_holding(10)
    page.locator("#stop").wait_for(state="visible")
    assert page.locator("#send").is_hidden()
    # Enter while it answers sends nothing (the server would refuse it: ChatBusy); the draft stays.
    page.locator("#input").fill("and now?")
    page.locator("#input").press("Enter")
    assert page.locator("#input").input_value() == "and now?"
    assert page.locator(".msg.user", has_text="and now?").count() == 0
    page.click("#stop")
    page.locator("#send").wait_for(state="visible")
    assert page.locator("#stop").is_hidden()
    assert len(http_server.replay.requests) == 1
    assert page.locator(".msg.user", has_text="and now?").count() == 0


def test_an_edit_that_breaks_the_file_warns_and_apply_asks_again(
    tmp_path: Path, workspace: Workspace, replay: ReplayServer
) -> None:
    # Issue 47: the card of a `parseCheck: broken` edit looked like any other.
    from tests.e2e.lsp.test_file_edits import tool_call_reply
    from tests.support.streams import chat_reply

    workspace.write(
        "agents/e2e_tools.toml",
        'schema_version = 1\nname = "E2E Tools"\nextends = "OpenAI Base Chat"\n'
        'model = "e2e-model"\nenable_tools = true\n',
    )
    workspace.write("pipelines.toml", '[pipelines]\nchat_assistant = ["E2E Tools"]\n')
    workspace.write("settings.toml", '[tools.permissions]\nwrite = "allow"\n')
    target = workspace.project / "greet.py"
    target.write_text(OLD, encoding="utf-8")
    broken = "<<<<<<< SEARCH\n    return 'hello ' + name\n=======\nreturn name\n>>>>>>> REPLACE\n"
    replay.script(
        "/v1/chat/completions",
        [
            tool_call_reply("call_1", "edit_file", {"path": "greet.py", "edits": broken}),
            chat_reply("Proposed."),
        ],
    )
    server = start_http(workspace, replay)
    try:
        with browser_page(tmp_path) as tab:
            asked: list[str] = []
            answers = ["dismiss", "accept"]

            def on_dialog(dialog: Any) -> None:
                asked.append(dialog.message)
                getattr(dialog, answers.pop(0))()

            tab.on("dialog", on_dialog)
            tab.goto(f"{server.url}/#token={server.token}")
            tab.wait_for_function("document.querySelectorAll('#agent option').length > 0")
            tab.locator("#input").fill("change greet")
            tab.locator("#input").press("Enter")
            edit = tab.locator(".edit.broken")
            apply = edit.get_by_role("button", name="Apply anyway\u2026")
            apply.wait_for()
            warning = edit.locator(".warning").inner_text()
            assert warning.startswith("\u26a0 This edit breaks the file: ") and (
                "IndentationError" in warning
            ), warning
            apply.click()  # dismissed: nothing is sent
            assert len(asked) == 1 and asked[0].endswith("Apply it anyway?"), asked
            assert "IndentationError" in asked[0] and apply.is_visible()
            assert target.read_text(encoding="utf-8") == OLD
            apply.click()  # accepted
            edit.locator(".status", has_text="applied").wait_for()
            assert len(asked) == 2
            assert target.read_text(encoding="utf-8") == "def greet(name):\nreturn name\n"
    finally:
        stop(server)
